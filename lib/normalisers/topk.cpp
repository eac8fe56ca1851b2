// top-k (softmax over the k largest logits, 0 elsewhere) and argmax = top-1 (docs/science.md#top-k). Ties go to
// the lower index: entries are ranked by (logit descending, index ascending), a strict total order,
// so the selected set is unique.
#include <algorithm>
#include <cmath>

#include "normalisers/implementation.hpp"
#include "normalisers/registry.hpp"
#include "normalisers/row_checks.hpp"
#include "normalisers/simd_io.hpp"
#include "normalisers/softmax_kernels.hpp"

namespace sharp::norm::detail {
namespace {

class TopK final : public TemplatedForward<TopK> {
  static constexpr std::size_t kSmallK = 64;  // up to here a sorted list beats nth_element

 public:
  TopK(const Spec& spec, std::size_t k) : TemplatedForward(spec), k_(k) {}

  template <class T>
  void impl(const T* z, T* p, std::size_t n, Workspace& ws) const {
    const RowScan scan = scan_row(z, n);
    if (k_ == 1) {  // argmax: one-hot at the first maximum (the scan already found its value)
      std::fill(p, p + n, T(0));
      std::size_t first = 0;
      while (static_cast<double>(z[first]) != scan.max) ++first;
      p[first] = T(1);
      return;
    }
    if (k_ >= scan.unmasked) {
      softmax_row(z, p, n, 1.0, false, ws);
      return;
    }
    std::uint32_t* idx = nullptr;
    const std::size_t count = select(z, n, scan.unmasked, ws, &idx);
    std::fill(p, p + n, T(0));
    double* e = ws.doubles(1, count);
    double sum = 0.0;
    for (std::size_t j = 0; j < count; ++j) {
      e[j] = std::exp(static_cast<double>(z[idx[j]]) - scan.max);
      sum += e[j];
    }
    for (std::size_t j = 0; j < count; ++j) p[idx[j]] = static_cast<T>(e[j] / sum);
  }

 protected:
  // The selected indices in increasing order (so sums run in a fixed order); count = min(k, unmasked).
  template <class T>
  std::size_t select(const T* z, std::size_t n, std::size_t unmasked, Workspace& ws, std::uint32_t** out) const {
    std::uint32_t* idx = ws.indices(n);
    const std::size_t count = std::min(k_, unmasked);
    if (count <= kSmallK) {
      // One pass keeping the best `count` (value descending, index ascending) in a sorted list; an
      // entry displaces the worst only if strictly larger (a tie keeps the lower index). A batch
      // entirely at or below the current worst is skipped with one vector comparison.
      double* best = ws.doubles(0, count);
      std::size_t size = 0;
      auto insert = [&](std::size_t i) {
        std::size_t j = size < count ? size++ : count - 1;
        while (j > 0 && z[i] > best[j - 1]) {
          best[j] = best[j - 1];
          idx[j] = idx[j - 1];
          --j;
        }
        best[j] = static_cast<double>(z[i]);
        idx[j] = static_cast<std::uint32_t>(i);
      };
      constexpr std::size_t L = simd::kLanes;
      std::size_t i = 0;
      for (; i < n && size < count; ++i) insert(i);
      for (; i + L <= n; i += L) {
        if (!xsimd::any(simd::load_batch(z + i) > simd::batch_d(best[count - 1]))) continue;
        for (std::size_t j = i; j < i + L; ++j) {
          if (z[j] > best[count - 1]) insert(j);
        }
      }
      for (; i < n; ++i) {
        if (z[i] > best[count - 1]) insert(i);
      }
      std::sort(idx, idx + count);
    } else {
      for (std::size_t i = 0; i < n; ++i) idx[i] = static_cast<std::uint32_t>(i);
      auto ranks_before = [z](std::uint32_t a, std::uint32_t b) { return z[a] > z[b] || (z[a] == z[b] && a < b); };
      std::nth_element(idx, idx + (count - 1), idx + n, ranks_before);
      std::sort(idx, idx + count);
    }
    *out = idx;
    return count;
  }

  // Softmax's Jacobian restricted to the selected set; 0 elsewhere (for argmax: 0 everywhere).
  void backward_row(const double* z, const double* p, const double* v, double* grad_z, double*, std::size_t n,
                    Workspace& ws) const override {
    const RowScan scan = scan_row(z, n);
    if (k_ >= scan.unmasked) {
      softmax_backward_row(z, p, v, grad_z, n, 1.0, false);
      return;
    }
    std::uint32_t* idx = nullptr;
    const std::size_t count = select(z, n, scan.unmasked, ws, &idx);
    std::fill(grad_z, grad_z + n, 0.0);
    double pv = 0.0;
    for (std::size_t j = 0; j < count; ++j) pv += p[idx[j]] * v[idx[j]];
    for (std::size_t j = 0; j < count; ++j) grad_z[idx[j]] = p[idx[j]] * (v[idx[j]] - pv);
  }

 private:
  std::size_t k_;
};

const NormaliserRegistration kTopK{{
    .name = "topk",
    .formula = "softmax over the k largest logits, 0 elsewhere",
    .section = "top-k",
    .example = "topk:k=3",
    .parameters = {{"k", std::nullopt, ParameterRange::integer_at_least(1.0), "entries kept"}},
    .make = [](const Spec& s) { return std::make_unique<TopK>(s, static_cast<std::size_t>(s.param("k"))); },
}};

const NormaliserRegistration kArgmax{{
    .name = "argmax",
    .formula = "one-hot at the first maximum (topk with k = 1)",
    .section = "top-k",
    .example = "argmax",
    .make = [](const Spec& s) { return std::make_unique<TopK>(s, 1); },
}};

}  // namespace

}  // namespace sharp::norm::detail
