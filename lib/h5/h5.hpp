#pragma once
// The suite's HDF5 layer (docs/architecture.md#hdf5-schema, docs/architecture.md#points-parts-merge-resume): small move-only RAII
// types over the HDF5 C API in the spirit of HighFive. Every C call is checked; a failure becomes
// h5::Error whose what() names the operation, the object, the file and HDF5's own error stack.
// HDF5's automatic printing to stderr is silenced inside every call of this layer.
//
// Lifetime: a Group is a view into an open File. Files are opened with the "strong" close degree,
// so File::close() (or ~File) closes every object of the file; a Group used after that throws.
#include <H5Epublic.h>
#include <H5Ipublic.h>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace sharp::h5 {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Element types a numeric dataset may be written from or read into.
template <class T>
concept Element = std::same_as<T, double> || std::same_as<T, float> || std::same_as<T, std::int64_t> ||
    std::same_as<T, std::int32_t> || std::same_as<T, std::uint64_t> || std::same_as<T, std::uint8_t>;

// Scoped guard: HDF5 prints nothing to stderr while it lives (H5Eset_auto2 off, restored after).
// Nests correctly. Errors are still recorded on the error stack, which this layer turns into text.
class SilenceErrors {
 public:
  SilenceErrors();
  ~SilenceErrors();
  SilenceErrors(const SilenceErrors&) = delete;
  SilenceErrors& operator=(const SilenceErrors&) = delete;

 private:
  H5E_auto2_t saved_func_ = nullptr;
  void* saved_data_ = nullptr;
};

// A group (the file's root group included). Move-only; owns its hid_t. Dataset and attribute
// names may be paths ("params/n"): intermediate groups are created on write.
class Group {
 public:
  Group() = default;  // an invalid group; every operation on it throws
  Group(Group&& other) noexcept;
  Group& operator=(Group&& other) noexcept;
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  ~Group();

  bool valid() const;
  bool exists(const std::string& name) const;  // link exists ("a/b" paths allowed)
  Group create_group(const std::string& name);  // creates intermediate groups; Error if it exists
  Group require_group(const std::string& name);  // open if it exists, else create
  Group open_group(const std::string& name) const;  // Error if missing or not a group
  std::vector<std::string> children() const;  // child link names, sorted by name
  std::string path() const;  // e.g. "/points/params"
  std::string file_name() const;  // name of the file this group lives in

  // Numeric datasets. shape = dims, row-major; data holds product(shape) elements; shape {} is a
  // scalar (rank 0), shape {0} an empty 1-D dataset. Stored little-endian with T's width; arrays of
  // 1024 elements or more chunked, shuffled and deflated (dataset.cpp), which readers never see.
  // Writing a name that already exists is an Error (HDF5 cannot reclaim the space of a replaced one).
  template <Element T>
  void write(const std::string& name, const T* data, const std::vector<std::size_t>& shape);
  template <Element T>
  void write(const std::string& name, const std::vector<T>& data) {
    write(name, data.data(), {data.size()});
  }
  template <Element T>
  void write_scalar(const std::string& name, T value) {
    write(name, &value, {});
  }
  void write_string(const std::string& name, const std::string& value);  // scalar vlen UTF-8
  void write_strings(const std::string& name, const std::vector<std::string>& values);  // 1-D vlen UTF-8

  // Reads with HDF5's numeric conversion from whatever numeric type is stored (int64 -> double
  // works). A lossy conversion to an integer type (fraction, overflow, NaN, inf) throws instead of
  // clipping silently; float targets follow IEEE casting (1e300 -> float is inf). Strings: Error.
  template <Element T>
  std::vector<T> read(const std::string& name, std::vector<std::size_t>* shape = nullptr) const;
  template <Element T>
  T read_scalar(const std::string& name) const {  // rank 0 or any shape with one element
    std::vector<T> v = read<T>(name);
    if (v.size() != 1) fail_count("read scalar", name, v.size());
    return v[0];
  }
  std::string read_string(const std::string& name) const;  // vlen or fixed-length
  std::vector<std::string> read_strings(const std::string& name) const;  // all elements, row-major
  std::vector<std::size_t> shape(const std::string& name) const;
  enum class Kind { Float, Integer, String, Other };
  Kind dataset_kind(const std::string& name) const;  // class of the stored element type
  bool is_dataset(const std::string& name) const;  // a dataset (not a group)
  bool is_virtual(const std::string& name) const;  // a virtual dataset: no data of its own
  // A numeric dataset's values as stored, little-endian bytes of the stored element type, without
  // conversion; `code` is that type as numpy writes it: "f8", "f4", "i8", "u1", ... Error otherwise.
  std::vector<unsigned char> read_raw(const std::string& name, std::string* code) const;
  std::string numeric_type_code(const std::string& name) const;  // that code alone, nothing read

