// The HDF5 layer: round trips of every element type and shape, strings, attributes, groups,
// checked conversions, error messages (with HDF5's stack, nothing printed by HDF5), atomic
// replacement and the "complete" check.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "h5/h5.hpp"

namespace fs = std::filesystem;
namespace h5 = sharp::h5;

namespace {

// A fresh directory per test: <tmp>/sharp-test-h5-<pid>/<test name>.
class H5Test : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sharp-test-h5-" + std::to_string(::getpid())) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    fs::remove_all(dir_);
    std::error_code ec;
    fs::remove(dir_.parent_path(), ec);  // only once empty
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) names.push_back(entry.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path dir_;
};

// Captures what is written to file descriptor 2 (where HDF5 prints) between construction and
// finish().
class StderrCapture {
public:
  StderrCapture() {
    std::fflush(stderr);
    saved_ = ::dup(2);
    file_ = std::tmpfile();
    ::dup2(::fileno(file_), 2);
  }
  std::string finish() {
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    std::rewind(file_);
    std::string text;
    for (int c; (c = std::fgetc(file_)) != EOF;) text.push_back(char(c));
    std::fclose(file_);
    return text;
  }

private:
  int saved_ = -1;
  std::FILE* file_ = nullptr;
};

// Runs `action`, expects an h5::Error, returns its what(); fails the test if HDF5 printed.
template <class Action>
std::string error_of(Action action) {
  StderrCapture capture;
  std::string message = "(no exception)";
  try {
    action();
  } catch (const h5::Error& e) {
    message = e.what();
  }
  std::string printed = capture.finish();
  EXPECT_EQ(printed, "") << "HDF5 printed to stderr";
  return message;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---------------------------------------------------------------- numeric round trips, per type

template <class T>
class NumericRoundTrip : public H5Test {};
using ElementTypes =
    ::testing::Types<double, float, std::int64_t, std::int32_t, std::uint64_t, std::uint8_t>;
TYPED_TEST_SUITE(NumericRoundTrip, ElementTypes);

TYPED_TEST(NumericRoundTrip, ScalarOneDTwoDAndEmpty) {
  using T = TypeParam;
  const std::string file = this->path("types.h5");
  const std::vector<T> line = {T(1), T(2), T(250), std::numeric_limits<T>::max()};
  const std::vector<T> matrix = {T(0), T(1), T(2), T(3), T(4), T(5)};  // [2][3]
  {
    h5::File f = h5::File::create(file);
    f.root().write_scalar<T>("scalar", T(42));
    f.root().write("line", line);
    f.root().write("matrix", matrix.data(), {2, 3});
    f.root().write("empty", std::vector<T>{});
    f.root().write<T>("empty2d", nullptr, {0, 4});
    f.close();
  }
  h5::File f = h5::File::open_read(file);
  const h5::Group& root = f.root();
  std::vector<std::size_t> shape = {99};
  EXPECT_EQ(root.read<T>("scalar", &shape), std::vector<T>{T(42)});
  EXPECT_TRUE(shape.empty());  // rank 0
  EXPECT_EQ(root.read_scalar<T>("scalar"), T(42));
  EXPECT_EQ(root.read<T>("line", &shape), line);
  EXPECT_EQ(shape, (std::vector<std::size_t>{4}));
  EXPECT_EQ(root.read<T>("matrix", &shape), matrix);
  EXPECT_EQ(shape, (std::vector<std::size_t>{2, 3}));
  EXPECT_TRUE(root.read<T>("empty", &shape).empty());
  EXPECT_EQ(shape, (std::vector<std::size_t>{0}));
  EXPECT_TRUE(root.read<T>("empty2d", &shape).empty());
  EXPECT_EQ(shape, (std::vector<std::size_t>{0, 4}));
  EXPECT_EQ(root.shape("matrix"), (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(root.dataset_kind("line"),
            std::is_integral_v<T> ? h5::Group::Kind::Integer : h5::Group::Kind::Float);
}

// ---------------------------------------------------------------- conversions

TEST_F(H5Test, ReadConvertsBetweenNumericTypes) {
  h5::File f = h5::File::create(path("convert.h5"));
  h5::Group& root = f.root();
  root.write("ints", std::vector<std::int64_t>{-3, 0, 7, std::int64_t(1) << 40});
  root.write("whole", std::vector<double>{1.0, -2.0, 255.0});
  EXPECT_EQ(root.read<double>("ints"), (std::vector<double>{-3.0, 0.0, 7.0, 1099511627776.0}));
  EXPECT_EQ(root.read<float>("ints")[2], 7.0f);
  EXPECT_EQ(root.read<std::int32_t>("whole"), (std::vector<std::int32_t>{1, -2, 255}));
}

// Large arrays are stored chunked and deflated (what lets a paper-scale run ship); small ones stay
// contiguous. Either way the values read back exactly, at the boundary size as well.
TEST_F(H5Test, LargeArraysAreCompressedAndReadBackExactly) {
  const std::string file = path("compressed.h5");
  std::vector<std::int64_t> flags(100000, 0);
  for (std::size_t i = 0; i < flags.size(); i += 7) flags[i] = 1;
  std::vector<double> below(1023, 0.25), at(1024, 0.25);
  {
    h5::File f = h5::File::create(file);
    f.root().write("flags", flags);
    f.root().write("below", below);
    f.root().write("at", at);
  }
  auto layout_and_size = [&](const char* name) {
    hid_t fid = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t did = H5Dopen2(fid, name, H5P_DEFAULT);
    hid_t dcpl = H5Dget_create_plist(did);
    std::pair<H5D_layout_t, hsize_t> out{H5Pget_layout(dcpl), H5Dget_storage_size(did)};
    H5Pclose(dcpl);
    H5Dclose(did);
    H5Fclose(fid);
    return out;
  };
  auto [flags_layout, flags_bytes] = layout_and_size("flags");
  EXPECT_EQ(flags_layout, H5D_CHUNKED);
  EXPECT_LT(flags_bytes, flags.size() * sizeof(std::int64_t) / 10);  // 0/1 flags: > 10x smaller
  EXPECT_EQ(layout_and_size("below").first, H5D_CONTIGUOUS);
  EXPECT_EQ(layout_and_size("at").first, H5D_CHUNKED);
  h5::File f = h5::File::open_read(file);
  EXPECT_EQ(f.root().read<std::int64_t>("flags"), flags);
  EXPECT_EQ(f.root().read<double>("below"), below);
  EXPECT_EQ(f.root().read<double>("at"), at);
}

TEST_F(H5Test, LossyConversionsThrowInsteadOfClipping) {
  h5::File f = h5::File::create(path("lossy.h5"));
  h5::Group& root = f.root();
  root.write("fraction", std::vector<double>{1.0, 1.5});
  root.write("big", std::vector<std::int64_t>{300});
  root.write("negative", std::vector<std::int32_t>{-1});
  root.write("nan", std::vector<double>{std::nan("")});
  root.write("huge", std::vector<double>{1e300});
  root.write("inf", std::vector<double>{INFINITY});
  EXPECT_TRUE(contains(error_of([&] { root.read<std::int64_t>("fraction"); }), "/fraction"));
  EXPECT_TRUE(contains(error_of([&] { root.read<std::uint8_t>("big"); }), "/big"));
  EXPECT_TRUE(contains(error_of([&] { root.read<std::uint64_t>("negative"); }), "/negative"));
  EXPECT_TRUE(contains(error_of([&] { root.read<std::int32_t>("nan"); }), "/nan"));
  EXPECT_TRUE(contains(error_of([&] { root.read<std::int64_t>("inf"); }), "/inf"));
  // Float targets follow IEEE casting, as static_cast<float> does: overflow gives inf.
  EXPECT_EQ(root.read<float>("huge")[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(root.read<float>("inf")[0], std::numeric_limits<float>::infinity());
}

// ---------------------------------------------------------------- strings

TEST_F(H5Test, StringsRoundTripIncludingUtf8AndEmpty) {
  const std::string file = path("strings.h5");
  const std::vector<std::string> list = {"alpha", "", "θ = 0.25 → β = 4", "日本語", "x y"};
  {
    h5::File f = h5::File::create(file);
    f.root().write_string("config", "n = 16\nnormaliser = softmax:beta=2\n");
    f.root().write_string("utf8", "δ ∈ [2.28, 14.78]");
    f.root().write_string("blank", "");
    f.root().write_strings("points/id", list);
    f.root().write_strings("none", {});
  }
  h5::File f = h5::File::open_read(file);
  const h5::Group& root = f.root();
  EXPECT_EQ(root.read_string("config"), "n = 16\nnormaliser = softmax:beta=2\n");
  EXPECT_EQ(root.read_string("utf8"), "δ ∈ [2.28, 14.78]");
  EXPECT_EQ(root.read_string("blank"), "");
  EXPECT_EQ(root.read_strings("points/id"), list);
  EXPECT_EQ(root.shape("points/id"), (std::vector<std::size_t>{5}));
  EXPECT_TRUE(root.read_strings("none").empty());
  EXPECT_EQ(root.read_strings("config"), (std::vector<std::string>{root.read_string("config")}));
  EXPECT_EQ(root.dataset_kind("utf8"), h5::Group::Kind::String);
  EXPECT_TRUE(contains(error_of([&] { root.read_string("points/id"); }), "/points/id"));
}

TEST_F(H5Test, FixedLengthStringsWrittenByOthersAreRead) {
  // numpy's bytes_ arrays are stored as fixed-length, NUL-padded strings.
  h5::File f = h5::File::create(path("fixed.h5"));
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, 4);
  H5Tset_strpad(type, H5T_STR_NULLPAD);
  hsize_t n = 2;
  hid_t space = H5Screate_simple(1, &n, nullptr);
  hid_t dataset = H5Dcreate2(f.root().id(), "fixed", type, space, H5P_DEFAULT, H5P_DEFAULT,
                             H5P_DEFAULT);
  const char bytes[8] = {'a', 'b', 0, 0, 'w', 'x', 'y', 'z'};
  ASSERT_GE(H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes), 0);
  H5Dclose(dataset);
  H5Sclose(space);
  H5Tclose(type);
  EXPECT_EQ(f.root().read_strings("fixed"), (std::vector<std::string>{"ab", "wxyz"}));

  // Wider than any conversion buffer this layer sizes by default; space-padded.
  const std::string wide = std::string(290, 'q') + "end";
  type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, 300);
  H5Tset_strpad(type, H5T_STR_SPACEPAD);
  space = H5Screate(H5S_SCALAR);
  dataset = H5Dcreate2(f.root().id(), "wide", type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  std::string padded = wide + std::string(300 - wide.size(), ' ');
  ASSERT_GE(H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, padded.data()), 0);
  H5Dclose(dataset);
  H5Sclose(space);
  H5Tclose(type);
  EXPECT_EQ(f.root().read_string("wide"), wide);
}

TEST_F(H5Test, StringWithNulByteIsRefused) {
  h5::File f = h5::File::create(path("nul.h5"));
  std::string bad("a\0b", 3);
  EXPECT_TRUE(contains(error_of([&] { f.root().write_string("s", bad); }), "NUL"));
  EXPECT_TRUE(contains(error_of([&] { f.root().set_attr("s", bad); }), "NUL"));
}

// ---------------------------------------------------------------- attributes

TEST_F(H5Test, AttributesOfEveryTypeAndOverwrite) {
  const std::string file = path("attrs.h5");
  {
    h5::File f = h5::File::create(file);
    h5::Group& root = f.root();
    root.set_attr("schema", "sharp/1");
    root.set_attr("notes", std::string("β(H) reconstructed ✓"));
    root.set_attr("complete", std::int64_t{0});
    root.set_attr("theta", 0.25);
    root.set_attr("complete", std::int64_t{1});      // overwrite, same type
    root.set_attr("theta", std::string("a string"));  // overwrite, another type
    root.set_attr("threads", 4);                 // int: stored as int64, not ambiguous
    root.set_attr("points", std::size_t{7});
    root.set_attr("dirty", true);
    root.set_attr("ratio", 0.5f);                // float: stored as double
    EXPECT_TRUE(contains(error_of([&] { root.set_attr("huge", ~std::uint64_t{0}); }), "int64"));
    h5::Group g = root.create_group("timing");
    g.set_attr("unit", "seconds");
    g.set_attr("big", std::numeric_limits<std::int64_t>::min());
  }
  h5::File f = h5::File::open_read(file);
  const h5::Group& root = f.root();
  EXPECT_EQ(root.attr_string("schema"), "sharp/1");
  EXPECT_EQ(root.attr_string("notes"), "β(H) reconstructed ✓");
  EXPECT_EQ(root.attr_int("complete"), 1);
  EXPECT_EQ(root.attr_double("complete"), 1.0);  // integers read as double
  EXPECT_EQ(root.attr_string("theta"), "a string");
  EXPECT_EQ(root.attr_int("threads"), 4);
  EXPECT_EQ(root.attr_int("points"), 7);
  EXPECT_EQ(root.attr_int("dirty"), 1);
  EXPECT_EQ(root.attr_double("ratio"), 0.5);
  EXPECT_FALSE(root.has_attr("huge"));
  EXPECT_TRUE(root.has_attr("schema"));
  EXPECT_FALSE(root.has_attr("missing"));
  h5::Group g = root.open_group("timing");
  EXPECT_EQ(g.attr_string("unit"), "seconds");
  EXPECT_EQ(g.attr_int("big"), std::numeric_limits<std::int64_t>::min());
  EXPECT_FALSE(g.has_attr("schema"));
  EXPECT_TRUE(contains(error_of([&] { root.attr_int("schema"); }), "/schema"));   // string as int
  EXPECT_TRUE(contains(error_of([&] { root.attr_double("notes"); }), "/notes"));  // string as double
  EXPECT_TRUE(contains(error_of([&] { root.attr_string("complete"); }), "/complete"));
  std::string missing = error_of([&] { g.attr_double("nope"); });
  EXPECT_TRUE(contains(missing, "/timing/nope")) << missing;
  EXPECT_TRUE(contains(missing, "H5Aopen")) << missing;
}

TEST_F(H5Test, DoubleAttributeIsNotReadAsInteger) {
  h5::File f = h5::File::create(path("attr_double.h5"));
  f.root().set_attr("x", 2.5);
  EXPECT_EQ(f.root().attr_double("x"), 2.5);
  EXPECT_TRUE(contains(error_of([&] { f.root().attr_int("x"); }), "not an integer"));
}

// ---------------------------------------------------------------- groups

TEST_F(H5Test, NestedGroupsPathsAndChildrenOrder) {
  h5::File f = h5::File::create(path("groups.h5"));
  h5::Group& root = f.root();
  EXPECT_EQ(root.path(), "/");
  h5::Group c = root.create_group("a/b/c");
  EXPECT_EQ(c.path(), "/a/b/c");
  EXPECT_TRUE(root.exists("a"));
  EXPECT_TRUE(root.exists("a/b/c"));
  EXPECT_FALSE(root.exists("a/x"));
  EXPECT_FALSE(root.exists("a/x/y"));  // missing intermediate: false, not an error
  root.write("points/params/n", std::vector<std::int64_t>{16, 64});  // intermediate groups made
  EXPECT_TRUE(root.exists("points/params/n"));
  EXPECT_FALSE(root.exists("points/params/n/deeper"));  // through a dataset: false
  EXPECT_EQ(root.open_group("points").open_group("params").path(), "/points/params");
  EXPECT_EQ(root.open_group("points/params").read<std::int64_t>("n"),
            (std::vector<std::int64_t>{16, 64}));

  h5::Group arrays = root.create_group("arrays");
  for (const char* name : {"zeta", "alpha", "Beta", "m10", "m2"}) arrays.create_group(name);
  arrays.write("data", std::vector<double>{1.0});
  EXPECT_EQ(arrays.children(),
            (std::vector<std::string>{"Beta", "alpha", "data", "m10", "m2", "zeta"}));
  EXPECT_EQ(root.children(), (std::vector<std::string>{"a", "arrays", "points"}));
  EXPECT_TRUE(root.create_group("empty").children().empty());

  EXPECT_EQ(root.require_group("arrays").path(), "/arrays");     // existing: opened
  EXPECT_EQ(root.require_group("fresh/x").path(), "/fresh/x");   // missing: created
  std::string twice = error_of([&] { root.create_group("arrays"); });
  EXPECT_TRUE(contains(twice, "/arrays")) << twice;
  std::string again = error_of([&] { root.write("points/params/n", std::vector<double>{1}); });
  EXPECT_TRUE(contains(again, "/points/params/n")) << again;
  std::string not_group = error_of([&] { root.open_group("points/params/n"); });
  EXPECT_TRUE(contains(not_group, "/points/params/n")) << not_group;
}

TEST_F(H5Test, MovedFromGroupAndClosedFileThrowCleanly) {
  const std::string file = path("moves.h5");
  h5::File f = h5::File::create(file);
  h5::Group g = f.root().create_group("g");
  h5::Group moved = std::move(g);
  EXPECT_FALSE(g.valid());
  EXPECT_TRUE(moved.valid());
  h5::File other = std::move(f);
  EXPECT_FALSE(f.is_open());
  EXPECT_EQ(other.filename(), file);
  other.root().write_scalar("x", 1.0);
  other.close();
  other.close();  // idempotent
  EXPECT_FALSE(moved.valid());  // the strong close closed it
  error_of([&] { moved.write_scalar("y", 2.0); });
  error_of([&] { other.root().exists("x"); });
}

// ---------------------------------------------------------------- errors

TEST_F(H5Test, ErrorsNameTheObjectAndCarryTheStack) {
  const std::string missing_file = path("missing.h5");
  std::string e1 = error_of([&] { h5::File::open_read(missing_file); });
  EXPECT_TRUE(contains(e1, missing_file)) << e1;
  EXPECT_TRUE(contains(e1, "HDF5 error stack")) << e1;
  EXPECT_TRUE(contains(e1, "H5Fopen")) << e1;

  const std::string text_file = path("not_hdf5.h5");
  std::ofstream(text_file) << "this is not an HDF5 file\n";
  std::string e2 = error_of([&] { h5::File::open_rw(text_file); });
  EXPECT_TRUE(contains(e2, text_file)) << e2;
  EXPECT_TRUE(contains(e2, "H5Fopen")) << e2;

  const std::string file = path("errors.h5");
  h5::File f = h5::File::create(file);
  h5::Group g = f.root().create_group("grp");
  g.write_string("name", "softmax");
  std::string e3 = error_of([&] { g.read<double>("missing"); });
  EXPECT_TRUE(contains(e3, "'/grp/missing'")) << e3;
  EXPECT_TRUE(contains(e3, file)) << e3;
  EXPECT_TRUE(contains(e3, "H5Dopen")) << e3;

  std::string e4 = error_of([&] { g.read<double>("name"); });  // string read as double
  EXPECT_TRUE(contains(e4, "'/grp/name'")) << e4;
  EXPECT_TRUE(contains(e4, "H5Dread")) << e4;
  std::cout << "example message:\n" << e4;

  g.write_strings("no_names", {});
  std::string e5 = error_of([&] { g.read<double>("no_names"); });  // empty, still not numeric
  EXPECT_TRUE(contains(e5, "not numeric")) << e5;
  g.write("values", std::vector<double>{1, 2});
  EXPECT_TRUE(contains(error_of([&] { g.read_string("values"); }), "'/grp/values'"));
  EXPECT_TRUE(contains(error_of([&] { g.read_scalar<double>("values"); }), "2 elements"));
  EXPECT_TRUE(contains(error_of([&] { h5::File::create(path("no/such/dir/x.h5")); }), "no/such"));
}

TEST(SilenceErrors, SilencesAndRestoresHdf5Printing) {
  const char* missing = "/nonexistent-dir-sharp/missing.h5";
  {
    StderrCapture capture;
    hid_t id = H5Fopen(missing, H5F_ACC_RDONLY, H5P_DEFAULT);
    EXPECT_LT(id, 0);
    EXPECT_TRUE(contains(capture.finish(), "HDF5-DIAG"));  // HDF5 does print by default
  }
  {
    StderrCapture capture;
    {
      h5::SilenceErrors quiet;
      h5::SilenceErrors nested;
      EXPECT_LT(H5Fopen(missing, H5F_ACC_RDONLY, H5P_DEFAULT), 0);
    }
    EXPECT_EQ(capture.finish(), "");
  }
  {
    StderrCapture capture;
    EXPECT_LT(H5Fopen(missing, H5F_ACC_RDONLY, H5P_DEFAULT), 0);
    EXPECT_TRUE(contains(capture.finish(), "HDF5-DIAG"));  // restored after the guards
  }
  H5Eclear2(H5E_DEFAULT);
}

// ---------------------------------------------------------------- AtomicFile

TEST_F(H5Test, AtomicFileCommitLeavesOnlyTheFinalFile) {
  const std::string final_path = path("result.h5");
  {
    h5::AtomicFile out(final_path);
    EXPECT_TRUE(contains(out.temp_path(), final_path + ".tmp." + std::to_string(::getpid()) + "."));
    EXPECT_TRUE(h5::is_atomic_temp_name(fs::path(out.temp_path()).filename()));
    EXPECT_TRUE(fs::exists(out.temp_path()));
    EXPECT_FALSE(fs::exists(final_path));
    h5::Group points = out.root().create_group("points");  // still alive at commit
    points.write("x", std::vector<double>{1, 2, 3});
    out.root().set_attr("complete", std::int64_t{1});
    out.commit();
    EXPECT_FALSE(fs::exists(out.temp_path()));
  }
  EXPECT_EQ(listing(), std::vector<std::string>{"result.h5"});
  EXPECT_TRUE(h5::is_complete(final_path));
  h5::File f = h5::File::open_read(final_path);
  EXPECT_EQ(f.root().read<double>("points/x"), (std::vector<double>{1, 2, 3}));
}

TEST_F(H5Test, AtomicFileWithoutCommitLeavesTheOldFileAlone) {
  const std::string final_path = path("result.h5");
  {
    h5::AtomicFile old_version(final_path);
    old_version.root().set_attr("version", std::int64_t{1});
    old_version.commit();
  }
  std::string temp;
  try {
    h5::AtomicFile out(final_path);
    temp = out.temp_path();
    out.root().set_attr("version", std::int64_t{2});
    out.root().write("partial", std::vector<double>(1000, 1.0));
    throw std::runtime_error("the point failed half-way");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(temp.empty());
  EXPECT_FALSE(fs::exists(temp));
  EXPECT_EQ(listing(), std::vector<std::string>{"result.h5"});
  h5::File f = h5::File::open_read(final_path);
  EXPECT_EQ(f.root().attr_int("version"), 1);
  EXPECT_FALSE(f.root().exists("partial"));

  // Two AtomicFiles for the same target get distinct temporaries.
  h5::AtomicFile a(path("other.h5")), b(path("other.h5"));
  EXPECT_NE(a.temp_path(), b.temp_path());
}

TEST(AtomicTempName, RecognisesOnlyOurPattern) {
  EXPECT_TRUE(h5::is_atomic_temp_name("abc.h5.tmp.1234.0"));
  EXPECT_TRUE(h5::is_atomic_temp_name("x.tmp.1.22"));
  EXPECT_FALSE(h5::is_atomic_temp_name("abc.h5"));
  EXPECT_FALSE(h5::is_atomic_temp_name("abc.h5.tmp.12a4.0"));
  EXPECT_FALSE(h5::is_atomic_temp_name("abc.h5.tmp.1234"));
  EXPECT_FALSE(h5::is_atomic_temp_name("abc.h5.tmp.1234."));
  EXPECT_FALSE(h5::is_atomic_temp_name(".tmp.1.2"));
}

// ---------------------------------------------------------------- is_complete

TEST_F(H5Test, IsCompleteOnlyForCompleteOne) {
  auto make = [&](const std::string& name, auto set) {
    h5::File f = h5::File::create(path(name));
    f.root().write("data", std::vector<double>(4096, 0.5));
    set(f.root());
    f.close();
    return path(name);
  };
  const std::string complete = make("complete.h5", [](h5::Group& r) {
    r.set_attr("complete", std::int64_t{1});
  });
  const std::string absent = make("absent.h5", [](h5::Group&) {});
  const std::string zero = make("zero.h5", [](h5::Group& r) { r.set_attr("complete", std::int64_t{0}); });
  const std::string text = make("text.h5", [](h5::Group& r) { r.set_attr("complete", "1"); });
  const std::string truncated = path("truncated.h5");
  fs::copy_file(complete, truncated);
  fs::resize_file(truncated, fs::file_size(truncated) / 2);
  std::ofstream(path("garbage.h5")) << "not hdf5";

  StderrCapture capture;
  EXPECT_TRUE(h5::is_complete(complete));
  EXPECT_FALSE(h5::is_complete(absent));
  EXPECT_FALSE(h5::is_complete(zero));
  EXPECT_FALSE(h5::is_complete(text));
  EXPECT_FALSE(h5::is_complete(truncated));
  EXPECT_FALSE(h5::is_complete(path("garbage.h5")));
  EXPECT_FALSE(h5::is_complete(path("missing.h5")));
  EXPECT_FALSE(h5::is_complete(dir_.string()));  // a directory
  EXPECT_EQ(capture.finish(), "");
}

}  // namespace
