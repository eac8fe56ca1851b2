// Pinned outputs of every user of the running softmax statistics (core/online_softmax.hpp): the
// softmax-family row kernels (one row, blocks merged, the short-row lane kernel), the streamed
// statistics (normalisers/softmax_stream), the dispersion row, the max-retrieval head's online
// attention and the β = 1 entropy of its β* search. The
// expected bits were recorded from the code before these users shared one type, so a change of
// their arithmetic (an exp, an fma, the order of a merge) shows here as a changed bit.
// Scalars are compared bit for bit; an array is compared through a hash of its bits.
// SHARP_PRINT_PINS=1 prints the tables instead (to record them again after a deliberate change).
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hash.hpp"
#include "dispersion/dispersion_row.hpp"
#include "max_retrieval/beta_fit.hpp"
#include "max_retrieval/online_attention.hpp"
#include "nn/parameters.hpp"
#include "normalisers/normaliser.hpp"
#include "normalisers/softmax_kernels.hpp"
#include "normalisers/softmax_summary.hpp"
#include "normalisers/workspace.hpp"
#include "normalisers/softmax_stream.hpp"
#include "support/random_rows.hpp"

namespace {

#include "online_softmax_pins.inc"   // the recorded tables kSoftmaxFamily, kSoftmaxStream, ...

using sharp::test::random_uniform;
constexpr double kInf = INFINITY;

std::uint64_t bits_of(double x) { return __builtin_bit_cast(std::uint64_t, x); }

// FNV-1a over the bits of an array, as a double-free pin (a uint64 stored in the table).
template <class T>
std::uint64_t hash_bits(const std::vector<T>& v) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const T& x : v) {
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &x, sizeof(T));
    for (unsigned char b : bytes) h = (h ^ b) * 0x100000001b3ULL;
  }
  return h;
}

// The outputs of one user, as 64-bit patterns: doubles by their bits, hashes as they are.
struct Pins {
  std::vector<std::uint64_t> values;
  void add(double x) { values.push_back(bits_of(x)); }
  void add_hash(std::uint64_t h) { values.push_back(h); }
};

void check(const char* name, const Pins& got, const std::vector<std::uint64_t>& want) {
  if (std::getenv("SHARP_PRINT_PINS")) {
    std::printf("const std::vector<std::uint64_t> k%s = {", name);
    for (std::size_t i = 0; i < got.values.size(); ++i) {
      std::printf("%s0x%016" PRIx64 "ULL,", i % 3 == 0 ? "\n    " : " ", got.values[i]);
    }
    std::printf("};\n");
    return;
  }
  ASSERT_EQ(got.values.size(), want.size()) << name;
  for (std::size_t i = 0; i < want.size(); ++i) {
    double g, w;
    std::memcpy(&g, &got.values[i], 8);
    std::memcpy(&w, &want[i], 8);
    EXPECT_EQ(got.values[i], want[i]) << name << " output " << i << ": got " << g << " (" << std::hexfloat
                                      << g << "), pinned " << w << std::defaultfloat;
  }
}

// Rows that exercise every path of the statistics: short (whole-row and lane kernels), one block,
// several blocks merged at rising and falling shifts, logits far from 0 (no fused shift), masked
// entries and a fully masked block, float rows.
std::vector<double> row_case(int which) {
  switch (which) {
    case 0: return random_uniform(16, 11, 2.0, 0.5);
    case 1: return random_uniform(64, 12, 3.0, -1.0);
    case 2: return random_uniform(1000, 13, 4.0, 2.0);
    case 3: {   // three blocks and a bit, rising: every merge rescales the earlier blocks
      std::vector<double> z = random_uniform(3 * 2048 + 5, 14, 1.0, 0.0);
      for (std::size_t i = 0; i < z.size(); ++i) z[i] += 3e-3 * static_cast<double>(i);
      return z;
    }
    case 4: {   // falling: every merge rescales the later block
      std::vector<double> z = random_uniform(5 * 2048 + 17, 15, 1.0, 0.0);
      for (std::size_t i = 0; i < z.size(); ++i) z[i] -= 2e-3 * static_cast<double>(i);
      return z;
    }
    case 5: return random_uniform(3 * 2048, 16, 1e3, 1e20);   // |shift·scale| > 2^50: subtract first
    case 6: {   // masked entries and a fully masked second block
      std::vector<double> z = random_uniform(4 * 2048 + 100, 17, 6.0, 0.0);
      for (std::size_t i = 0; i < z.size(); i += 7) z[i] = -kInf;
      for (std::size_t i = 2048; i < 4096; ++i) z[i] = -kInf;
      return z;
    }
    default: {   // a block whose first entries are far below its max (the redo with the exact max)
      std::vector<double> z = random_uniform(2 * 2048 + 300, 18, 1.0, 0.0);
      z[1500] = 900.0;
      z[3000] = 850.0;
      return z;
    }
  }
}
constexpr int kRowCases = 8;

