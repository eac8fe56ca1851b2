// Golden tests of the normaliser family against the numpy reference
// (docs/science.md#reference-implementation, docs/architecture.md#testing).
//
// NormaliserGolden.*: build/golden/normalisers.h5, written from a fixed seed by
// tests/reference/make_golden.py (the ctest fixture golden_normalisers runs it first): for every
// case and spec, forward p and the vector-Jacobian product (grad_z = J^T v and grad_params for the
// file's fixed v). Agreement per row: ||difference||_1 <= 1e-9, and |difference| <= 1e-9 |reference|
// wherever |reference| >= 1e-200 (grad_params count as entries of the row's gradient). A gradient
// entry is a sum of terms that may cancel (p_i (v_i - <p, v>) with v_i near the mean): any double
// computation knows it to a few ulp of those terms only, so its relative bound is taken against
// max(|reference|, 1e-3 x the terms' magnitude), which the file stores (grad_*_scale).
// ExternalGolden.*: the optional second check, an independent implementation's forward outputs in
// SHARP_EXTERNAL_GOLDEN_DIR (a CMake cache variable); skipped with the reason when the file is absent.
// That file's own rounding is of the order of ulp(max |z|) (1e-10 for its logits near 1e6), so only
// the per-row L1 bound applies to it.
#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "h5/h5.hpp"
#include "support/float_ulps.hpp"
#include "normalisers/normaliser.hpp"

namespace {

const std::string kGolden = std::string(SHARP_GOLDEN_DIR) + "/normalisers.h5";
const std::string kExternalGolden = std::string(SHARP_EXTERNAL_GOLDEN_DIR) + "/normalisers.h5";

constexpr double kTolerance = 1e-9;    // per-row L1 and relative
constexpr double kRelativeFloor = 1e-200;
constexpr double kCancellation = 1e-3;   // see the top comment

// How one row of `got` compares with `want` (n entries): the L1 distance and the first entry that
// breaks the relative bound.
struct RowAgreement {
  double l1 = 0.0;
  std::size_t bad = SIZE_MAX;
  bool ok() const { return l1 <= kTolerance && bad == SIZE_MAX; }
};

// `scale` (may be null): per entry, the magnitude of the terms the reference value is a sum of.
// `relative`: whether the relative bound applies at all.
RowAgreement compare_row(const double* got, const double* want, const float* scale, std::size_t n,
                         bool relative) {
  RowAgreement a;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = std::fabs(got[i] - want[i]);
    a.l1 += std::isnan(d) ? INFINITY : d;
    const double size = std::max(std::fabs(want[i]), scale ? kCancellation * scale[i] : 0.0);
    if (relative && a.bad == SIZE_MAX && size >= kRelativeFloor && !(d <= kTolerance * size)) a.bad = i;
  }
  return a;
}

std::string describe(const RowAgreement& a, const double* got, const double* want) {
  std::ostringstream s;
  s.precision(17);
  s << "L1 difference " << a.l1;
  if (a.bad != SIZE_MAX) {
    s << "; entry " << a.bad << ": got " << got[a.bad] << ", reference " << want[a.bad] << " (relative "
      << std::fabs(got[a.bad] - want[a.bad]) / std::fabs(want[a.bad]) << ")";
  }
  return s.str();
}

// One case group of the generated file.
struct Case {
  std::string name;
  std::size_t rows = 0, n = 0;
  std::vector<double> logits, v;
};

Case read_case(const sharp::h5::Group& cases, const std::string& name, bool with_v = true) {
  Case c;
  c.name = name;
  const sharp::h5::Group g = cases.open_group(name);
  std::vector<std::size_t> shape;
  c.logits = g.read<double>("logits", &shape);
  if (shape.size() != 2) throw std::runtime_error("case " + name + ": logits are not [rows, n]");
  c.rows = shape[0];
  c.n = shape[1];
  if (with_v) c.v = g.read<double>("v");
  return c;
}

// Checks every row of one output (rows x width, the reference in `want`); reports each failing row.
// Returns the number of failing rows and raises `worst` to the largest row L1 difference.
// `scale`: empty, or one entry per value (see compare_row). `relative`: false for the L1 bound only.
std::size_t check_rows(const std::string& what, const std::vector<double>& got,
                       const std::vector<double>& want, std::size_t rows, std::size_t width,
                       double& worst, const std::vector<float>& scale = {}, bool relative = true) {
  std::size_t failing = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const RowAgreement a = compare_row(got.data() + r * width, want.data() + r * width,
                                       scale.empty() ? nullptr : scale.data() + r * width, width, relative);
    worst = std::max(worst, a.l1);
    if (!a.ok()) {
      ++failing;
      ADD_FAILURE() << what << ", row " << r << ": "
                    << describe(a, got.data() + r * width, want.data() + r * width);
    }
  }
  return failing;
}

