// Numeric datasets of a Group: arrays of any rank, with checked type conversion on read.
#include <algorithm>
#include <optional>
#include <type_traits>

#include "h5/detail.hpp"
#include "h5/h5.hpp"

namespace sharp::h5 {

using detail::Handle;

namespace {

// Per element type: the memory type and the type stored in files (fixed little-endian, so files
// do not depend on the writer's machine).
template <class T>
struct Types;
template <>
struct Types<double> {
  static hid_t memory() { return H5T_NATIVE_DOUBLE; }
  static hid_t stored() { return H5T_IEEE_F64LE; }
  static constexpr const char* name = "double";
};
template <>
struct Types<float> {
  static hid_t memory() { return H5T_NATIVE_FLOAT; }
  static hid_t stored() { return H5T_IEEE_F32LE; }
  static constexpr const char* name = "float";
};
template <>
struct Types<std::int64_t> {
  static hid_t memory() { return H5T_NATIVE_INT64; }
  static hid_t stored() { return H5T_STD_I64LE; }
  static constexpr const char* name = "int64";
};
template <>
struct Types<std::int32_t> {
  static hid_t memory() { return H5T_NATIVE_INT32; }
  static hid_t stored() { return H5T_STD_I32LE; }
  static constexpr const char* name = "int32";
};
template <>
struct Types<std::uint64_t> {
  static hid_t memory() { return H5T_NATIVE_UINT64; }
  static hid_t stored() { return H5T_STD_U64LE; }
  static constexpr const char* name = "uint64";
};
template <>
struct Types<std::uint8_t> {
  static hid_t memory() { return H5T_NATIVE_UINT8; }
  static hid_t stored() { return H5T_STD_U8LE; }
  static constexpr const char* name = "uint8";
};

// Converting to an integer type, HDF5 clips out-of-range values and truncates fractions by
// default; this callback makes it refuse instead. (Float targets keep HDF5's default, which is
// IEEE casting as static_cast does: overflow becomes inf, inf and NaN stay, int64 -> double rounds.)
H5T_conv_ret_t refuse_lossy_conversion(H5T_conv_except_t what, hid_t, hid_t, void*, void*, void*) {
  switch (what) {
    case H5T_CONV_EXCEPT_RANGE_HI:
    case H5T_CONV_EXCEPT_RANGE_LOW:
    case H5T_CONV_EXCEPT_TRUNCATE:
    case H5T_CONV_EXCEPT_PINF:
    case H5T_CONV_EXCEPT_NINF:
    case H5T_CONV_EXCEPT_NAN: return H5T_CONV_ABORT;
    default: return H5T_CONV_UNHANDLED;
  }
}

// Dimensions of a simple or scalar ({}) dataspace; nullopt on failure (stack left for the caller).
std::optional<std::vector<hsize_t>> dims_of(hid_t space) {
  int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0) return std::nullopt;
  std::vector<hsize_t> dims(std::size_t(rank), 0);
  if (rank > 0 && H5Sget_simple_extent_dims(space, dims.data(), nullptr) < 0) return std::nullopt;
  return dims;
}

std::size_t product(const std::vector<hsize_t>& dims) {
  std::size_t count = 1;
  for (hsize_t d : dims) count *= std::size_t(d);
  return count;
}

// Arrays of at least this many elements are stored chunked, byte-shuffled and deflated: per-sample
// results (mostly 0/1 and repeated values) shrink several-fold, which is what lets a paper-scale run
// ship with the repository. Values, and so the data checksum, are unchanged; zlib at a fixed level
// writes the same bytes for the same input, so files stay reproducible.
constexpr std::size_t kCompressFrom = 1024;
constexpr std::size_t kChunkElements = std::size_t(1) << 20;
constexpr unsigned kDeflateLevel = 4;

// The dataset creation list: default (contiguous) for small arrays and scalars, else chunks of
// whole trailing rows up to kChunkElements elements. An invalid handle (< 0) on failure.
Handle creation_list(const std::vector<hsize_t>& dims) {
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (dcpl.get() < 0 || dims.empty() || product(dims) < kCompressFrom) return dcpl;
  // Every extent is >= 1 here (product >= kCompressFrom), so the row is never empty.
  const std::size_t row = product(dims) / std::size_t(dims[0]);
  std::vector<hsize_t> chunk(dims);
  chunk[0] = hsize_t(std::clamp<std::size_t>(kChunkElements / row, 1, std::size_t(dims[0])));
  if (H5Pset_chunk(dcpl.get(), int(chunk.size()), chunk.data()) < 0 || H5Pset_shuffle(dcpl.get()) < 0 ||
      H5Pset_deflate(dcpl.get(), kDeflateLevel) < 0)
    return Handle();
  return dcpl;
}

}  // namespace