TEST(OnlineSoftmaxPins, SoftmaxFamilyRowKernels) {
  using namespace sharp::norm;
  Pins pins;
  Workspace ws;
  for (int c = 0; c < kRowCases; ++c) {
    const std::vector<double> z = row_case(c);
    const std::vector<float> zf(z.begin(), z.end());
    for (const double beta : {1.0, 0.37, 3.0}) {
      const auto s = softmax_row_statistics(z.data(), z.size(), beta, false, ws);
      pins.add(s.shift);
      pins.add(s.sum);
      pins.add(s.weighted);
      pins.add(s.max);
      pins.add(s.entropy());
      pins.add(s.log_sum_exp(beta));
      const auto sp = softmax_row_statistics(z.data(), z.size(), beta, true, ws);
      pins.add(sp.entropy());
      std::vector<double> p(z.size());
      const auto sr = softmax_row(z.data(), p.data(), z.size(), beta, false, ws);
      pins.add(sr.entropy());
      pins.add_hash(hash_bits(p));
      if (c == 5) continue;   // 1e20 does not fit a float
      const auto sf = softmax_row_statistics(zf.data(), zf.size(), beta, false, ws);
      pins.add(sf.sum);
      pins.add(sf.weighted);
      std::vector<float> pf(zf.size());
      softmax_row(zf.data(), pf.data(), zf.size(), beta, false, ws);
      pins.add_hash(hash_bits(pf));
    }
    const SoftmaxSummary summary = softmax_summary(z.data(), z.size());
    pins.add(summary.log_sum_exp);
    pins.add(summary.entropy);
    pins.add(summary.adaptive_beta);
  }
  // Normalisers, row by row and (16- and 40-entry rows, 4 and 7 rows) in the lane kernel.
  for (const char* spec : {"softmax", "softmax:beta=2.5", "adaptive", "ssmax:s=0.43"}) {
    const auto nz = make_normaliser(spec);
    for (const std::size_t n : {std::size_t{16}, std::size_t{40}, std::size_t{3000}}) {
      for (const std::size_t rows : {std::size_t{4}, std::size_t{7}}) {
        std::vector<double> z = random_uniform(rows * n, 100 + n + rows, 5.0, 1.0);
        z[3] = -kInf;
        std::vector<double> p(z.size());
        nz->forward(z.data(), p.data(), rows, n);
        pins.add_hash(hash_bits(p));
        const std::vector<float> zf(z.begin(), z.end());
        std::vector<float> pf(zf.size());
        nz->forward(zf.data(), pf.data(), rows, n);
        pins.add_hash(hash_bits(pf));
      }
    }
  }
  const auto adaptive = make_normaliser("adaptive");
  for (const std::size_t n : {std::size_t{16}, std::size_t{200}}) {   // the backward's q pass
    const std::vector<double> z = random_uniform(n, 300 + n, 8.0, 0.0), v = random_uniform(n, 400 + n, 1.0, 0.0);
    std::vector<double> p(n), g(n);
    adaptive->forward(z.data(), p.data(), 1, n);
    adaptive->backward(z.data(), p.data(), v.data(), g.data(), nullptr, 1, n);
    pins.add_hash(hash_bits(g));
  }
  check("SoftmaxFamily", pins, kSoftmaxFamily);
}

void add_stream(Pins& pins, const sharp::norm::SoftmaxStream& st) {
  pins.add(st.max());
  pins.add(st.min);
  pins.add(st.softmax.sum.sum);
  pins.add(st.softmax.sum.comp);
  pins.add(st.softmax.weighted.sum);
  pins.add(st.softmax.weighted.comp);
  pins.add(static_cast<double>(st.count));
  pins.add(st.log_sum_exp());
  pins.add(st.max() == -kInf ? 0.0 : st.entropy());
  pins.add(st.probability(0.25));
}

TEST(OnlineSoftmaxPins, SoftmaxStream) {
  using sharp::norm::SoftmaxStream;
  Pins pins;
  for (int c = 0; c < kRowCases; ++c) {
    const std::vector<double> z = row_case(c);
    for (const std::size_t chunk : {std::size_t{1000}, std::size_t{1024}, std::size_t{333}}) {
      SoftmaxStream st;
      for (std::size_t pos = 0; pos < z.size(); pos += chunk) st.add(z.data() + pos, std::min(chunk, z.size() - pos));
      add_stream(pins, st);
      // The same chunks as separate streams merged in order.
      SoftmaxStream merged;
      for (std::size_t pos = 0; pos < z.size(); pos += chunk) {
        SoftmaxStream part;
        part.add(z.data() + pos, std::min(chunk, z.size() - pos));
        merged.merge(part);
      }
      add_stream(pins, merged);
    }
    if (c == 5) continue;
    const std::vector<float> zf(z.begin(), z.end());
    SoftmaxStream sf;
    sf.add(zf.data(), zf.size());
    add_stream(pins, sf);
  }
  // A falling row streamed backwards (rising: a rescale per sub-chunk), and an all-masked stream.
  std::vector<double> up = row_case(4);
  std::reverse(up.begin(), up.end());
  SoftmaxStream rising;
  rising.add(up.data(), up.size());
  add_stream(pins, rising);
  const std::vector<double> masked(50, -kInf);
  SoftmaxStream none;
  none.add(masked.data(), masked.size());
  add_stream(pins, none);
  check("SoftmaxStream", pins, kSoftmaxStream);
}