  // Attributes on this group (root attributes when this is the root group); set_attr overwrites.
  bool has_attr(const std::string& name) const;
  void set_attr(const std::string& name, const std::string& value);  // scalar vlen UTF-8 string
  void set_attr(const std::string& name, const char* value);
  void set_attr(const std::string& name, std::int64_t value);
  void set_attr(const std::string& name, double value);
  // Any other integer (int, size_t, bool) is stored as int64, so set_attr("threads", 4) is not
  // ambiguous between int64 and double; a value beyond int64 is an Error.
  template <std::integral I>
  requires(!std::same_as<I, std::int64_t>) void set_attr(const std::string& name, I value) {
    if constexpr (std::is_unsigned_v<I>)
      if (static_cast<std::uint64_t>(value) > std::uint64_t(INT64_MAX)) fail_range("set attribute", name);
    set_attr(name, static_cast<std::int64_t>(value));
  }
  std::string attr_string(const std::string& name) const;
  std::int64_t attr_int(const std::string& name) const;  // Error unless stored as an integer
  double attr_double(const std::string& name) const;  // integer or float

  // Attributes of the dataset `dataset` of this group (units, long_name, ...); set overwrites.
  void set_dataset_attr(const std::string& dataset, const std::string& key, const std::string& value);
  void set_dataset_attr(const std::string& dataset, const std::string& key, double value);
  void set_dataset_attr(const std::string& dataset, const std::string& key, std::int64_t value);

  // A virtual dataset (HDF5's VDS; no data of its own): `shape`, the element type of the first
  // source, and each source, a whole dataset of this file (absolute path), read at the block
  // [offset, offset + count) of it. A block holds as many elements as its source, in row-major
  // order, whatever the ranks (a [P] column can be read as [a, b]). Elements no source covers read
  // as kMissingReal (floats) or kMissingInteger (integers). Error if `name` exists.
  struct VirtualSource {
    std::string path;
    std::vector<std::size_t> offset, count;
  };
  void write_virtual(const std::string& name, const std::vector<std::size_t>& shape,
                     const std::vector<VirtualSource>& sources);

  // Dimension scales (HDF5's H5DS, as netCDF-4 writes them): the dataset `dataset` becomes the scale
  // of dimension `dimension`; create_dimension makes a scale of `length` without values (netCDF: a
  // dimension that is not a variable); attach_dimension_scale labels axis `axis` of `dataset` with
  // the scale `scale`. Each writes attributes only: no dataset's values change.
  void make_dimension_scale(const std::string& dataset, const std::string& dimension);
  void create_dimension(const std::string& name, std::size_t length);
  void attach_dimension_scale(const std::string& dataset, const std::string& scale, unsigned axis);

  hid_t id() const { return id_; }  // escape hatch to the C API; still owned by this Group

 private:
  friend class File;
  explicit Group(hid_t id) : id_(id) {}
  void close_quietly() noexcept;
  std::string object_path(const std::string& name) const;  // absolute path of a child, for messages
  // Throws Error("<operation> '<object>' in file '<file>'" + HDF5 stack). Must be called right
  // after the failing C call: any other HDF5 call resets the error stack.
  [[noreturn]] void fail(const std::string& operation, const std::string& name) const;
  [[noreturn]] void fail_range(const std::string& operation, const std::string& name) const;
  [[noreturn]] void fail_count(const std::string& operation, const std::string& name, std::size_t count) const;

  hid_t id_ = H5I_INVALID_HID;
};

class File {
 public:
  static File create(const std::string& path);  // truncate or create, read-write
  static File open_read(const std::string& path);  // read-only
  static File open_rw(const std::string& path);

  File(File&& other) noexcept;
  File& operator=(File&& other) noexcept;
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  ~File();  // closes quietly; call close() to see errors

  Group& root();
  const Group& root() const;
  const std::string& filename() const { return filename_; }
  bool is_open() const;
  void flush();
  void close();  // throws on failure; idempotent

 private:
  File(hid_t id, std::string filename);
  hid_t id_ = H5I_INVALID_HID;
  std::string filename_;
  Group root_;
};

// How far a committed file must survive: a killed process (rename of a closed file suffices), or
// also a crash of the operating system (fsync of the file and its directory, ~1 ms or more).
enum class Durability { ProcessCrash, SystemCrash };

// Writes to "<final>.tmp.<pid>.<counter>" in the same directory; commit() closes the file (fsyncs
// it for SystemCrash) and renames it over <final> atomically. Destroyed without commit() (exception,
// early return), the temporary is closed and unlinked. A reader sees the old file or the complete new one.
class AtomicFile {
 public:
  explicit AtomicFile(const std::string& final_path, Durability durability = Durability::SystemCrash);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  File& file() { return file_; }
  Group& root() { return file_.root(); }
  void commit();  // Error on failure (the temporary is then removed by the destructor)
  const std::string& temp_path() const { return temp_path_; }
  const std::string& final_path() const { return final_path_; }

 private:
  std::string final_path_;
  std::string temp_path_;
  Durability durability_;
  File file_;
  bool committed_ = false;
};

// What a virtual dataset reads where no source covers it (netCDF's default fill for int64).
inline constexpr std::int64_t kMissingInteger = INT64_MIN + 2;
inline constexpr double kMissingReal = __builtin_nan("");

// True when `filename` (a name, not a path) looks like an AtomicFile temporary:
// "<anything>.tmp.<digits>.<digits>". For cleaning up temporaries left by killed processes.
bool is_atomic_temp_name(const std::string& filename);

// True only when `path` exists, opens as HDF5 and has an integer root attribute "complete" equal
// to 1. Any failure gives false, silently.
bool is_complete(const std::string& path);

}  // namespace sharp::h5