template <Element T>
void Group::write(const std::string& name, const T* data, const std::vector<std::size_t>& shape) {
  SilenceErrors quiet;
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  if (data == nullptr && product(dims) > 0) {
    H5Eclear2(H5E_DEFAULT);
    fail("write dataset from a null pointer", name);
  }
  Handle space = detail::make_dataspace(dims.data(), int(dims.size()));
  Handle lcpl = detail::intermediate_groups_lcpl();
  Handle dcpl = creation_list(dims);
  if (dcpl.get() < 0) fail("set up the chunked, compressed layout of", name);
  Handle dataset(H5Dcreate2(id_, name.c_str(), Types<T>::stored(), space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT),
                 H5Dclose);
  if (dataset.get() < 0) fail("create dataset", name);
  // An empty dataset has nothing to write (and HDF5 rejects a null buffer).
  if (product(dims) > 0 && H5Dwrite(dataset.get(), Types<T>::memory(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    fail(std::string("write ") + Types<T>::name + " dataset", name);
  if (dataset.release() < 0) fail("close dataset", name);
}

template <Element T>
std::vector<T> Group::read(const std::string& name, std::vector<std::size_t>* shape) const {
  SilenceErrors quiet;
  Handle dataset(H5Dopen2(id_, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (dataset.get() < 0) fail("open dataset", name);
  Handle space(H5Dget_space(dataset.get()), H5Sclose);
  if (space.get() < 0) fail("get the dataspace of", name);
  std::optional<std::vector<hsize_t>> dims = dims_of(space.get());
  if (!dims) fail("get the shape of", name);
  std::vector<T> values(product(*dims));
  const std::string as_type = std::string("read as ") + Types<T>::name;
  if (!values.empty()) {
    Handle dxpl = detail::transfer_list(values.size());
    if (std::is_integral_v<T> && H5Pset_type_conv_cb(dxpl.get(), refuse_lossy_conversion, nullptr) < 0)
      fail("set up the conversion check for", name);
    if (H5Dread(dataset.get(), Types<T>::memory(), H5S_ALL, H5S_ALL, dxpl.get(), values.data()) < 0)
      fail(as_type + " the dataset", name);
  } else {
    // Nothing to convert, so HDF5 would not notice a non-numeric dataset: check its class.
    Kind kind = dataset_kind(name);
    if (kind != Kind::Float && kind != Kind::Integer)
      fail(as_type + " (the stored type is not numeric) the dataset", name);
  }
  if (shape != nullptr) shape->assign(dims->begin(), dims->end());
  return values;
}

#define SHARP_H5_INSTANTIATE(T)                                                                 \
  template void Group::write<T>(const std::string&, const T*, const std::vector<std::size_t>&); \
  template std::vector<T> Group::read<T>(const std::string&, std::vector<std::size_t>*) const;
SHARP_H5_INSTANTIATE(double)
SHARP_H5_INSTANTIATE(float)
SHARP_H5_INSTANTIATE(std::int64_t)
SHARP_H5_INSTANTIATE(std::int32_t)
SHARP_H5_INSTANTIATE(std::uint64_t)
SHARP_H5_INSTANTIATE(std::uint8_t)
#undef SHARP_H5_INSTANTIATE

std::vector<std::size_t> Group::shape(const std::string& name) const {
  SilenceErrors quiet;
  Handle dataset(H5Dopen2(id_, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (dataset.get() < 0) fail("open dataset", name);
  Handle space(H5Dget_space(dataset.get()), H5Sclose);
  if (space.get() < 0) fail("get the dataspace of", name);
  std::optional<std::vector<hsize_t>> dims = dims_of(space.get());
  if (!dims) fail("get the shape of", name);
  return {dims->begin(), dims->end()};
}

Group::Kind Group::dataset_kind(const std::string& name) const {
  SilenceErrors quiet;
  Handle dataset(H5Dopen2(id_, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (dataset.get() < 0) fail("open dataset", name);
  Handle type(H5Dget_type(dataset.get()), H5Tclose);
  if (type.get() < 0) fail("get the datatype of", name);
  switch (H5Tget_class(type.get())) {
    case H5T_FLOAT: return Kind::Float;
    case H5T_INTEGER: return Kind::Integer;
    case H5T_STRING: return Kind::String;
    case H5T_NO_CLASS: fail("get the datatype class of", name);
    default: return Kind::Other;
  }
}

}  // namespace sharp::h5
