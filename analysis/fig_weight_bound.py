"""Weight-norm bound tightness (docs/science.md#figures) from a "weight-bound" result file (docs/science.md#weight-norm-bound).

For logits e_i = (Q y)ᵀ(K x_i) the spread obeys δ ≤ 2·σ_max(Q)·σ_max(K)·‖y‖·max_i‖x_i‖.
Left: histogram of the per-trial ratio δ/bound over every point (/arrays/<id>/ratio), one colour per
d_model, with the bound at ratio 1; annotated with the largest ratio and the violations.
Right: mean ratio per point against n (bars: smallest to largest trial), one colour per d_model.

    /usr/bin/python3 analysis/fig_weight_bound.py results/weight-bound.h5 --out results/figures
"""
from __future__ import annotations

import sys

import numpy as np
from matplotlib.lines import Line2D

import common
import product

EXPERIMENT = "weight-bound"
# What this module reads of the file (checked against the binary's --describe by
# analysis/tests/test_needs_declared.py).
NEEDS = common.Needs(EXPERIMENT, params=("n", "d_model"), metrics=("violations",))
INPUT_FILE = "weight-bound.h5"


def ratios_by_d_model(result: common.Result) -> dict:
    """d_model -> list of (row, per-trial ratio array [trials]) in file order."""
    out: dict = {}
    for (d_model,), rows in result.group_by("d_model"):
        out[d_model] = []
        for row in rows:
            point_id = result.ids[row]
            arrays = result.arrays(point_id)
            if "ratio" not in arrays:
                raise common.ResultFileError(
                    f"{result.path}: /arrays/{point_id} lacks 'ratio'; the file was written by "
                    f"another version of the experiment. Re-run it.")
            ratio = np.asarray(arrays["ratio"], dtype=float).ravel()
            result.require_finite(f"/arrays/{point_id}/ratio", ratio, point_id)
            out[d_model].append((row, ratio))
    return out


def histogram_bins(ratios: np.ndarray, count: int = 40):
    """Log-spaced bins when the positive ratios span more than a decade, linear otherwise;
    the range always reaches past 1 so the bound line sits inside the plot."""
    positive = ratios[ratios > 0]
    if positive.size == 0:  # every spread 0 (n = 1 or zero weights): nothing to put on a log axis
        return np.linspace(0.0, 1.05, count + 1), False
    lo, hi = float(positive.min()), float(max(positive.max(), 1.0))
    if hi / lo > 10.0:
        return np.geomspace(lo / 1.1, hi * 1.1, count + 1), True
    return np.linspace(0.0, hi * 1.05, count + 1), False


def draw(result: common.Result, by_d_model: dict):
    fig, (ax_hist, ax_n), legend_ax = common.new_figure(ncols=2, width=7.0, height=2.7,
                                                       legend_width=0.22)
    colours = dict(zip(by_d_model, common.sequential_colours(len(by_d_model))))
    every = np.concatenate([r for runs in by_d_model.values() for _, r in runs])
    bins, log_x = histogram_bins(every)

    for d_model, runs in by_d_model.items():
        ratios = np.concatenate([r for _, r in runs])
        ax_hist.hist(ratios[ratios > 0] if log_x else ratios, bins=bins, histtype="stepfilled",
                     color=colours[d_model], alpha=0.35, lw=0)
        ax_hist.hist(ratios[ratios > 0] if log_x else ratios, bins=bins, histtype="step",
                     color=colours[d_model], lw=1.0)
    if log_x:
        ax_hist.set_xscale("log")
    ax_hist.axvline(1.0, color="black", lw=1.0, ls="--")
    ax_hist.text(1.0, 0.97, " bound ", transform=ax_hist.get_xaxis_transform(), ha="right",
                 va="top", fontsize=7.5)
    violations = int(result.metrics["violations"].sum())
    ax_hist.set_ylim(0, ax_hist.get_ylim()[1] * 1.3)  # headroom for the annotation
    ax_hist.text(0.03, 0.97,
                 f"max ratio = {common.format_number(float(every.max()), 3)}\n"
                 f"violations: {violations} of {every.size} trials",
                 transform=ax_hist.transAxes, ha="left", va="top", fontsize=7.5,
                 color="black" if violations == 0 else "red",
                 bbox=dict(boxstyle="round,pad=0.3", fc="white", ec="0.8", lw=0.5))
    ax_hist.set_xlabel(r"ratio  $\delta\,/\,2\sigma_{\max}(Q)\,\sigma_{\max}(K)\,"
                       r"\Vert y\Vert\,\max_i \Vert x_i\Vert$")
    ax_hist.set_ylabel("trials")
    ax_hist.set_title("the weight-norm bound never fails")

    n_col = result.params["n"]
    for j, (d_model, runs) in enumerate(by_d_model.items()):
        dodge = 2.0 ** (0.12 * (j - (len(by_d_model) - 1) / 2))  # side by side at equal n
        for row, ratios in runs:
            ax_n.errorbar(n_col[row] * dodge, ratios.mean(),
                          yerr=[[ratios.mean() - ratios.min()], [ratios.max() - ratios.mean()]],
                          color=colours[d_model], marker="o", ms=3.5, mfc="none", lw=0.8,
                          capsize=2)
    common.log2_axis(ax_n, "x")
    ns = result.distinct("n")
    ax_n.set_xlim(min(ns) / 1.6, max(ns) * 1.6)
    ax_n.set_yscale("log")
    common.label_short_log_axis(ax_n, "y")
    ax_n.set_xlabel("number of items $n$")
    ax_n.set_ylabel("ratio (mean, range over trials)")
    ax_n.set_title("how tight the bound is")

    legend_ax.legend(handles=[Line2D([], [], color=c, lw=1.5, label=str(d))
                              for d, c in colours.items()],
                     title=r"$d_{\mathrm{model}}$", loc="upper left", borderaxespad=0.0)
    return fig


def make(path: str, outdir: str) -> list:
    """Figure weight_bound.{png,pdf}; returns the paths."""
    result = NEEDS.load(path)
    if len(result) == 0:
        raise common.ResultFileError(f"{path}: no points to plot; the run's grid was empty.")
    by_d_model = ratios_by_d_model(result)
    violations = int(result.metrics["violations"].sum())
    if violations:
        common.loud_warning(f"{path}: {violations} trial(s) where the logit spread exceeds the "
                            f"weight-norm bound (docs/science.md#weight-norm-bound); it must never fail.")
    return common.save_figure(draw(result, by_d_model), outdir, "weight_bound")


# What this module makes (analysis/products.py collects it for make_figures and the page).
PRODUCTS = (
    product.Product("weight_bound", INPUT_FILE, make,
        figures=(
        product.Figure(
            "weight_bound", "Tightness of the weight-norm bound",
            "Left: the ratio δ/bound of every trial, per d_model; the bound allows at most 1, and how far below 1 "
            "the trials stay measures how loose it is for random weights. Right: the mean ratio per point against n."),)),
)


if __name__ == "__main__":
    sys.exit(common.run_standalone(make, __doc__.splitlines()[0]))
