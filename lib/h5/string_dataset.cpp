// String datasets of a Group: written as variable-length UTF-8 (h5py sees the utf-8 encoding);
// read whether variable- or fixed-length.
#include <cstring>

#include "h5/detail.hpp"
#include "h5/h5.hpp"

namespace sharp::h5 {

using detail::Handle;

namespace {

// Writes `values` as a dataset of rank 0 (exactly one value) or 1. HDF5 would silently cut a
// string at an embedded NUL, so such a string is refused. `fail(operation)` throws.
template <class Fail>
void write_vlen_strings(hid_t owner, const std::string& name, const std::vector<std::string>& values, int rank,
                        Fail fail) {
  std::vector<const char*> pointers;
  for (const std::string& v : values) {
    if (std::strlen(v.c_str()) != v.size()) {
      H5Eclear2(H5E_DEFAULT);
      fail("write strings (element " + std::to_string(pointers.size()) + " contains a NUL byte) to dataset");
    }
    pointers.push_back(v.c_str());
  }
  hsize_t length = values.size();
  Handle space = detail::make_dataspace(&length, rank);
  Handle type = detail::vlen_utf8_type();
  Handle lcpl = detail::intermediate_groups_lcpl();
  Handle dataset(H5Dcreate2(owner, name.c_str(), type.get(), space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
                 H5Dclose);
  if (dataset.get() < 0) fail("create string dataset");
  Handle dxpl = detail::transfer_list(values.size());
  if (length > 0 && H5Dwrite(dataset.get(), type.get(), H5S_ALL, H5S_ALL, dxpl.get(), pointers.data()) < 0)
    fail("write string dataset");
  if (dataset.release() < 0) fail("close dataset");
}

}  // namespace

void Group::write_strings(const std::string& name, const std::vector<std::string>& values) {
  SilenceErrors quiet;
  write_vlen_strings(id_, name, values, 1, [&](const std::string& op) { fail(op, name); });
}

void Group::write_string(const std::string& name, const std::string& value) {
  SilenceErrors quiet;
  write_vlen_strings(id_, name, {value}, 0, [&](const std::string& op) { fail(op, name); });
}

std::vector<std::string> Group::read_strings(const std::string& name) const {
  SilenceErrors quiet;
  Handle dataset(H5Dopen2(id_, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (dataset.get() < 0) fail("open dataset", name);
  Handle type(H5Dget_type(dataset.get()), H5Tclose);
  Handle space(H5Dget_space(dataset.get()), H5Sclose);
  if (type.get() < 0 || space.get() < 0) fail("get the datatype and dataspace of", name);
  hssize_t count = H5Sget_simple_extent_npoints(space.get());
  if (count < 0) fail("count the elements of", name);
  Handle dxpl = detail::transfer_list(std::size_t(count), H5Tget_size(type.get()));
  hid_t d = dataset.get(), x = dxpl.get();
  return detail::read_string_elements(
      type.get(), space.get(),
      [d, x](hid_t memory, void* buffer) { return H5Dread(d, memory, H5S_ALL, H5S_ALL, x, buffer); },
      [&](const char* operation) { fail(std::string(operation) + " dataset", name); });
}

std::string Group::read_string(const std::string& name) const {
  std::vector<std::string> values = read_strings(name);
  if (values.size() != 1) fail_count("read a string from", name, values.size());
  return values[0];
}

}  // namespace sharp::h5
