#pragma once
// Thresholds of the sparse normalisers and the Stieltjes shift (docs/science.md#remedies). Every threshold function
// takes entries w of a row shifted and scaled so that max_k w_k = 0 and returns tau with
//   sparsemax:   sum_k [w_k - tau]_+       = 1   (w = z - max z)
//   1.5-entmax:  sum_k [w_k - tau]_+^2     = 1   (w = (z - max z) / 2)
//   alpha-entmax sum_k [w_k - tau]_+^(1/(alpha-1)) = 1   (w = (alpha - 1)(z - max z))
// so p_k = [w_k - tau]_+^(1/(alpha-1)). Since max w = 0, tau lies in [-1, -n^(1-alpha)] and only
// entries with w_k > -1 can be in the support, so w may be the whole row (masked entries -inf) or
// just any subset that contains every entry > -1 (what entmax_forward passes: the candidates).
#include <cstddef>

#include "normalisers/root_finding.hpp"
#include "normalisers/workspace.hpp"

namespace sharp::norm {

// Exact, sort-free (uses workspace slot 0): Michelot's fixed point tau_S = (sum_S w - 1)/|S|,
// dropping entries <= tau_S, which reaches the exact support in finitely many steps.
double sparsemax_threshold(const double* w, std::size_t n, Workspace& ws);

// Exact, sort-free (uses slots 0, 1): Newton steps on tau from the left (never past the root: the
// function is convex and decreasing) shrink the candidate set; on each set S the closed form
//   tau_S = mean_S - sqrt((1 - M2_S) / |S|),  M2_S = sum_S (w - mean_S)^2,
// is accepted once it is consistent (tau_S >= previous lower bound and min_S w >= tau_S), which
// happens exactly when S is the support. Falls back to the sort-based method if rounding stalls.
double entmax15_threshold(const double* w, std::size_t n, Workspace& ws);

// The sort-based reference algorithms (Peters, Niculae, Martins 2019), O(n log n).
double sparsemax_threshold_sorted(const double* w, std::size_t n, Workspace& ws);
double entmax15_threshold_sorted(const double* w, std::size_t n, Workspace& ws);

// General alpha in (1, 2]: tau = the root of f(tau) = sum [w - tau]_+^r - 1, r = 1/(alpha-1), on
// the bracket [-1, -unmasked^(1-alpha)] (unmasked = the row's number of unmasked entries), by
// root_finding.hpp's methods; entries <= the rising lower end are dropped (uses slot 0). For
// SafeguardedNewton `tolerance` bounds f(tau) = sum p - 1; for Bisection, the bracket's width.
RootResult entmax_threshold(const double* w, std::size_t n, std::size_t unmasked, double alpha, RootMethod method,
                            double tolerance, Workspace& ws);

// Stieltjes (docs/science.md#stieltjes): the shift mu = lambda - max z >= 1 with sum_i (mu + g_i)^(-q) = 1, where
// g_i = max - z_i >= 0 for a row z (float or double; masked entries -inf give 0) with maximum `max`
// and `unmasked` unmasked entries. The bracket is [1, unmasked^(1/q)]; f is convex and decreasing
// in mu, solved as for entmax_threshold (vectorised; no row-sized buffer).
template <class T>
RootResult stieltjes_shift(const T* z, std::size_t n, double max, std::size_t unmasked, double q, RootMethod method,
                           double tolerance);

// x^r for x >= 0, with exact repeated multiplication when r is a small integer (r = 1/(alpha-1) is
// 1, 2, 4 for alpha = 2, 1.5, 1.25).
double power(double x, double r);

}  // namespace sharp::norm
