// The HDF5 layer's views: virtual datasets (a column read in another shape, blocks of several
// sources, fill where no source reaches, the file moved after writing), dimension scales and
// dataset attributes; the sources' values are untouched and carry no attribute of the view.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "h5/h5.hpp"

namespace fs = std::filesystem;
namespace h5 = sharp::h5;

namespace {

class H5ViewTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sharp-test-h5-views-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

int attribute_count(const h5::Group& g, const std::string& dataset) {
  const hid_t d = H5Dopen2(g.id(), dataset.c_str(), H5P_DEFAULT);
  H5O_info_t info;
  H5Oget_info2(d, &info, H5O_INFO_NUM_ATTRS);
  H5Dclose(d);
  return static_cast<int>(info.num_attrs);
}

TEST_F(H5ViewTest, ColumnReadInAnotherShapeWithoutACopy) {
  {
    h5::File f = h5::File::create(path("a.h5"));
    f.root().write("points/m", std::vector<double>{0, 1, 2, 3, 4, 5});
    f.root().write_strings("points/id", {"a", "b", "c", "d", "e", "f"});
    f.root().write_virtual("m", {2, 3}, {{"/points/m", {0, 0}, {2, 3}}});
    f.root().write_virtual("id", {3, 2}, {{"/points/id", {0, 0}, {3, 2}}});
  }
  fs::rename(path("a.h5"), path("moved.h5"));   // "." in the mapping: the file itself, wherever it is
  h5::File f = h5::File::open_read(path("moved.h5"));
  std::vector<std::size_t> shape;
  EXPECT_EQ(f.root().read<double>("m", &shape), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(shape, (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(f.root().read_strings("id"), (std::vector<std::string>{"a", "b", "c", "d", "e", "f"}));
  EXPECT_EQ(attribute_count(f.root(), "points/m"), 0);
}

TEST_F(H5ViewTest, BlocksOfSeveralSourcesAndFillWhereNoneReaches) {
  h5::File f = h5::File::create(path("b.h5"));
  f.root().write("arrays/p0/x", std::vector<double>{1, 2, 3});
  f.root().write("arrays/p1/x", std::vector<double>{4});
  f.root().write("arrays/p0/k", std::vector<std::int64_t>{7, 8});
  f.root().write_virtual("x", {3, 3}, {{"/arrays/p0/x", {0, 0}, {1, 3}}, {"/arrays/p1/x", {2, 0}, {1, 1}}});
  f.root().write_virtual("k", {2, 2}, {{"/arrays/p0/k", {1, 0}, {1, 2}}});
  const std::vector<double> x = f.root().read<double>("x");
  EXPECT_EQ(std::vector<double>(x.begin(), x.begin() + 3), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(x[6], 4.0);
  for (int i : {3, 4, 5, 7, 8}) EXPECT_TRUE(std::isnan(x[i])) << i;
  EXPECT_EQ(f.root().read<std::int64_t>("k"),
            (std::vector<std::int64_t>{h5::kMissingInteger, h5::kMissingInteger, 7, 8}));
  // A block that does not hold as many elements as its source is refused.
  EXPECT_THROW(f.root().write_virtual("bad", {2, 2}, {{"/arrays/p0/x", {0, 0}, {1, 2}}}), h5::Error);
  EXPECT_THROW(f.root().write_virtual("none", {2}, {}), h5::Error);
}

TEST_F(H5ViewTest, DimensionScalesAndDatasetAttributes) {
  h5::File f = h5::File::create(path("c.h5"));
  h5::Group& root = f.root();
  root.write("n", std::vector<std::int64_t>{16, 64});
  root.make_dimension_scale("n", "n");
  root.create_dimension("sample", 3);
  root.write("points/v", std::vector<double>{1, 2, 3, 4, 5, 6});
  root.write_virtual("v", {2, 3}, {{"/points/v", {0, 0}, {2, 3}}});
  root.attach_dimension_scale("v", "n", 0);
  root.attach_dimension_scale("v", "sample", 1);
  root.set_dataset_attr("v", "units", std::string("nats"));
  root.set_dataset_attr("v", "units", std::string("bits"));   // overwrites
  root.set_dataset_attr("v", "_FillValue", h5::kMissingReal);
  root.set_dataset_attr("v", "count", std::int64_t{3});
  const hid_t v = H5Dopen2(root.id(), "v", H5P_DEFAULT), n = H5Dopen2(root.id(), "n", H5P_DEFAULT),
              s = H5Dopen2(root.id(), "sample", H5P_DEFAULT);
  EXPECT_GT(H5DSis_scale(n), 0);
  EXPECT_GT(H5DSis_scale(s), 0);
  EXPECT_GT(H5DSis_attached(v, n, 0), 0);
  EXPECT_GT(H5DSis_attached(v, s, 1), 0);
  char label[128] = {};
  H5DSget_scale_name(s, label, sizeof label);
  EXPECT_EQ(std::string(label), "This is a netCDF dimension but not a netCDF variable.         3");
  H5Dclose(v), H5Dclose(n), H5Dclose(s);
  EXPECT_EQ(root.read<double>("points/v"), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(attribute_count(root, "points/v"), 0);   // the source is not labelled, only the view
  EXPECT_THROW(root.set_dataset_attr("missing", "units", std::string("x")), h5::Error);
  EXPECT_THROW(root.attach_dimension_scale("v", "missing", 0), h5::Error);
}

}  // namespace
