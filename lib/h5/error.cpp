// Turning HDF5's error stack into exceptions, and keeping HDF5 from printing on its own.
#include "h5/detail.hpp"
#include "h5/h5.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace sharp::h5 {

SilenceErrors::SilenceErrors() {
  // If the query fails we restore nothing but still silence (restoring garbage would be worse).
  if (H5Eget_auto2(H5E_DEFAULT, &saved_func_, &saved_data_) < 0) {
    saved_func_ = nullptr;
    saved_data_ = nullptr;
  }
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

SilenceErrors::~SilenceErrors() { H5Eset_auto2(H5E_DEFAULT, saved_func_, saved_data_); }

namespace detail {

Handle::~Handle() {
  if (id_ >= 0 && closer_ != nullptr) {
    SilenceErrors quiet;
    closer_(id_);
    H5Eclear2(H5E_DEFAULT);
  }
}

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    Handle dropped(std::move(*this));  // closes the old id quietly
    id_ = other.id_;
    closer_ = other.closer_;
    other.id_ = H5I_INVALID_HID;
  }
  return *this;
}

herr_t Handle::release() {
  herr_t status = 0;
  if (id_ >= 0 && closer_ != nullptr) status = closer_(id_);
  id_ = H5I_INVALID_HID;
  return status;
}

namespace {

std::string message_text(hid_t msg_id) {
  char buffer[256] = {0};
  if (H5Eget_msg(msg_id, nullptr, buffer, sizeof buffer) < 0) return "?";
  return buffer;
}

herr_t append_record(unsigned n, const H5E_error2_t* e, void* client) {
  auto& text = *static_cast<std::string*>(client);
  char index[16];
  std::snprintf(index, sizeof index, "  #%03u: ", n);
  text += index;
  text += std::string(e->file_name ? e->file_name : "?") + " line " + std::to_string(e->line) + " in " +
          (e->func_name ? e->func_name : "?") + "(): " + (e->desc ? e->desc : "") + " [" + message_text(e->maj_num) +
          " / " + message_text(e->min_num) + "]\n";
  return 0;
}

}  // namespace

std::string take_error_stack() {
  // Walk a copy: H5Eget_current_stack also clears the live stack, so the H5Eget_msg calls made
  // while walking cannot disturb what we read.
  hid_t stack = H5Eget_current_stack();
  if (stack < 0) return "  (HDF5 error stack unavailable)\n";
  std::string text;
  if (H5Ewalk2(stack, H5E_WALK_DOWNWARD, append_record, &text) < 0) text += "  (walk failed)\n";
  H5Eclose_stack(stack);
  if (text.empty()) text = "  (empty)\n";
  return text;
}

void raise(const std::string& context) {
  std::string stack = take_error_stack();
  throw Error("h5: " + context + "\nHDF5 error stack:\n" + stack);
}

Handle make_dataspace(const hsize_t* dims, int rank) {
  hid_t space = rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, dims, nullptr);
  if (space < 0) raise("cannot create a dataspace of rank " + std::to_string(rank));
  return Handle(space, H5Sclose);
}

Handle transfer_list(std::size_t elements, std::size_t element_bytes) {
  // HDF5 refuses a user-set buffer smaller than one element, so never go below one.
  constexpr std::size_t kDefaultBuffer = std::size_t(1) << 20;
  element_bytes = std::max(element_bytes, std::size_t(16));
  std::size_t wanted = std::max(elements, std::size_t(16)) * element_bytes;
  std::size_t bytes = std::max(std::min(wanted, kDefaultBuffer), element_bytes);
  Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
  if (dxpl.get() < 0 || H5Pset_buffer(dxpl.get(), bytes, nullptr, nullptr) < 0)
    raise("cannot create a dataset-transfer property list");
  return dxpl;
}

}  // namespace detail
}  // namespace sharp::h5
