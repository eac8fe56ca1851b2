// Files: opening and closing, atomic replacement of a finished file, and the "complete" check
// that decides whether a result or part file exists at all (docs/architecture.md#points-parts-merge-resume).
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "h5/detail.hpp"
#include "h5/h5.hpp"

namespace sharp::h5 {

using detail::Handle;

namespace {

// Strong close degree: H5Fclose really closes the file (flushing it) even while Groups are still
// alive, which AtomicFile::commit needs before it renames. File locking stays on where the file
// system supports it and is skipped where it does not (NFS, Lustre) instead of failing the open.
Handle file_access_list() {
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (fapl.get() < 0 || H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG) < 0 ||
      H5Pset_file_locking(fapl.get(), true, true) < 0)
    detail::raise("cannot create a file-access property list");
  return fapl;
}

}  // namespace

File::File(hid_t id, std::string filename) : id_(id), filename_(std::move(filename)) {
  hid_t root = H5Gopen2(id_, "/", H5P_DEFAULT);
  if (root < 0) {
    std::string stack = detail::take_error_stack();
    H5Fclose(id_);
    id_ = H5I_INVALID_HID;
    throw Error("h5: cannot open the root group of file '" + filename_ + "'\nHDF5 error stack:\n" + stack);
  }
  root_ = Group(root);
}

File File::create(const std::string& path) {
  SilenceErrors quiet;
  Handle fapl = file_access_list();
  // HDF5 1.10's object formats: a chunked dataset of one chunk is indexed in its header instead of
  // by a B-tree node of ~2.5 KB, which made a file of thousands of small per-sample arrays 5x its
  // data (measured: 3300 compressed arrays of 1024 flags, 9.4 MB with the 1.8 formats, 1.9 MB with
  // these). Readers need HDF5 >= 1.10 (2017), which every h5py and netCDF build in use has.
  if (H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V110, H5F_LIBVER_LATEST) < 0)
    detail::raise("cannot set the file format version for '" + path + "'");
  hid_t id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
  if (id < 0) detail::raise("cannot create file '" + path + "'");
  return File(id, path);
}

File File::open_read(const std::string& path) {
  SilenceErrors quiet;
  Handle fapl = file_access_list();
  hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get());
  if (id < 0) detail::raise("cannot open file '" + path + "' for reading");
  return File(id, path);
}

File File::open_rw(const std::string& path) {
  SilenceErrors quiet;
  Handle fapl = file_access_list();
  hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get());
  if (id < 0) detail::raise("cannot open file '" + path + "' for writing");
  return File(id, path);
}

File::File(File&& other) noexcept
    : id_(other.id_), filename_(std::move(other.filename_)), root_(std::move(other.root_)) {
  other.id_ = H5I_INVALID_HID;
}

File& File::operator=(File&& other) noexcept {
  if (this != &other) {
    try {
      close();
    } catch (const Error&) {  // as in the destructor: a move must not throw
    }
    id_ = other.id_;
    filename_ = std::move(other.filename_);
    root_ = std::move(other.root_);
    other.id_ = H5I_INVALID_HID;
  }
  return *this;
}

File::~File() {
  try {
    close();
  } catch (...) {  // destructors never throw; call close() to see the error
  }
}

Group& File::root() { return root_; }
const Group& File::root() const { return root_; }
bool File::is_open() const { return id_ >= 0; }

void File::flush() {
  SilenceErrors quiet;
  if (H5Fflush(id_, H5F_SCOPE_GLOBAL) < 0) detail::raise("cannot flush file '" + filename_ + "'");
}

void File::close() {
  if (id_ < 0) return;
  SilenceErrors quiet;
  root_.close_quietly();
  hid_t id = id_;
  id_ = H5I_INVALID_HID;  // never closed twice, even when this close fails
  if (H5Fclose(id) < 0) detail::raise("cannot close file '" + filename_ + "'");
}

namespace {

std::atomic<unsigned long> temp_counter{0};

std::string temp_name_for(const std::string& final_path) {
  return final_path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(temp_counter++);
}

// Data must reach the disk before the rename does, or a crash could leave the new name pointing
// at an empty file.
void sync_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("h5: cannot open '" + path + "' to sync it: " + std::strerror(errno));
  int status = ::fsync(fd);
  int saved_errno = errno;
  ::close(fd);
  if (status != 0) throw Error("h5: cannot sync '" + path + "': " + std::strerror(saved_errno));
}

// Makes the rename itself durable; best effort (some file systems refuse fsync on directories).
void sync_directory_of(const std::string& path) {
  std::string directory = std::filesystem::path(path).parent_path().string();
  int fd = ::open(directory.empty() ? "." : directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

AtomicFile::AtomicFile(const std::string& final_path, Durability durability)
    : final_path_(final_path),
      temp_path_(temp_name_for(final_path)),
      durability_(durability),
      file_(File::create(temp_path_)) {}

void AtomicFile::commit() {
  if (committed_) return;
  file_.close();
  if (durability_ == Durability::SystemCrash) sync_file(temp_path_);
  if (std::rename(temp_path_.c_str(), final_path_.c_str()) != 0)
    throw Error("h5: cannot rename '" + temp_path_ + "' to '" + final_path_ + "': " + std::strerror(errno));
  committed_ = true;
  if (durability_ == Durability::SystemCrash) sync_directory_of(final_path_);
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  try {
    file_.close();
  } catch (...) {  // the temporary is discarded anyway
  }
  std::remove(temp_path_.c_str());
}

bool is_atomic_temp_name(const std::string& filename) {
  std::size_t tag = filename.rfind(".tmp.");
  if (tag == std::string::npos || tag == 0) return false;
  std::string rest = filename.substr(tag + 5);  // "<pid>.<counter>"
  std::size_t dot = rest.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == rest.size()) return false;
  for (std::size_t i = 0; i < rest.size(); ++i)
    if (i != dot && (rest[i] < '0' || rest[i] > '9')) return false;
  return true;
}

bool is_complete(const std::string& path) {
  try {
    SilenceErrors quiet;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return false;
    File file = File::open_read(path);
    const Group& root = file.root();
    return root.has_attr("complete") && root.attr_int("complete") == 1;
  } catch (...) {
    H5Eclear2(H5E_DEFAULT);
    return false;
  }
}

}  // namespace sharp::h5
