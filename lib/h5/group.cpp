// Group: ownership of the hid_t, links and child groups, and the error messages of every member.
#include <algorithm>

#include "h5/detail.hpp"
#include "h5/h5.hpp"

namespace sharp::h5 {

using detail::Handle;

Handle detail::intermediate_groups_lcpl() {
  Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  if (lcpl.get() < 0 || H5Pset_create_intermediate_group(lcpl.get(), 1) < 0)
    detail::raise("cannot create a link-creation property list");
  return lcpl;
}

Group::Group(Group&& other) noexcept : id_(other.id_) { other.id_ = H5I_INVALID_HID; }

Group& Group::operator=(Group&& other) noexcept {
  if (this != &other) {
    close_quietly();
    id_ = other.id_;
    other.id_ = H5I_INVALID_HID;
  }
  return *this;
}

Group::~Group() { close_quietly(); }

void Group::close_quietly() noexcept {
  // The file may have been closed already (strong close degree closes its groups): then the id
  // is no longer valid and there is nothing to do.
  if (id_ >= 0) {
    SilenceErrors quiet;
    if (H5Iis_valid(id_) > 0) H5Gclose(id_);
    H5Eclear2(H5E_DEFAULT);
  }
  id_ = H5I_INVALID_HID;
}

bool Group::valid() const {
  SilenceErrors quiet;
  return id_ >= 0 && H5Iis_valid(id_) > 0;
}

namespace {

// H5Iget_name or H5Fget_name into a string; false on failure (stack left for the caller).
bool query_name(hid_t id, ssize_t (*get)(hid_t, char*, std::size_t), std::string& out) {
  ssize_t length = get(id, nullptr, 0);
  if (length < 0) return false;
  std::string name(std::size_t(length) + 1, '\0');
  if (get(id, name.data(), name.size()) < 0) return false;
  name.resize(std::size_t(length));
  out = std::move(name);
  return true;
}

}  // namespace

std::string Group::path() const {
  SilenceErrors quiet;
  std::string name;
  if (!query_name(id_, H5Iget_name, name)) fail("get the name of", "");
  return name;
}

std::string Group::file_name() const {
  SilenceErrors quiet;
  std::string name;
  if (!query_name(id_, H5Fget_name, name)) fail("get the file name of", "");
  return name;
}

std::string Group::object_path(const std::string& name) const {
  if (!name.empty() && name[0] == '/') return name;
  std::string base = "?";
  query_name(id_, H5Iget_name, base);
  if (name.empty()) return base;
  return base == "/" ? "/" + name : base + "/" + name;
}

void Group::fail(const std::string& operation, const std::string& name) const {
  // The stack first: every later HDF5 call (the names below) resets it. Never recurses into fail.
  std::string stack = detail::take_error_stack();
  SilenceErrors quiet;
  std::string object = object_path(name);
  std::string file = "?";
  query_name(id_, H5Fget_name, file);
  H5Eclear2(H5E_DEFAULT);
  throw Error("h5: cannot " + operation + " '" + object + "' in file '" + file + "'\nHDF5 error stack:\n" + stack);
}

void Group::fail_count(const std::string& operation, const std::string& name, std::size_t count) const {
  H5Eclear2(H5E_DEFAULT);
  fail(operation + " (it holds " + std::to_string(count) + " elements, expected 1)", name);
}

void Group::fail_range(const std::string& operation, const std::string& name) const {
  H5Eclear2(H5E_DEFAULT);
  fail(operation + " (the value does not fit in int64)", name);
}

bool Group::exists(const std::string& name) const {
  SilenceErrors quiet;
  // H5Lexists fails, rather than answering false, when an intermediate component is missing or
  // is not a group; so walk the path one component at a time.
  std::size_t begin = name.starts_with('/') ? 1 : 0;
  for (;;) {
    std::size_t slash = name.find('/', begin);
    std::string prefix = name.substr(0, slash);
    htri_t there = H5Lexists(id_, prefix.c_str(), H5P_DEFAULT);
    if (there < 0) fail("look up link", prefix);
    if (there == 0) return false;
    if (slash == std::string::npos || slash + 1 == name.size()) return true;
    hid_t object = H5Oopen(id_, prefix.c_str(), H5P_DEFAULT);
    if (object < 0) {  // a dangling soft or external link: nothing lies below it
      H5Eclear2(H5E_DEFAULT);
      return false;
    }
    bool is_group = H5Iget_type(object) == H5I_GROUP;
    if (H5Oclose(object) < 0) fail("close", prefix);
    if (!is_group) return false;
    begin = slash + 1;
  }
}

namespace {

herr_t collect_name(hid_t, const char* name, const H5L_info_t*, void* names) {
  static_cast<std::vector<std::string>*>(names)->emplace_back(name);
  return 0;
}

}  // namespace

Group Group::create_group(const std::string& name) {
  SilenceErrors quiet;
  Handle lcpl = detail::intermediate_groups_lcpl();
  hid_t child = H5Gcreate2(id_, name.c_str(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT);
  if (child < 0) fail("create group", name);
  return Group(child);
}

Group Group::require_group(const std::string& name) { return exists(name) ? open_group(name) : create_group(name); }

Group Group::open_group(const std::string& name) const {
  SilenceErrors quiet;
  hid_t child = H5Gopen2(id_, name.c_str(), H5P_DEFAULT);
  if (child < 0) fail("open group", name);
  return Group(child);
}

std::vector<std::string> Group::children() const {
  SilenceErrors quiet;
  std::vector<std::string> names;
  if (H5Literate(id_, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_name, &names) < 0) fail("list the children of", "");
  std::sort(names.begin(), names.end());  // byte order, whatever index the file keeps
  return names;
}

}  // namespace sharp::h5
