"""The pre-registered tests of the text study's primary endpoint (docs/science.md#the-text-study-pre-registered):
paired binary outcomes (one arm against softmax, sample by sample) in strata, pooled by the
Cochran-Mantel-Haenszel test with continuity correction, and Holm's adjustment over a family of
comparisons. Pure functions of counts; no file is read here.

Stratum k contributes its discordant pairs only: b_k samples only the arm got right, c_k only
softmax. For paired strata the textbook CMH statistic with its 1/2 continuity correction reduces to
chi2 = (|sum_k (b_k - c_k)| - 1)^2 / sum_k (b_k + c_k) on 1 degree of freedom (each discordant pair
adds +-1/2 to sum(a - E[a]) and 1/4 to the variance), the form the design states.
"""
from __future__ import annotations

import math

from scipy import stats


def cmh_paired(only_arm, only_softmax) -> tuple:
    """(chi2, p) of the pooled paired CMH test with continuity correction over strata whose
    discordant counts are only_arm[k] (b_k) and only_softmax[k] (c_k). No discordant pair at all:
    (nan, 1.0), nothing to test and no evidence of a difference."""
    b, c = sum(int(x) for x in only_arm), sum(int(x) for x in only_softmax)
    if b + c == 0:
        return (math.nan, 1.0)
    statistic = (abs(b - c) - 1) ** 2 / (b + c)
    return (statistic, float(stats.chi2.sf(statistic, 1)))


def binomial_paired(only_arm, only_softmax) -> float:
    """Exact two-sided binomial p of the arm's wins among every stratum's discordant pairs
    (Binomial(D, 1/2) under no difference): the exact conditional form, shown beside the CMH p."""
    b, c = sum(int(x) for x in only_arm), sum(int(x) for x in only_softmax)
    return 1.0 if b + c == 0 else float(stats.binomtest(b, b + c, 0.5).pvalue)


def holm(pvalues) -> list:
    """Holm's step-down adjustment of a family of m p-values, in the input order: the i-th smallest
    p becomes max over j <= i of min(1, (m - j + 1) p_(j)). A nan p (a comparison not measured)
    counts as 1, so the family keeps its size."""
    p = [1.0 if (x is None or math.isnan(x)) else float(x) for x in pvalues]
    order = sorted(range(len(p)), key=lambda i: p[i])
    adjusted, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        adjusted[i] = running
    return adjusted
