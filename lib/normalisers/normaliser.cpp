#include "normalisers/normaliser.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "core/errors.hpp"
#include "core/parallel_for.hpp"
#include "normalisers/adaptive_temperature.hpp"
#include "normalisers/simd/softmax_lanes.hpp"
#include "normalisers/softmax_kernels.hpp"

namespace sharp::norm {
namespace {

// OpenMP keeps its worker threads, so a thread_local workspace is reused across calls.
Workspace& thread_workspace() {
  thread_local Workspace ws;
  return ws;
}

// Work below this many logits runs on the calling thread (a parallel region costs microseconds).
constexpr std::size_t kParallelThreshold = 1 << 15;
// Rows at least this long, fewer than the threads, are split into blocks instead.
constexpr std::size_t kLongRow = 1 << 16;

// A row kernel's error as the caller sees it: the spec and the row number first.
NumericError row_error(const std::string& name, std::size_t row, const NumericError& e) {
  return NumericError("normaliser '" + name + "': row " + std::to_string(row) + ": " + e.what());
}

// Calls body(row, workspace) for every row, in parallel. If rows fail, rethrows the error of the
// lowest failing row (deterministic whatever the schedule) prefixed with the spec and row number.
template <class Body>
void for_each_row(const std::string& name, std::size_t rows, std::size_t n, Body&& body) {
  const bool parallel = rows > 1 && rows * n >= kParallelThreshold && !omp_in_parallel();
  const std::size_t grain = std::max<std::size_t>(1, 8192 / std::max<std::size_t>(n, 1));
  parallel_for(rows, Loop{"normaliser/rows", 0, grain, parallel}, [&](std::size_t r) {
    try {
      body(r, thread_workspace());
    } catch (const NumericError& e) {
      throw row_error(name, r, e);
    }
  });
}

template <class Src>
void widen(const Src* x, double* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = static_cast<double>(x[i]);
}

}  // namespace

template <class T>
void Normaliser::forward_in_lanes(const T* z, T* p, std::size_t rows, std::size_t n) const {
  constexpr std::size_t G = kLaneRowsOf<T>, kGroupsPerTask = 64;
  const std::size_t groups = (rows + G - 1) / G, tasks = (groups + kGroupsPerTask - 1) / kGroupsPerTask;
  std::vector<unsigned char> bad(groups, 0);
  auto run = [&](std::size_t t) {
    const std::size_t first = t * kGroupsPerTask, last = std::min(groups, first + kGroupsPerTask);
    forward_lane_groups(z, p, rows, n, first, last, bad.data() + first);
  };
  parallel_for(tasks, Loop{"normaliser/lane-groups", 0, 0, rows * n >= kParallelThreshold && !omp_in_parallel()}, run);
  // A bad group again row by row: each row alone in the lane kernel (in every lane: the bits it gets
  // in any good group), else the row kernel, which names the row (the lowest failing row is in the
  // lowest bad group).
  for (std::size_t g = 0; g < groups; ++g) {
    if (!bad[g]) continue;
    for (std::size_t r = g * G; r < std::min(rows, g * G + G); ++r) {
      unsigned char row_bad = 0;
      forward_lane_groups(z + r * n, p + r * n, 1, n, 0, 1, &row_bad);
      if (!row_bad) continue;
      try {
        forward_row(z + r * n, p + r * n, n, thread_workspace());
      } catch (const NumericError& e) {
        throw row_error(name(), r, e);
      }
    }
  }
}

template <class T>
void Normaliser::forward_any(const T* z, T* p, std::size_t rows, std::size_t n) const {
  if (n == 0) throw NumericError("normaliser '" + name() + "': rows of length 0");
  if (n <= lane_row_limit()) {
    forward_in_lanes(z, p, rows, n);
    return;
  }
  const bool split = splits_long_rows() && n >= kLongRow && rows < static_cast<std::size_t>(omp_get_max_threads()) &&
                     !omp_in_parallel();
  if (split) {
    for (std::size_t r = 0; r < rows; ++r) {
      try {
        forward_long_row(z + r * n, p + r * n, n, thread_workspace());
      } catch (const NumericError& e) {
        throw row_error(name(), r, e);
      }
    }
    return;
  }
  for_each_row(name(), rows, n, [&](std::size_t r, Workspace& ws) { forward_row(z + r * n, p + r * n, n, ws); });
}

void Normaliser::forward(const double* z, double* p, std::size_t rows, std::size_t n) const {
  forward_any(z, p, rows, n);
}

void Normaliser::forward(const float* z, float* p, std::size_t rows, std::size_t n) const {
  forward_any(z, p, rows, n);
}

void Normaliser::forward_row(const float* z, float* p, std::size_t n, Workspace& ws) const {
  double* zd = ws.doubles(4, n);
  double* pd = ws.doubles(5, n);
  widen(z, zd, n);
  forward_row(zd, pd, n, ws);
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<float>(pd[i]);
}

template <class T>
void Normaliser::backward_any(const T* z, const T* p, const T* v, T* grad_z, double* grad_params, std::size_t rows,
                              std::size_t n, const double* row_params) const {
  if (n == 0) throw NumericError("normaliser '" + name() + "': rows of length 0");
  const std::size_t np = parameter_names().size();
  for_each_row(name(), rows, n, [&](std::size_t r, Workspace& ws) {
    const std::size_t o = r * n;
    double* gp = grad_params ? grad_params + r * np : nullptr;
    auto row = [&](const double* zr, const double* pr, const double* vr, double* gr) {
      if (row_params)
        backward_row_with(zr, pr, vr, gr, gp, n, row_params + r * np, ws);
      else
        backward_row(zr, pr, vr, gr, gp, n, ws);
    };
    if constexpr (std::is_same_v<T, double>) {
      row(z + o, p + o, v + o, grad_z + o);
    } else {  // computed in double
      double* zd = ws.doubles(4, n);
      double* pd = ws.doubles(5, n);
      double* vd = ws.doubles(6, n);
      double* gd = ws.doubles(7, n);
      widen(z + o, zd, n);
      widen(p + o, pd, n);
      widen(v + o, vd, n);
      row(zd, pd, vd, gd);
      for (std::size_t i = 0; i < n; ++i) grad_z[o + i] = static_cast<float>(gd[i]);
    }
  });
}

void Normaliser::backward(const double* z, const double* p, const double* v, double* grad_z, double* grad_params,
                          std::size_t rows, std::size_t n) const {
  backward_any(z, p, v, grad_z, grad_params, rows, n, nullptr);
}

void Normaliser::backward(const float* z, const float* p, const float* v, float* grad_z, double* grad_params,
                          std::size_t rows, std::size_t n) const {
  backward_any(z, p, v, grad_z, grad_params, rows, n, nullptr);
}

void Normaliser::require_row_parameters() const {
  if (!takes_row_parameters()) throw std::logic_error("normaliser '" + name() + "' takes no parameters per row");
}

template <class T>
void Normaliser::forward_with_rows(const T* z, T* p, std::size_t rows, std::size_t n, const double* row_params) const {
  require_row_parameters();
  if (n == 0) throw NumericError("normaliser '" + name() + "': rows of length 0");
  const std::size_t np = parameter_names().size();
  for_each_row(name(), rows, n, [&](std::size_t r, Workspace& ws) {
    forward_row_with(z + r * n, p + r * n, n, row_params + r * np, ws);
  });
}

void Normaliser::forward(const double* z, double* p, std::size_t rows, std::size_t n, const double* row_params) const {
  forward_with_rows(z, p, rows, n, row_params);
}

void Normaliser::forward(const float* z, float* p, std::size_t rows, std::size_t n, const double* row_params) const {
  forward_with_rows(z, p, rows, n, row_params);
}

void Normaliser::backward(const double* z, const double* p, const double* v, double* grad_z, double* grad_params,
                          std::size_t rows, std::size_t n, const double* row_params) const {
  require_row_parameters();
  backward_any(z, p, v, grad_z, grad_params, rows, n, row_params);
}

void Normaliser::backward(const float* z, const float* p, const float* v, float* grad_z, double* grad_params,
                          std::size_t rows, std::size_t n, const double* row_params) const {
  require_row_parameters();
  backward_any(z, p, v, grad_z, grad_params, rows, n, row_params);
}

// Reached only by a normaliser that says it takes row parameters and implements none of them.
static std::logic_error no_row_kernel(const std::string& name) {
  return std::logic_error("normaliser '" + name + "' says it takes row parameters but has no row kernel for them");
}
void Normaliser::forward_row_with(const double*, double*, std::size_t, const double*, Workspace&) const {
  throw no_row_kernel(name());
}
void Normaliser::forward_row_with(const float*, float*, std::size_t, const double*, Workspace&) const {
  throw no_row_kernel(name());
}
void Normaliser::backward_row_with(const double*, const double*, const double*, double*, double*, std::size_t,
                                   const double*, Workspace&) const {
  throw no_row_kernel(name());
}

template <class T>
static double entropy_any(const T* p, std::size_t n) {
  double h = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(p[i]);
    if (x > 0.0) h -= x * std::log(x);
  }
  return h;
}

