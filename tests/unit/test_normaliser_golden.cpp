// Golden test (docs/science.md#reference-implementation): every case and spec of ../shared/golden/normalisers.h5, an independent
// implementation's forward outputs in double, must match within 1e-9 absolute; so must the per-row
// entropy of softmax at beta = 1 and the adaptive beta. Read through the project's HDF5 layer; the
// per-dataset 'spec' attribute through the C API (the layer reads group attributes only).
#include <hdf5.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "h5/h5.hpp"
#include "normalisers/normaliser.hpp"

namespace {

const std::string kGolden = std::string(SHARP_SHARED_DIR) + "/golden/normalisers.h5";

// The string attribute `attr` of dataset `dataset` in `group`, via the C API with every call checked.
std::string dataset_attr_string(const sharp::h5::Group& group, const std::string& dataset,
                                const std::string& attr) {
  sharp::h5::SilenceErrors quiet;
  const hid_t a = H5Aopen_by_name(group.id(), dataset.c_str(), attr.c_str(), H5P_DEFAULT, H5P_DEFAULT);
  if (a < 0) throw std::runtime_error("cannot open attribute " + attr + " of " + group.path() + "/" + dataset);
  const hid_t type = H5Aget_type(a);
  std::string value;
  bool ok = type >= 0 && H5Tget_class(type) == H5T_STRING;
  if (ok && H5Tis_variable_str(type) > 0) {
    char* text = nullptr;
    const hid_t mem = H5Tcopy(H5T_C_S1);
    ok = mem >= 0 && H5Tset_size(mem, H5T_VARIABLE) >= 0 && H5Tset_cset(mem, H5Tget_cset(type)) >= 0 &&
         H5Aread(a, mem, &text) >= 0 && text != nullptr;
    if (ok) value = text;
    if (text) H5free_memory(text);
    if (mem >= 0) H5Tclose(mem);
  } else if (ok) {
    const std::size_t size = H5Tget_size(type);
    std::vector<char> buf(size + 1, '\0');
    ok = H5Aread(a, type, buf.data()) >= 0;
    value.assign(buf.data());
  }
  if (type >= 0) H5Tclose(type);
  H5Aclose(a);
  if (!ok) throw std::runtime_error("cannot read string attribute " + attr + " of " + dataset);
  return value;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(a[i] - b[i]);
    worst = std::isnan(d) ? INFINITY : std::max(worst, d);
  }
  return worst;
}

TEST(NormaliserGolden, FileExistsAndDescribesItself) {
  ASSERT_TRUE(std::filesystem::exists(kGolden)) << "golden file missing: " << kGolden;
  auto file = sharp::h5::File::open_read(kGolden);
  EXPECT_NE(file.root().attr_string("description").find("normaliser"), std::string::npos);
}

TEST(NormaliserGolden, EveryCaseAndSpecMatches) {
  ASSERT_TRUE(std::filesystem::exists(kGolden)) << "golden file missing: " << kGolden;
  auto file = sharp::h5::File::open_read(kGolden);
  const sharp::h5::Group cases = file.root().open_group("cases");
  std::set<std::string> specs_seen;
  std::size_t outputs_checked = 0;
  double worst = 0.0;
  std::string worst_where;
  const std::vector<std::string> names = cases.children();
  ASSERT_GE(names.size(), 20u);
  for (const std::string& case_name : names) {
    SCOPED_TRACE("case " + case_name);
    const sharp::h5::Group g = cases.open_group(case_name);
    std::vector<std::size_t> shape;
    const std::vector<double> logits = g.read<double>("logits", &shape);
    ASSERT_EQ(shape.size(), 2u);
    const std::size_t rows = shape[0], n = shape[1];

    const std::vector<double> entropy = g.read<double>("entropy");
    const std::vector<double> beta = g.read<double>("adaptive_beta");
    for (std::size_t r = 0; r < rows; ++r) {
      const auto ab = sharp::norm::adaptive_row_beta(logits.data() + r * n, n);
      EXPECT_NEAR(ab.entropy, entropy[r], 1e-9) << "row " << r;
      EXPECT_NEAR(ab.beta, beta[r], 1e-9) << "row " << r;
    }

    for (const std::string& ds : g.children()) {
      if (ds.rfind("out", 0) != 0) continue;
      const std::string spec = dataset_attr_string(g, ds, "spec");
      SCOPED_TRACE(ds + " spec " + spec);
      std::vector<std::size_t> out_shape;
      const std::vector<double> expected = g.read<double>(ds, &out_shape);
      ASSERT_EQ(out_shape, shape);
      const auto normaliser = sharp::norm::make_normaliser(spec);
      std::vector<double> p(rows * n);
      normaliser->forward(logits.data(), p.data(), rows, n);
      const double diff = max_abs_diff(p, expected);
      EXPECT_LE(diff, 1e-9);
      if (diff > 1e-9) {
        for (std::size_t i = 0; i < p.size(); ++i) {
          if (std::fabs(p[i] - expected[i]) > 1e-9) {
            ADD_FAILURE() << "first mismatch at row " << i / n << " column " << i % n << ": got "
                          << p[i] << " expected " << expected[i];
            break;
          }
        }
      }
      if (diff >= worst) {
        worst = diff;
        worst_where = case_name + " " + spec;
      }
      specs_seen.insert(spec);
      ++outputs_checked;
    }
  }
  // The description's spec list: every name must have been exercised.
  for (const char* name : {"softmax", "adaptive", "ssmax", "topk", "sparsemax", "entmax15", "entmax:",
                           "asentmax", "stieltjes"}) {
    bool found = false;
    for (const auto& s : specs_seen) found = found || s.rfind(name, 0) == 0;
    EXPECT_TRUE(found) << "no golden output for " << name;
  }
  EXPECT_GE(outputs_checked, 400u);
  std::printf("checked %zu golden outputs; largest |difference| %.3g (%s)\n", outputs_checked, worst,
              worst_where.c_str());
}

}  // namespace
