// The one reader of result files (runners/result_reader.hpp), on a file the runner itself writes
// from a small fake experiment: ids, params, metrics, named arrays and attributes come back as
// written; unusable files, unknown ids and arrays, and files of other experiments are refused with
// BadInput naming the file; point references expand and check through it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <hdf5.h>

#include "core/errors.hpp"
#include "h5/h5.hpp"
#include "runners/exit_status.hpp"
#include "runners/local_runner.hpp"
#include "runners/options.hpp"
#include "runners/result_checksum.hpp"
#include "runners/result_reader.hpp"

using namespace sharp;
using namespace sharp::runner;
namespace fs = std::filesystem;

namespace {

class TinyExperiment final : public Experiment {
public:
  std::string name() const override { return "tiny"; }
  std::string summary() const override { return "A tiny experiment for the reader's tests."; }
  std::vector<ParamSpec> parameters() const override {
    return {integer_param("n", "2,3", "items", 1), text_param("law", "flat", "law", {"flat", "steep"})};
  }
  std::vector<OutputSpec> outputs() const override {
    return {metric_real("half", "", "n / 2"), metric_integer("square", "", "n^2"),
            array_real("param.w", {"n", "2"}, "", "a matrix"), array_integer("param.idx", {"n"}, "", "indices"),
            array_real("other", {"1"}, "", "not a parameter")};
  }
  Record run(const Point& p, PointContext&) const override {
    const std::int64_t n = p.integer("n");
    Record r;
    r.set("half", double(n) / 2);
    r.set_count("square", n * n);
    std::vector<double> w(static_cast<std::size_t>(2 * n));
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = double(i) + 0.5;
    r.set_array("param.w", w, {std::size_t(n), 2});
    std::vector<std::int64_t> idx(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) idx[std::size_t(i)] = 10 * i;
    r.set_array("param.idx", idx);
    r.set_array("other", std::vector<double>{1.0});
    return r;
  }
};

class ResultReader : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sharp-reader-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    path_ = (dir_ / "tiny.h5").string();
    TinyExperiment e;
    std::vector<std::string> args = {"sharp-tiny", "--out", path_, "--quiet", "--threads", "1"};
    std::vector<const char*> argv;
    for (auto& a : args) argv.push_back(a.c_str());
    const Invocation inv = parse_command_line(e, int(argv.size()), argv.data());
    ASSERT_EQ(run_local(e, *inv.grid, inv.options), kDone);
    ids_ = inv.grid->points().size() == 2 ? std::vector<std::string>{inv.grid->points()[0].id, inv.grid->points()[1].id}
                                          : std::vector<std::string>{};
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string error_of(const std::function<void()>& f) {
    try {
      f();
    } catch (const BadInput& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
  std::string path_;
  std::vector<std::string> ids_;
};

}  // namespace

TEST_F(ResultReader, ReturnsWhatTheRunnerWrote) {
  const ResultFile f = ResultFile::open(path_, {"tiny"});
  EXPECT_EQ(f.experiment(), "tiny");
  EXPECT_EQ(f.ids(), ids_);
  const std::string& id = ids_[1];  // n = 3
  const auto params = f.params(id);
  EXPECT_EQ(std::get<std::int64_t>(params.at("n")), 3);
  EXPECT_EQ(std::get<std::string>(params.at("law")), "flat");
  EXPECT_EQ(std::get<std::int64_t>(params.at("seed")), 1);
  const auto metrics = f.metrics(id);
  EXPECT_EQ(std::get<double>(metrics.at("half")), 1.5);
  EXPECT_EQ(std::get<std::int64_t>(metrics.at("square")), 9);
  EXPECT_EQ(f.arrays(id), (std::vector<std::string>{"other", "param.idx", "param.w"}));
  const Array w = f.array(id, "param.w");
  EXPECT_EQ(w.shape, (std::vector<std::size_t>{3, 2}));
  EXPECT_EQ(std::get<std::vector<double>>(w.data)[5], 5.5);
  const auto params_only = f.arrays_with_prefix(id, "param.");
  ASSERT_EQ(params_only.size(), 2u);
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(params_only.at("idx").data), (std::vector<std::int64_t>{0, 10, 20}));
  EXPECT_EQ(f.attribute("experiment"), "tiny");
  EXPECT_EQ(f.attribute("points"), "2");
  EXPECT_EQ(f.attribute("scale"), "custom");
  EXPECT_FALSE(f.has_attribute("nonsense"));
  EXPECT_NE(f.config().find("n = 2,3"), std::string::npos);
}

TEST_F(ResultReader, RefusesWhatItCannotUseNamingTheFile) {
  EXPECT_EQ(error_of([&] { ResultFile::open(path_, {"train-max", "train-text"}); }),
            "'" + path_ + "' holds experiment 'tiny', not train-max or train-text");
  const std::string missing = (dir_ / "missing.h5").string();
  EXPECT_EQ(error_of([&] { ResultFile::open(missing); }), "'" + missing + "' does not exist");
  const std::string junk = (dir_ / "junk.h5").string();
  std::ofstream(junk) << "not hdf5";
  EXPECT_NE(error_of([&] { ResultFile::open(junk); }).find("is not a complete result file"), std::string::npos);
  const ResultFile f = ResultFile::open(path_);
  EXPECT_EQ(error_of([&] { f.params("0000000000000000"); }), "'" + path_ + "' has no point with id '0000000000000000'");
  EXPECT_NE(error_of([&] { f.array(ids_[0], "nope"); }).find("has no array 'nope'"), std::string::npos);
  EXPECT_NE(error_of([&] { f.attribute("nope"); }).find("no root attribute 'nope'"), std::string::npos);
}