double entropy(const double* p, std::size_t n) { return entropy_any(p, n); }
double entropy(const float* p, std::size_t n) { return entropy_any(p, n); }

template <class T>
static AdaptiveRowBeta adaptive_row_beta_any(const T* z, std::size_t n) {
  // Terms in double lanes for float rows too (to 12 digits): the beta the adaptive normaliser takes.
  const OnlineSoftmax<> stats = softmax_row_entropy_statistics(z, n, 1.0, false, thread_workspace());
  const double h = stats.entropy();
  return {h, adaptive_beta(h)};
}

template <class T>
static double row_beta_any(const Temperature& temperature, const T* z, std::size_t n) {
  if (temperature.needs_entropy_pass())
    return temperature.beta_after(softmax_row_entropy_statistics(z, n, 1.0, false, thread_workspace()).entropy());
  std::size_t keys = n;
  if (temperature.depends_on_keys())
    for (std::size_t i = 0; i < n; ++i) keys -= !(static_cast<double>(z[i]) > -INFINITY);
  return temperature.beta(keys);
}

double row_beta(const Temperature& temperature, const double* z, std::size_t n) {
  return row_beta_any(temperature, z, n);
}
double row_beta(const Temperature& temperature, const float* z, std::size_t n) {
  return row_beta_any(temperature, z, n);
}

AdaptiveRowBeta adaptive_row_beta(const double* z, std::size_t n) { return adaptive_row_beta_any(z, n); }
AdaptiveRowBeta adaptive_row_beta(const float* z, std::size_t n) { return adaptive_row_beta_any(z, n); }

}  // namespace sharp::norm
