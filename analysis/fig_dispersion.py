"""Dispersion figure (docs/science.md#figures) and threshold table from a "bounds" result file (docs/science.md#dispersion-lemma).

Left: α_max against n (log-log), one colour per δ/θ, one marker per logit law, with the lemma's
upper bound exp(δ/θ)/n (dashed) and the tight worst case 1/(1 + (n−1)·exp(−δ/θ)) (thin solid).
Right: n·α_max against n with the ceiling exp(δ/θ) (dashed) and the worst case (thin solid).
Table dispersion_thresholds.md: per (law, δ, θ) the smallest n of the grid with α_max < ε, next to
the worst case's closed form n > 1 + (1/ε − 1)·exp(δ/θ), and the total of bound violations.

    /usr/bin/python3 analysis/fig_dispersion.py results/bounds.h5 --out results/figures
"""
from __future__ import annotations

import dataclasses
import math
import sys

import numpy as np
from matplotlib.lines import Line2D

import common
import product

EXPERIMENT = "bounds"
# What this module reads of the file (checked against the binary's --describe by
# analysis/tests/test_needs_declared.py).
NEEDS = common.Needs(EXPERIMENT, params=("n", "spread", "theta", "logits"), metrics=("alpha_max", "violations"))
INPUT_FILE = "bounds.h5"
EPSILONS = (0.5, 0.1)


@dataclasses.dataclass
class Series:
    """α_max on the n grid for one (law, δ, θ). Replicates (several seeds or trial counts at the
    same n) are reduced to their maximum: the conservative choice for 'α_max < ε from n on'."""
    law: str
    spread: float
    theta: float
    n: np.ndarray          # [G] sorted distinct n of the grid
    alpha_max: np.ndarray  # [G]
    violations: int        # summed over every point of the series

    @property
    def ratio(self) -> float:
        return self.spread / self.theta


def worst_case_alpha_max(n, ratio: float):
    """One logit at M and n−1 at m (docs/science.md#dispersion-lemma): the largest α_max any logits of spread δ reach."""
    return 1.0 / (1.0 + (np.asarray(n, dtype=float) - 1.0) * np.exp(-ratio))


def worst_case_threshold(eps: float, ratio: float) -> float:
    """α_max < ε for the worst case exactly when n > 1 + (1/ε − 1)·exp(δ/θ) (docs/science.md#dispersion-lemma)."""
    return 1.0 + (1.0 / eps - 1.0) * math.exp(ratio)


def smallest_n_below(n: np.ndarray, alpha: np.ndarray, eps: float):
    """Smallest n of the grid with α_max < ε, or None when no grid point gets there."""
    hits = np.flatnonzero(alpha < eps)
    return int(n[hits[0]]) if hits.size else None


def collect_series(result: common.Result) -> list:
    NEEDS.check(result)
    n_col, alpha_col = result.params["n"], result.metrics["alpha_max"]
    series = []
    for (law, spread, theta), rows in result.group_by("logits", "spread", "theta"):
        ns = np.array(sorted(set(int(v) for v in n_col[rows])), dtype=np.int64)
        alpha = np.array([alpha_col[rows][n_col[rows] == n].max() for n in ns])
        series.append(Series(law, spread, theta, ns, alpha,
                             int(result.metrics["violations"][rows].sum())))
    return sorted(series, key=lambda s: (common.law_sort_key(s.law), s.spread, s.theta))


def ratio_colours(series: list) -> dict:
    """δ/θ value (rounded so 5.69/1 and 11.38/2 coincide) -> colour, ascending."""
    ratios = sorted({round(s.ratio, 9) for s in series})
    return dict(zip(ratios, common.sequential_colours(len(ratios))))