TEST_F(ResultReader, PointReferencesExpandAndCheckThroughTheReader) {
  const ParamSpec p = point_reference_param("checkpoint", "x.h5", "models", {"tiny"});
  EXPECT_EQ(p.expand(path_), (std::vector<std::string>{path_ + "#" + ids_[0], path_ + "#" + ids_[1]}));
  EXPECT_EQ(p.expand(path_ + "#abc"), std::vector<std::string>{path_ + "#abc"});
  EXPECT_FALSE(p.check(Value(path_ + "#" + ids_[1])).has_value());
  EXPECT_EQ(p.check(Value(path_ + "#abc")).value_or(""), "names no point of '" + path_ + "'");
  const ParamSpec other = point_reference_param("checkpoint", "x.h5", "models", {"train-max"});
  EXPECT_NE(error_of([&] { other.expand(path_); }).find("cannot be read: '" + path_ + "' holds experiment 'tiny'"),
            std::string::npos);
  const ResultPoint rp = open_point_reference(path_ + "#" + ids_[0], {"tiny"});
  EXPECT_EQ(rp.id, ids_[0]);
  EXPECT_EQ(std::get<double>(rp.file.metrics(rp.id).at("half")), 1.0);
  EXPECT_EQ(split_point_reference("a#b.h5#c"), (std::pair<std::string, std::string>{"a#b.h5", "c"}));
}

namespace {

// Flips one bit of the first value of the (contiguous) dataset `name` in the file's bytes, in place:
// the damage a disk does after the merge.
void flip_first_value(const std::string& path, const std::string& name) {
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t dataset = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  const haddr_t offset = H5Dget_offset(dataset);
  H5Dclose(dataset);
  H5Fclose(file);
  ASSERT_NE(offset, HADDR_UNDEF);
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(std::streamoff(offset + 6));
  char byte = 0;
  f.read(&byte, 1);
  byte = char(byte ^ 0x40);  // an exponent bit of a little-endian double
  f.seekp(std::streamoff(offset + 6));
  f.write(&byte, 1);
}

// Changes the first value of a numeric column through HDF5 (a careless edit of the file).
void edit_first_value(const std::string& path, const std::string& name) {
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t dataset = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  std::vector<double> v(64);
  H5Dread(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
  v[0] += 1;
  ASSERT_GE(H5Dwrite(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), 0);
  H5Dclose(dataset);
  H5Fclose(file);
}

}  // namespace

TEST_F(ResultReader, AMergedFileCarriesAChecksumThatItsReaderVerifies) {
  {
    const ResultFile f = ResultFile::open(path_);
    EXPECT_EQ(f.attribute("checksum").size(), 64u);
    EXPECT_EQ(f.note(), "");
  }
  edit_first_value(path_, "points/half");
  EXPECT_EQ(error_of([&] { ResultFile::open(path_); }),
            "'" + path_ + "': checksum mismatch: the file was modified or damaged after it was written; rerun to regenerate");
}

TEST_F(ResultReader, ADamagedArrayIsRefusedToo) {
  flip_first_value(path_, "arrays/" + ids_[1] + "/param.w");
  EXPECT_NE(error_of([&] { ResultFile::open(path_); }).find("checksum mismatch"), std::string::npos);
}

TEST_F(ResultReader, AFileWithoutAChecksumIsReadWithANote) {
  {
    h5::File f = h5::File::open_rw(path_);
    ASSERT_GE(H5Adelete(f.root().id(), "checksum"), 0);
  }
  const ResultFile f = ResultFile::open(path_);
  EXPECT_EQ(f.note(), kNoChecksum);
  EXPECT_EQ(f.ids(), ids_);
}

TEST_F(ResultReader, ARunOnADamagedUpToDateFileRefusesIt) {
  edit_first_value(path_, "points/square");
  TinyExperiment e;
  std::vector<std::string> args = {"sharp-tiny", "--out", path_, "--quiet", "--threads", "1"};
  std::vector<const char*> argv;
  for (auto& a : args) argv.push_back(a.c_str());
  const Invocation inv = parse_command_line(e, int(argv.size()), argv.data());
  const std::string refused = error_of([&] { run_local(e, *inv.grid, inv.options); });
  EXPECT_NE(refused.find("checksum mismatch"), std::string::npos) << refused;
  EXPECT_NE(refused.find("--overwrite"), std::string::npos) << refused;
  args.push_back("--overwrite");
  argv.clear();
  for (auto& a : args) argv.push_back(a.c_str());
  const Invocation again = parse_command_line(e, int(argv.size()), argv.data());
  ASSERT_EQ(run_local(e, *again.grid, again.options), kDone);
  EXPECT_EQ(ResultFile::open(path_).note(), "");
}
