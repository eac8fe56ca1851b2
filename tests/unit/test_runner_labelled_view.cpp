// The labelled view's rules (runners/labelled_view.hpp) on files written by hand: a Cartesian
// product gets one dimension per multi-valued parameter, anything else `point`; names taken by a
// parameter or a metric get .metric / .array; units come from the declarations (templates too);
// arrays padded, or left out when their rank differs. The end-to-end side (xarray opening files the
// binaries write) is python/tests/test_results.py.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <numeric>
#include <filesystem>
#include <string>
#include <vector>

#include "h5/h5.hpp"
#include "runners/labelled_view.hpp"

namespace fs = std::filesystem;
namespace h5 = sharp::h5;
using namespace sharp::runner;

namespace {

class LabelledView : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sharp-test-labelled-view-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

// /points of P points with integer parameters a and b (one column each) and a metric m = row index.
void write_points(h5::Group& root, const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
  std::vector<std::string> ids;
  std::vector<double> m;
  for (std::size_t r = 0; r < a.size(); ++r) {
    char id[24];   // (not "p" + std::to_string(r): a -Wrestrict false positive of GCC 12 at -O3)
    std::snprintf(id, sizeof id, "p%zu", r);
    ids.push_back(id);
    m.push_back(double(r));
  }
  root.write_strings("points/id", ids);
  root.write("points/params/a", a);
  root.write("points/params/b", b);
  root.write("points/m", m);
  root.create_group("arrays");
}

std::string dimension_name(const h5::Group& root, const std::string& variable, unsigned axis) {
  std::string name;
  const hid_t d = H5Dopen2(root.id(), variable.c_str(), H5P_DEFAULT);
  H5DSiterate_scales(d, axis, nullptr, [](hid_t, unsigned, hid_t scale, void* out) -> herr_t {
    char text[256] = {};
    H5Iget_name(scale, text, sizeof text);
    *static_cast<std::string*>(out) = text + 1;   // without the leading '/'
    return 1;
  }, &name);
  H5Dclose(d);
  return name;
}

TEST_F(LabelledView, CartesianProductGetsOneDimensionPerParameter) {
  h5::File f = h5::File::create(path("c.h5"));
  write_points(f.root(), {1, 1, 1, 2, 2, 2}, {5, 6, 7, 5, 6, 7});
  write_labelled_view(f.root(), {metric_real("m", "nats", "the row")});
  std::vector<std::size_t> shape;
  EXPECT_EQ(f.root().read<double>("m", &shape), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(shape, (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(dimension_name(f.root(), "m", 0), "a");
  EXPECT_EQ(dimension_name(f.root(), "m", 1), "b");
  EXPECT_EQ(f.root().read<std::int64_t>("b"), (std::vector<std::int64_t>{5, 6, 7}));
  EXPECT_EQ(f.root().read_strings("id")[4], "p4");
  EXPECT_FALSE(f.root().has_attr("labelled_view_omits"));
}

TEST_F(LabelledView, AxesOrderedByHowOftenTheyChange) {
  // Every combination with a varying fastest: a product with b as the first (slowest) axis.
  h5::File f = h5::File::create(path("o.h5"));
  write_points(f.root(), {1, 2, 1, 2}, {5, 5, 6, 6});
  write_labelled_view(f.root(), {});
  EXPECT_EQ(f.root().shape("m"), (std::vector<std::size_t>{2, 2}));
  EXPECT_EQ(dimension_name(f.root(), "m", 0), "b");
  EXPECT_EQ(dimension_name(f.root(), "m", 1), "a");
}

TEST_F(LabelledView, AnythingElseGetsAPointDimension) {
  for (const auto& [a, b] : std::vector<std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>>{
           {{1, 1, 2}, {5, 6, 5}},           // not every combination
           {{1, 2, 2, 1}, {5, 5, 6, 6}},     // every combination, in no axis order
           {{1}, {5}}}) {                    // one point
    const std::string file = path(std::to_string(a.size()) + "points.h5");
    h5::File f = h5::File::create(file);
    write_points(f.root(), a, b);
    write_labelled_view(f.root(), {});
    EXPECT_EQ(f.root().shape("m"), (std::vector<std::size_t>{a.size()})) << file;
    EXPECT_EQ(dimension_name(f.root(), "m", 0), "point");
    EXPECT_EQ(f.root().read<std::int64_t>("a"), a);   // parameters along point
    f.close();
    fs::remove(file);
  }
}

TEST_F(LabelledView, NamesUnitsPaddingAndOmissions) {
  h5::File f = h5::File::create(path("n.h5"));
  h5::Group& root = f.root();
  write_points(root, {1, 2}, {5, 5});
  root.write("points/b", std::vector<double>{8, 9});               // a metric named like a parameter
  root.write("points/acc.x", std::vector<double>{0.5, 0.75});
  root.write("arrays/p0/m", std::vector<double>{1, 2, 3});          // an array named like a metric
  root.write("arrays/p1/m", std::vector<double>{4});
  root.write("arrays/p0/k", std::vector<std::int64_t>{1, 2});
  root.write("arrays/p1/k", std::vector<std::int64_t>{3, 4});
  const std::vector<double> flat{1, 2, 3, 4};
  root.write("arrays/p0/w", flat.data(), {4});                      // rank 1 at one point, 2 at the other
  root.write("arrays/p1/w", flat.data(), {2, 2});
  write_labelled_view(root, {metric_real("acc.<normaliser>", "fraction", "accuracy"),
                             array_real("m", {"a"}, "", "per a"), array_integer("k", {"*"}, "", "k")});
  EXPECT_EQ(root.read<double>("b.metric"), (std::vector<double>{8, 9}));
  const std::vector<double> m = root.read<double>("m.array");
  EXPECT_EQ(root.shape("m.array"), (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(m[3], 4.0);
  EXPECT_TRUE(std::isnan(m[4]) && std::isnan(m[5]));
  EXPECT_EQ(dimension_name(root, "m.array", 1), "a_index");
  EXPECT_EQ(dimension_name(root, "k", 1), "k_dim0");
  EXPECT_EQ(root.read<std::int64_t>("k"), (std::vector<std::int64_t>{1, 2, 3, 4}));
  EXPECT_FALSE(root.exists("w"));
  EXPECT_EQ(root.attr_string("labelled_view_omits"), "w (its rank differs between points)");
  // Units and meanings from the declarations, templates matched; "" is a pure number, "1".
  const hid_t acc = H5Dopen2(root.id(), "acc.x", H5P_DEFAULT), undeclared = H5Dopen2(root.id(), "m", H5P_DEFAULT);
  EXPECT_GT(H5Aexists(acc, "units"), 0);
  EXPECT_GT(H5Aexists(acc, "long_name"), 0);
  EXPECT_EQ(H5Aexists(undeclared, "units"), 0);
  H5Dclose(acc), H5Dclose(undeclared);
  EXPECT_EQ(root.read<double>("acc.x"), (std::vector<double>{0.5, 0.75}));
}

// Small blocks are copied (a virtual mapping per point would cost more than the data), larger ones
// stay virtual; both read the same values, padding included, with the stored element type.
TEST_F(LabelledView, SmallArraysAreCopiedLargeOnesStayVirtual) {
  h5::File f = h5::File::create(path("c.h5"));
  h5::Group& root = f.root();
  write_points(root, {1, 2}, {5, 5});
  std::vector<double> big(65);
  std::iota(big.begin(), big.end(), 0.0);
  root.write("arrays/p0/small", std::vector<double>{1, 2, 3, 4, 5, 6}.data(), {2, 3});
  root.write("arrays/p1/small", std::vector<double>{7, 8}.data(), {1, 2});      // padded
  root.write("arrays/p0/count", std::vector<std::int64_t>{1, 2});
  root.write("arrays/p1/count", std::vector<std::int64_t>{3, 4});
  root.write("arrays/p0/single", std::vector<float>{0.5f});
  root.write("arrays/p1/single", std::vector<float>{1.5f});
  root.write("arrays/p0/big", big);                                               // 65 > 64 values
  root.write("arrays/p1/big", big);
  root.write("arrays/p0/mixed", std::vector<double>{1});                          // f8 at one point,
  root.write("arrays/p1/mixed", std::vector<float>{2});                           // f4 at the other
  write_labelled_view(root, {});
  EXPECT_FALSE(root.is_virtual("small"));
  EXPECT_FALSE(root.is_virtual("count"));
  EXPECT_FALSE(root.is_virtual("single"));
  EXPECT_TRUE(root.is_virtual("big"));
  EXPECT_TRUE(root.is_virtual("mixed"));
  EXPECT_EQ(root.shape("small"), (std::vector<std::size_t>{2, 2, 3}));
  const std::vector<double> small = root.read<double>("small");
  EXPECT_EQ(std::vector<double>(small.begin(), small.begin() + 6), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(small[6], 7.0);
  EXPECT_EQ(small[7], 8.0);
  for (std::size_t i = 8; i < 12; ++i) EXPECT_TRUE(std::isnan(small[i])) << i;
  EXPECT_EQ(root.read<std::int64_t>("count"), (std::vector<std::int64_t>{1, 2, 3, 4}));
  std::string code;
  root.read_raw("single", &code);
  EXPECT_EQ(code, "f4");
  EXPECT_EQ(root.read<float>("single"), (std::vector<float>{0.5f, 1.5f}));
  EXPECT_EQ(root.read<double>("big")[64 + 65], 64.0);
}

}  // namespace
