#pragma once
// Internals shared by the h5/*.cpp files (not part of the public API).
#include <hdf5.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace sharp::h5::detail {

// Owns a short-lived HDF5 id (dataset, attribute, dataspace, datatype, property list) and closes
// it with the matching H5?close. The destructor never throws; release() returns the close status
// so a success path can check it.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(Handle&& other) noexcept : id_(other.id_), closer_(other.closer_) { other.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& other) noexcept;
  Handle(const Handle&) = delete;
  ~Handle();
  hid_t get() const { return id_; }
  herr_t release();

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

// Text of this thread's HDF5 error stack, one record a line ("  #000: file line N in func(): desc
// [major / minor]"); clears the stack. Call it before any other HDF5 call after a failure.
std::string take_error_stack();

// Throws Error("h5: " + context + "\nHDF5 error stack:\n" + stack), taking the stack first.
[[noreturn]] void raise(const std::string& context);

// Variable-length UTF-8 string type. h5py 3 reads such attributes as str and such datasets as
// bytes tagged utf-8 (str through .asstr()). Error on failure.
Handle vlen_utf8_type();

// Link-creation property list that creates missing intermediate groups ("a/b/c").
Handle intermediate_groups_lcpl();

// Dataset-transfer property list whose type-conversion buffers fit `elements` elements of up to
// `element_bytes` (at least 16, the in-file size of a variable-length string), capped at HDF5's
// default of 1 MiB. Why: HDF5 allocates and zeroes the full default buffer on every
// converting transfer, which made writing one variable-length string cost 6 ms instead of 5 us.
Handle transfer_list(std::size_t elements, std::size_t element_bytes = 16);

// Scalar (shape {}) or simple dataspace; Error on failure.
Handle make_dataspace(const hsize_t* dims, int rank);

// Reads every element of a string dataset or attribute (row-major), variable- or fixed-length.
// `stored_type` and `space` are the object's datatype and dataspace; `read(mem_type, buffer)` does
// the H5Dread or H5Aread; `fail(operation)` must throw (it is called right after a failed C call,
// or with the stack empty when the object does not hold strings).
std::vector<std::string> read_string_elements(hid_t stored_type, hid_t space,
                                              const std::function<herr_t(hid_t, void*)>& read,
                                              const std::function<void(const char*)>& fail);

}  // namespace sharp::h5::detail
