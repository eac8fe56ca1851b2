// A dataset's stored bytes without conversion, and what kind of object a name is: what a checksum
// over a file's data needs (runners/result_checksum.hpp).
#include "h5/detail.hpp"
#include "h5/h5.hpp"

namespace sharp::h5 {

using detail::Handle;

bool Group::is_dataset(const std::string& name) const {
  SilenceErrors quiet;
  Handle object(H5Oopen(id_, name.c_str(), H5P_DEFAULT), H5Oclose);
  if (object.get() < 0) fail("open object", name);
  return H5Iget_type(object.get()) == H5I_DATASET;
}

bool Group::is_virtual(const std::string& name) const {
  SilenceErrors quiet;
  Handle dataset(H5Dopen2(id_, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (dataset.get() < 0) fail("open dataset", name);
  Handle plist(H5Dget_create_plist(dataset.get()), H5Pclose);
  if (plist.get() < 0) fail("get the creation properties of", name);
  return H5Pget_layout(plist.get()) == H5D_VIRTUAL;
}

namespace {

// "f8", "i8", "u1", ... for a numeric stored type, as numpy writes it; "" for any other.
std::string type_code(hid_t stored) {
  const H5T_class_t cls = H5Tget_class(stored);
  if (cls != H5T_FLOAT && cls != H5T_INTEGER) return "";
  const bool is_signed = cls == H5T_INTEGER && H5Tget_sign(stored) == H5T_SGN_2;
  return std::string(cls == H5T_FLOAT ? "f" : is_signed ? "i" : "u") + std::to_string(H5Tget_size(stored));
}

// A dataset opened with its stored type and that type's code. `failed` names the operation that
// failed, if one did; the caller reports it at once, before any other HDF5 call clears the error stack.
struct NumericDataset {
  Handle dataset, stored;
  std::string code;
  const char* failed = nullptr;
};

NumericDataset open_numeric(hid_t group, const std::string& name) {
  NumericDataset d;
  d.dataset = Handle(H5Dopen2(group, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (d.dataset.get() < 0) {
    d.failed = "open dataset";
    return d;
  }
  d.stored = Handle(H5Dget_type(d.dataset.get()), H5Tclose);
  if (d.stored.get() < 0) {
    d.failed = "get the datatype of";
    return d;
  }
  d.code = type_code(d.stored.get());
  return d;
}

}  // namespace

std::string Group::numeric_type_code(const std::string& name) const {
  SilenceErrors quiet;
  NumericDataset d = open_numeric(id_, name);
  if (d.failed) fail(d.failed, name);
  if (d.code.empty()) fail("read the numeric type (the stored type is not numeric) of", name);
  return d.code;
}

std::vector<unsigned char> Group::read_raw(const std::string& name, std::string* code) const {
  SilenceErrors quiet;
  NumericDataset d = open_numeric(id_, name);
  if (d.failed) fail(d.failed, name);
  if (d.code.empty()) fail("read raw bytes (the stored type is not numeric) of", name);
  *code = d.code;
  const Handle& dataset = d.dataset;
  const Handle& stored = d.stored;
  const std::size_t size = H5Tget_size(stored.get());
  // The stored type in little-endian order: a file written big-endian gives the same bytes.
  Handle memory(H5Tcopy(stored.get()), H5Tclose);
  if (memory.get() < 0 || H5Tset_order(memory.get(), H5T_ORDER_LE) < 0) fail("make a little-endian type for", name);
  Handle space(H5Dget_space(dataset.get()), H5Sclose);
  if (space.get() < 0) fail("get the dataspace of", name);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n < 0) fail("count the elements of", name);
  std::vector<unsigned char> bytes(std::size_t(n) * size);
  if (n > 0 && H5Dread(dataset.get(), memory.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()) < 0)
    fail("read", name);
  return bytes;
}

}  // namespace sharp::h5