// adaptive_row_beta against a case's per-row entropy (softmax at beta = 1) and adaptive beta.
void check_entropy_and_beta(const sharp::h5::Group& g, const Case& c) {
  const std::vector<double> entropy = g.read<double>("entropy"), beta = g.read<double>("adaptive_beta");
  for (std::size_t r = 0; r < c.rows; ++r) {
    const auto ab = sharp::norm::adaptive_row_beta(c.logits.data() + r * c.n, c.n);
    EXPECT_NEAR(ab.entropy, entropy[r], kTolerance * std::max(1.0, entropy[r])) << c.name << " row " << r;
    EXPECT_NEAR(ab.beta, beta[r], kTolerance * beta[r]) << c.name << " row " << r;
  }
}

// The skip message of a test that needs a file which is absent.
#define SKIP_UNLESS_PRESENT(path, why)                                                             \
  if (!std::filesystem::exists(path)) GTEST_SKIP() << (why) << ": " << (path) << " is absent"

TEST(NormaliserGolden, FileDescribesItself) {
  ASSERT_TRUE(std::filesystem::exists(kGolden))
      << kGolden << " is missing: ctest's fixture golden_normalisers writes it "
      << "(/usr/bin/python3 tests/reference/make_golden.py --out " << kGolden << ")";
  auto file = sharp::h5::File::open_read(kGolden);
  EXPECT_NE(file.root().attr_string("description").find("normalisers.py"), std::string::npos);
  EXPECT_GE(file.root().open_group("cases").children().size(), 30u);
}

// Forward and backward of every spec of every case: the C++ backward gets the C++ forward's p.
TEST(NormaliserGolden, ForwardAndBackwardMatchReference) {
  ASSERT_TRUE(std::filesystem::exists(kGolden)) << "missing " << kGolden;
  auto file = sharp::h5::File::open_read(kGolden);
  const sharp::h5::Group cases = file.root().open_group("cases");
  std::set<std::string> names_seen;
  std::size_t outputs = 0, failing_rows = 0, longest = 0;
  double worst_forward = 0.0, worst_backward = 0.0;
  for (const std::string& case_name : cases.children()) {
    const Case c = read_case(cases, case_name);
    longest = std::max(longest, c.n);
    const sharp::h5::Group g = cases.open_group(case_name);
    for (const std::string& key : g.children()) {
      if (key.find_first_not_of("0123456789") != std::string::npos) continue;   // spec groups: 00, 01, ...
      const sharp::h5::Group s = g.open_group(key);
      const std::string spec = s.attr_string("spec");
      const std::string where = "case " + case_name + ", spec " + spec;
      const auto normaliser = sharp::norm::make_normaliser(spec);
      names_seen.insert(normaliser->spec().name);
      const std::size_t P = normaliser->parameter_names().size();

      std::vector<double> p(c.rows * c.n);
      normaliser->forward(c.logits.data(), p.data(), c.rows, c.n);
      failing_rows += check_rows(where + ", forward", p, s.read<double>("p"), c.rows, c.n, worst_forward);

      // The gradient row: grad_z (n entries) then grad_params (P entries).
      std::vector<double> grad_z(c.rows * c.n), grad_params(c.rows * std::max<std::size_t>(P, 1));
      normaliser->backward(c.logits.data(), p.data(), c.v.data(), grad_z.data(), grad_params.data(), c.rows, c.n);
      const std::vector<double> want_z = s.read<double>("grad_z");
      const std::vector<float> z_scale = s.read<float>("grad_z_scale");
      std::vector<double> want_params;
      std::vector<float> params_scale;
      if (P > 0) {
        std::vector<std::size_t> shape;
        want_params = s.read<double>("grad_params", &shape);
        ASSERT_EQ(shape, (std::vector<std::size_t>{c.rows, P})) << where;
        params_scale = s.read<float>("grad_params_scale");
      } else {
        EXPECT_FALSE(s.exists("grad_params")) << where;
      }
      const std::size_t width = c.n + P;
      std::vector<double> got(c.rows * width), want(c.rows * width);
      std::vector<float> scale(c.rows * width);
      for (std::size_t r = 0; r < c.rows; ++r) {
        std::copy_n(grad_z.data() + r * c.n, c.n, got.data() + r * width);
        std::copy_n(want_z.data() + r * c.n, c.n, want.data() + r * width);
        std::copy_n(z_scale.data() + r * c.n, c.n, scale.data() + r * width);
        std::copy_n(grad_params.data() + r * P, P, got.data() + r * width + c.n);
        std::copy_n(want_params.data() + r * P, P, want.data() + r * width + c.n);
        std::copy_n(params_scale.data() + r * P, P, scale.data() + r * width + c.n);
      }
      failing_rows += check_rows(where + ", backward (grad_z then grad_params)", got, want, c.rows, width,
                                 worst_backward, scale);
      outputs += 2;
    }
  }
  for (const std::string& name : sharp::norm::normaliser_names()) {
    EXPECT_EQ(names_seen.count(name), 1u) << "no golden output for " << name;
  }
  EXPECT_GE(longest, std::size_t(1) << 20) << "the file must hold rows of 2^20 entries";
  EXPECT_GE(outputs, 1400u);
  EXPECT_EQ(failing_rows, 0u);
  std::printf("checked %zu golden outputs; largest row L1 difference: forward %.3g, backward %.3g\n", outputs,
              worst_forward, worst_backward);
}