def draw(result: common.Result, series: list):
    colours = ratio_colours(series)
    ratio_columns = 1 if len(colours) <= 7 else 2  # long lists of δ/θ in two columns
    fig, (ax_alpha, ax_scaled), legend_ax = common.new_figure(
        ncols=2, width=7.0, height=2.8, legend_width=0.3 * ratio_columns)
    laws = sorted({s.law for s in series}, key=common.law_sort_key)
    n_lo = min(int(s.n.min()) for s in series)
    n_hi = max(int(s.n.max()) for s in series)
    dense = np.geomspace(n_lo, n_hi, 400)  # closed-form curves drawn smoothly between grid points

    for ratio, colour in colours.items():
        ax_alpha.plot(dense, np.exp(ratio) / dense, ls="--", lw=0.9, color=colour)
        ax_alpha.plot(dense, worst_case_alpha_max(dense, ratio), ls="-", lw=0.6, color=colour)
        ax_scaled.axhline(np.exp(ratio), ls="--", lw=0.9, color=colour)
        ax_scaled.plot(dense, dense * worst_case_alpha_max(dense, ratio), ls="-", lw=0.6,
                       color=colour)
    for s in series:
        style = dict(color=colours[round(s.ratio, 9)], marker=common.law_marker(s.law, laws),
                     ls="none", mfc="none", mew=0.9, ms=3.8)
        ax_alpha.plot(s.n, s.alpha_max, **style)
        ax_scaled.plot(s.n, s.n * s.alpha_max, **style)

    lowest = min(float(s.alpha_max.min()) for s in series)
    ax_alpha.set_ylim(lowest / 3, 1.6)  # the bound exceeds 1 at small n; α ≤ 1 anyway
    ax_alpha.set_yscale("log")
    ax_alpha.set_ylabel(r"largest coefficient $\alpha_{\max}$")
    ax_alpha.set_title(r"$\alpha_{\max}$ vanishes as $n$ grows")
    ax_scaled.set_yscale("log")
    ax_scaled.set_ylabel(r"$n\cdot\alpha_{\max}$")
    ax_scaled.set_title(r"$n\cdot\alpha_{\max}$ stays below $e^{\delta/\theta}$")
    # The worst case bounds every n·α_max; ceilings far above what the grid reaches are left out
    # rather than squashing the data (exp(δ/θ) is astronomically large for big δ/θ).
    reached = max(n_hi * float(worst_case_alpha_max(n_hi, r)) for r in colours)
    ax_scaled.set_ylim(0.7, reached * 3.0)
    for ax in (ax_alpha, ax_scaled):
        common.log2_axis(ax, "x")
        ax.set_xlim(n_lo / 1.3, n_hi * 1.3)
        ax.set_xlabel("number of items $n$")

    ratio_handles = [Line2D([], [], color=c, lw=1.5, label=common.format_number(r))
                     for r, c in colours.items()]
    law_handles = [Line2D([], [], color="0.2", marker=common.law_marker(l, laws), ls="none",
                          mfc="none", mew=0.9, label=l) for l in laws]
    curve_handles = [Line2D([], [], color="0.2", ls="--", lw=0.9, label="lemma bound"),
                     Line2D([], [], color="0.2", ls="-", lw=0.6, label="worst case")]
    first = legend_ax.legend(handles=ratio_handles, title=r"$\delta/\theta$", loc="upper left",
                             bbox_to_anchor=(0.0, 1.0), borderaxespad=0.0, ncols=ratio_columns,
                             columnspacing=0.8)
    legend_ax.add_artist(first)
    legend_ax.legend(handles=law_handles + curve_handles, title="logits", loc="lower left",
                     bbox_to_anchor=(0.0, 0.0), borderaxespad=0.0)
    return fig


def thresholds_table(result: common.Result, series: list) -> str:
    total = sum(s.violations for s in series)
    n_max = max(int(s.n.max()) for s in series)
    head = ["logits", "δ", "θ", "δ/θ"]
    for eps in EPSILONS:
        head += [f"first grid n with α_max < {eps}", f"worst case, closed form (ε = {eps})"]
    head.append("violations")
    lines = [
        "# Dispersion thresholds (docs/science.md#dispersion-lemma)",
        "",
        f"Source: `{result.path}` (fingerprint {result.attrs.get('fingerprint', '?')}, "
        f"git {result.attrs.get('git_sha', '?')}).",
        "Smallest n of the grid at which the largest attention coefficient α_max falls below ε,",
        "next to the closed form for the worst case (one logit at M, n − 1 at m), whose α_max is",
        "below ε exactly when n > 1 + (1/ε − 1)·e^(δ/θ); every law gets there no later.",
        f"'—' means not reached on the grid (n ≤ {n_max}).",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for s in series:
        cells = [s.law, common.format_number(s.spread), common.format_number(s.theta),
                 common.format_number(s.ratio)]
        for eps in EPSILONS:
            found = smallest_n_below(s.n, s.alpha_max, eps)
            cells += ["—" if found is None else str(found),
                      f"{worst_case_threshold(eps, s.ratio):.1f}"]
        cells.append(str(s.violations))
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"Total bound violations over {len(result)} points: **{total}**"
              + (" (as the lemma requires)." if total == 0 else
                 " — THE LEMMA'S BOUND FAILED: the experiment or the library is wrong."), ""]
    return "\n".join(lines)


def make(path: str, outdir: str) -> list:
    """Figure dispersion.{png,pdf} and table dispersion_thresholds.md; returns the paths."""
    result = common.load_result(path, EXPERIMENT)
    series = collect_series(result)
    if not series:
        raise common.ResultFileError(f"{path}: no points to plot; the run's grid was empty.")
    total = sum(s.violations for s in series)
    if total:
        common.loud_warning(f"{path}: {total} violation(s) of the dispersion lemma's bound "
                            f"(docs/science.md#dispersion-lemma); it must never fail. See dispersion_thresholds.md.")
    written = common.save_figure(draw(result, series), outdir, "dispersion")
    written.append(common.save_text(thresholds_table(result, series), outdir,
                                    "dispersion_thresholds.md"))
    return written


# What this module makes (analysis/products.py collects it for make_figures and the page).
PRODUCTS = (
    product.Product("dispersion", INPUT_FILE, make,
        figures=(
        product.Figure(
            "dispersion", "Largest attention coefficient against n",
            "Left: α_max of every logit law against n, with the lemma's bound exp(δ/θ)/n (dashed) and the worst "
            "case, one logit at M and the rest at m (thin line). Right: n·α_max against the ceiling e^(δ/θ). The "
            "lemma allows no marker above its dashed line; the table's violations column counts any that is."),)),
)


if __name__ == "__main__":
    sys.exit(common.run_standalone(make, __doc__.splitlines()[0]))
