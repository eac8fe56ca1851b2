// String element types: what this layer writes (variable-length UTF-8) and what it can read
// (that, or fixed-length strings as numpy's bytes_ arrays are stored).
#include "h5/detail.hpp"
#include "h5/h5.hpp"

namespace sharp::h5::detail {

Handle vlen_utf8_type() {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  if (type.get() < 0 || H5Tset_size(type.get(), H5T_VARIABLE) < 0 || H5Tset_cset(type.get(), H5T_CSET_UTF8) < 0)
    raise("cannot build the variable-length UTF-8 string type");
  return type;
}

namespace {

std::vector<std::string> read_variable(hid_t stored_type, hid_t space, std::size_t count,
                                       const std::function<herr_t(hid_t, void*)>& read,
                                       const std::function<void(const char*)>& fail) {
  // Memory type: variable-length C string in the stored character set (no transcoding).
  Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
  H5T_cset_t cset = H5Tget_cset(stored_type);
  if (mem.get() < 0 || cset < 0 || H5Tset_size(mem.get(), H5T_VARIABLE) < 0 || H5Tset_cset(mem.get(), cset) < 0)
    fail("build memory string type for");
  std::vector<char*> pointers(count, nullptr);
  herr_t status = read(mem.get(), pointers.data());
  std::vector<std::string> out;
  if (status < 0) {
    try {
      fail("read strings from");  // throws, having taken the error stack
    } catch (...) {
      // A failed read may have allocated some strings already (the rest stay null).
      SilenceErrors quiet;
      H5Dvlen_reclaim(mem.get(), space, H5P_DEFAULT, pointers.data());
      H5Eclear2(H5E_DEFAULT);
      throw;
    }
  }
  out.reserve(count);
  for (char* p : pointers) out.emplace_back(p ? p : "");
  // HDF5 allocated every string: give them back with the same type and dataspace.
  if (H5Dvlen_reclaim(mem.get(), space, H5P_DEFAULT, pointers.data()) < 0) fail("reclaim string memory of");
  return out;
}

std::vector<std::string> read_fixed(hid_t stored_type, std::size_t count,
                                    const std::function<herr_t(hid_t, void*)>& read,
                                    const std::function<void(const char*)>& fail) {
  std::size_t width = H5Tget_size(stored_type);
  H5T_str_t pad = H5Tget_strpad(stored_type);
  if (width == 0 || pad < 0) fail("inspect fixed-length string type of");
  Handle mem(H5Tcopy(stored_type), H5Tclose);
  if (mem.get() < 0) fail("copy string type of");
  std::vector<char> bytes(width * count);  // [count][width], padded, maybe not NUL-terminated
  if (count > 0 && read(mem.get(), bytes.data()) < 0) fail("read strings from");
  std::vector<std::string> out;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    std::string s(bytes.data() + i * width, width);
    s.resize(s.find('\0') == std::string::npos ? width : s.find('\0'));
    if (pad == H5T_STR_SPACEPAD) s.resize(s.find_last_not_of(' ') + 1);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

std::vector<std::string> read_string_elements(hid_t stored_type, hid_t space,
                                              const std::function<herr_t(hid_t, void*)>& read,
                                              const std::function<void(const char*)>& fail) {
  H5T_class_t type_class = H5Tget_class(stored_type);
  if (type_class < 0) fail("inspect datatype of");
  if (type_class != H5T_STRING) fail("read strings (the stored type is not a string) from");
  hssize_t count = H5Sget_simple_extent_npoints(space);
  if (count < 0) fail("count elements of");
  htri_t variable = H5Tis_variable_str(stored_type);
  if (variable < 0) fail("inspect string type of");
  if (variable)
    return count == 0 ? std::vector<std::string>{} : read_variable(stored_type, space, std::size_t(count), read, fail);
  return read_fixed(stored_type, std::size_t(count), read, fail);
}

}  // namespace sharp::h5::detail