// Float rows of the softmax family (float lanes, normalisers/simd/softmax_block_impl.hpp) on every golden case:
// within 4 float ulp of the double kernel's result on the same, float-rounded logits, rounded to
// float (tests/support/float_ulps.hpp). Cases whose logits do not fit a float are skipped.
TEST(NormaliserGolden, FloatRowsWithinFourUlpsOfDouble) {
  ASSERT_TRUE(std::filesystem::exists(kGolden)) << "missing " << kGolden;
  auto file = sharp::h5::File::open_read(kGolden);
  const sharp::h5::Group cases = file.root().open_group("cases");
  std::size_t checked = 0;
  double worst = 0.0;
  for (const std::string& case_name : cases.children()) {
    const Case c = read_case(cases, case_name, false);
    if (std::any_of(c.logits.begin(), c.logits.end(), [](double z) { return std::fabs(z) > 1e30 && std::isfinite(z); })) continue;
    const std::vector<float> zf(c.logits.begin(), c.logits.end());
    const std::vector<double> zd(zf.begin(), zf.end());
    for (const char* spec : {"softmax", "softmax:beta=4", "adaptive", "ssmax:s=0.43"}) {
      const auto nz = sharp::norm::make_normaliser(spec);
      std::vector<double> p(zd.size());
      std::vector<float> pf(zd.size());
      nz->forward(zd.data(), p.data(), c.rows, c.n);
      nz->forward(zf.data(), pf.data(), c.rows, c.n);
      std::size_t at = 0;
      const double w = sharp::test::worst_float_ulps(pf.data(), p.data(), p.size(), &at);
      worst = std::max(worst, w);
      EXPECT_LE(w, 4.0) << "case " << case_name << ", " << spec << ", entry " << at << ": " << pf[at] << " vs " << p[at];
      ++checked;
    }
  }
  EXPECT_GE(checked, 100u);
  std::printf("float rows of %zu golden outputs: worst %.2f float ulps\n", checked, worst);
}

// adaptive_row_beta: the entropy of softmax at beta = 1 and the beta adaptive temperature takes.
TEST(NormaliserGolden, EntropyAndAdaptiveBeta) {
  ASSERT_TRUE(std::filesystem::exists(kGolden)) << "missing " << kGolden;
  auto file = sharp::h5::File::open_read(kGolden);
  const sharp::h5::Group cases = file.root().open_group("cases");
  for (const std::string& case_name : cases.children()) {
    const Case c = read_case(cases, case_name);
    const sharp::h5::Group g = cases.open_group(case_name);
    check_entropy_and_beta(g, c);
  }
}

// --- the external file: forward outputs of another implementation ---------------------------------

// The string attribute `attr` of dataset `dataset` in `group` (the layer reads group attributes only).
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

TEST(ExternalGolden, FileDescribesItself) {
  SKIP_UNLESS_PRESENT(kExternalGolden, "external golden file (CMake SHARP_EXTERNAL_GOLDEN_DIR)");
  auto file = sharp::h5::File::open_read(kExternalGolden);
  EXPECT_NE(file.root().attr_string("description").find("normaliser"), std::string::npos);
}

// Every case and spec of the external file (forward only; it holds no gradients): per-row L1 bound,
// plus its per-row entropy and adaptive beta.
TEST(ExternalGolden, EveryCaseAndSpecMatches) {
  SKIP_UNLESS_PRESENT(kExternalGolden, "external golden file (CMake SHARP_EXTERNAL_GOLDEN_DIR)");
  auto file = sharp::h5::File::open_read(kExternalGolden);
  const sharp::h5::Group cases = file.root().open_group("cases");
  std::set<std::string> names_seen;
  std::size_t outputs = 0, failing_rows = 0;
  double worst = 0.0;
  const std::vector<std::string> names = cases.children();
  ASSERT_GE(names.size(), 20u);
  for (const std::string& case_name : names) {
    const Case c = read_case(cases, case_name, false);
    const sharp::h5::Group g = cases.open_group(case_name);
    check_entropy_and_beta(g, c);
    for (const std::string& ds : g.children()) {
      if (ds.rfind("out", 0) != 0) continue;
      const std::string spec = dataset_attr_string(g, ds, "spec");
      const auto normaliser = sharp::norm::make_normaliser(spec);
      std::vector<double> p(c.rows * c.n);
      normaliser->forward(c.logits.data(), p.data(), c.rows, c.n);
      failing_rows += check_rows("case " + case_name + ", spec " + spec, p, g.read<double>(ds), c.rows, c.n, worst,
                                 {}, false);
      names_seen.insert(normaliser->spec().name);
      ++outputs;
    }
  }
  for (const char* name : {"softmax", "adaptive", "ssmax", "topk", "sparsemax", "entmax15", "entmax", "asentmax",
                           "stieltjes"}) {
    EXPECT_EQ(names_seen.count(name), 1u) << "no external golden output for " << name;
  }
  EXPECT_GE(outputs, 400u);
  EXPECT_EQ(failing_rows, 0u);
  std::printf("checked %zu external golden outputs; largest row L1 difference %.3g\n", outputs, worst);
}

}  // namespace