TEST(OnlineSoftmaxPins, DispersionRow) {
  using namespace sharp::dispersion;
  Pins pins;
  const LogitLaw laws[] = {LogitLaw::Uniform, LogitLaw::OneHot, LogitLaw::TwoPoint, LogitLaw::Gaussian};
  struct Case {
    std::uint64_t n;
    double spread, theta;
  };
  // Top-relative sums, their redo from the max (short rows), and the two-pass path (δ/θ > 600).
  const Case cases[] = {{1, 4.0, 1.0},      {3, 4.0, 1.0},        {1000, 4.0, 1.0},  {200000, 8.0, 0.5},
                        {70000, 0.0, 1.0},  {5000, 700.0, 1.0},   {130000, 2000.0, 0.5}, {17, 30.0, 1.0}};
  for (const LogitLaw law : laws) {
    for (const Case& c : cases) {
      const RowStatistics r = row_statistics(law, c.n, c.spread, c.theta, 5 + c.n, 1);
      pins.add(r.top);
      pins.add(r.y_min);
      pins.add(r.y_max());
      pins.add(r.softmax.shift);
      pins.add(r.softmax.sum.sum);
      pins.add(r.softmax.sum.comp);
      pins.add(r.softmax.weighted.sum);
      pins.add(r.softmax.weighted.comp);
      pins.add(r.alpha_max());
      pins.add(r.alpha_min());
      pins.add(r.entropy());
      const DispersionRow d = dispersion_row(law, c.n, c.spread, c.theta, 5 + c.n, 2);
      pins.add(d.alpha_max);
      pins.add(d.alpha_min);
      pins.add(d.entropy);
      pins.add(static_cast<double>(d.violations));
    }
  }
  check("Dispersion", pins, kDispersion);
}

TEST(OnlineSoftmaxPins, OnlineAttention) {
  using sharp::max_retrieval::OnlineAttention;
  Pins pins;
  constexpr std::size_t W = 5;
  for (const double beta : {1.0, 0.7, 3.0}) {
    for (const std::size_t chunk : {std::size_t{7}, std::size_t{64}, std::size_t{100}, std::size_t{1000}}) {
      for (const bool rising : {false, true}) {
        const std::size_t n = 1000;
        std::vector<double> ed = random_uniform(n, 500 + chunk, 4.0, 0.0);
        if (rising) {
          for (std::size_t i = 0; i < n; ++i) ed[i] += 0.02 * static_cast<double>(i);
        }
        const std::vector<float> e(ed.begin(), ed.end());
        const std::vector<double> hd = random_uniform(n * W, 600 + chunk, 1.0, 0.0);
        const std::vector<float> h(hd.begin(), hd.end());
        std::vector<float> w(chunk);
        OnlineAttention acc(beta, W);
        for (std::size_t pos = 0; pos < n; pos += chunk) {
          const std::size_t count = std::min(chunk, n - pos);
          acc.add(e.data() + pos, h.data() + pos * W, count, w.data());
        }
        pins.add(acc.max());
        pins.add(acc.sum());
        pins.add(acc.entropy());
        pins.add(acc.weight(e[0]));
        pins.add(acc.weight(e[n - 1]));
        pins.add(acc.weight(1.2345));
        std::vector<float> c(W);
        acc.weighted_mean(c.data());
        pins.add_hash(hash_bits(c));
      }
    }
  }
  OnlineAttention empty(1.0, W);
  pins.add(empty.weight(0.5));
  check("OnlineAttention", pins, kOnlineAttention);
}

TEST(OnlineSoftmaxPins, BetaFitEntropy) {
  using namespace sharp::max_retrieval;
  Pins pins;
  const ModelLayout layout = make_model_layout({16, 1});
  std::vector<float> params(layout.params.size());
  sharp::nn::lecun_normal_init(layout.params, params.data(), 5);
  for (std::int64_t s = 0; s < 6; ++s) {
    for (const std::size_t n : {std::size_t{16}, std::size_t{300}}) {
      pins.add(best_beta(layout, params.data(), set_sample_key(11, s), n, 1.5).entropy);
    }
  }
  check("BetaFit", pins, kBetaFit);
}

}  // namespace
