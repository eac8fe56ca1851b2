"""Entropy against inverse temperature (docs/science.md#figures) from an "entropy-temperature" result file
(docs/science.md#entropy-falls-with-beta): H(softmax(β·e)) falls as β rises, with dH/dβ = −β·Var_p(e) < 0.

Left: H against β for every point, one colour per n (labelled on the curves: H → ln n as β → 0),
one line style per logit law. Right: dH/dβ in closed form (lines) and by central finite
difference (markers) for a few points, with each point's largest relative difference in the
legend and the largest over every point in the title.

    /usr/bin/python3 analysis/fig_entropy_temperature.py results/entropy-temperature.h5 \
        --out results/figures
"""
from __future__ import annotations

import sys

import numpy as np
from matplotlib.lines import Line2D

import common
import product

EXPERIMENT = "entropy-temperature"
# What this module reads of the file (checked against the binary's --describe by
# analysis/tests/test_needs_declared.py).
NEEDS = common.Needs(EXPERIMENT, params=("n", "logits"), metrics=("monotone", "max_rel_error"),
                     arrays=("beta", "entropy", "dH_dbeta", "dH_dbeta_fd"))
INPUT_FILE = "entropy-temperature.h5"
MAX_DERIVATIVE_CURVES = 4


def beta_axis(ax, betas: np.ndarray) -> None:
    """Log β axis when the grid spans two decades or more (and starts above 0)."""
    lo, hi = float(np.min(betas)), float(np.max(betas))
    if lo > 0 and hi / lo >= 100:
        ax.set_xscale("log")
    ax.set_xlabel(r"inverse temperature $\beta$")


def representative_rows(result: common.Result, count: int) -> list:
    """Up to `count` rows spread evenly over the points ordered by (law, n), so the derivative
    panel shows several laws and sizes without drawing all of them."""
    order = sorted(range(len(result)), key=lambda i: (
        common.law_sort_key(str(result.params["logits"][i])), int(result.params["n"][i]), i))
    picks = np.unique(np.round(np.linspace(0, len(order) - 1, min(count, len(order)))).astype(int))
    return [order[p] for p in picks]


def n_label(n: int) -> str:
    return rf"$n = {common.power_of_two_label(n)}$  ($\ln n = {np.log(n):.2f}$)"


def draw(result: common.Result, curves: dict):
    fig, (ax_h, ax_d), legend_ax = common.new_figure(ncols=2, width=7.0, height=2.9,
                                                     legend_width=0.42)
    laws = sorted(set(result.params["logits"].tolist()), key=common.law_sort_key)
    ns = result.distinct("n")
    n_colours = dict(zip(ns, common.sequential_colours(len(ns))))
    all_betas = np.concatenate([c["beta"] for c in curves.values()])

    for row, c in curves.items():
        law, n = str(result.params["logits"][row]), int(result.params["n"][row])
        ax_h.plot(c["beta"], c["entropy"], color=n_colours[n],
                  ls=common.law_linestyle(law, laws), lw=1.1)
    for n, colour in n_colours.items():  # direct labels: a legend of sizes would crowd the panel
        ax_h.annotate(n_label(n), xy=(0.02, np.log(n)), xycoords=("axes fraction", "data"),
                      xytext=(0, 2), textcoords="offset points", va="bottom", ha="left",
                      fontsize=7.5, color=colour)
    beta_axis(ax_h, all_betas)
    ax_h.set_ylabel(r"entropy $H(\mathrm{softmax}(\beta e))$ [nats]")
    ax_h.set_ylim(0, np.log(max(ns)) * 1.15)
    monotone = result.metrics["monotone"]
    ax_h.set_title(r"$H$ decreases with $\beta$ at " + (
        "every point" if monotone.all() else f"{int(monotone.sum())} of {len(monotone)} points"),
        color="black" if monotone.all() else "red")

    rows = representative_rows(result, MAX_DERIVATIVE_CURVES)
    pick_colours = common.qualitative_colours(len(rows))
    derivative_handles = []
    for colour, row in zip(pick_colours, rows):
        c = curves[row]
        law, n = str(result.params["logits"][row]), int(result.params["n"][row])
        ax_d.plot(c["beta"], c["dH_dbeta"], color=colour, lw=1.1)
        every = max(1, len(c["beta"]) // 14)  # ≈ 14 markers per curve
        ax_d.plot(c["beta"], c["dH_dbeta_fd"], color=colour, ls="none", marker="o", ms=3.5,
                  mfc="none", mew=0.9, markevery=every)
        err = float(result.metrics["max_rel_error"][row])
        derivative_handles.append(Line2D(
            [], [], color=colour, marker="o", mfc="none", ms=3.5,
            label=rf"{law}, $n = {common.power_of_two_label(n)}$: {err:.1e}"))
    beta_axis(ax_d, all_betas)
    ax_d.set_ylabel(r"$dH/d\beta$")
    worst = float(np.nanmax(result.metrics["max_rel_error"]))
    ax_d.set_title(rf"$-\beta\,\mathrm{{Var}}_p(e)$ vs finite diff.: max rel. err {worst:.1e}")

    first = legend_ax.legend(
        handles=[Line2D([], [], color="0.2", ls=common.law_linestyle(l, laws), label=l)
                 for l in laws], title="logits (left)", loc="upper left", borderaxespad=0.0)
    legend_ax.add_artist(first)
    legend_ax.legend(
        handles=[Line2D([], [], color="0.2", lw=1.1, label="closed form"),
                 Line2D([], [], color="0.2", ls="none", marker="o", mfc="none", ms=3.5,
                        label="finite difference")] + derivative_handles,
        title="right: max rel. error", loc="lower left", borderaxespad=0.0)
    return fig


def make(path: str, outdir: str) -> list:
    """Figure entropy_temperature.{png,pdf}; returns the paths."""
    # max_rel_error may be inf where the closed form underflows to 0; it is shown, not refused
    result = NEEDS.load(path, finite=False)
    if len(result) == 0:
        raise common.ResultFileError(f"{path}: no points to plot; the run's grid was empty.")
    curves = {}
    for row, point_id in enumerate(result.ids):
        curves[row] = result.arrays(point_id)
    failed = int((result.metrics["monotone"] != 1).sum())
    if failed:
        common.loud_warning(f"{path}: entropy is not strictly decreasing in β at {failed} "
                            f"point(s) (docs/science.md#entropy-falls-with-beta says dH/dβ = −β·Var_p(e) < 0).")
    return common.save_figure(draw(result, curves), outdir, "entropy_temperature")


# What this module makes (analysis/products.py collects it for make_figures and the page).
PRODUCTS = (
    product.Product("entropy_temperature", INPUT_FILE, make,
        figures=(
        product.Figure(
            "entropy_temperature", "Entropy against inverse temperature",
            "Left: H against β for every row, from ln n at β → 0; the result says every curve falls. Right: the "
            "closed-form slope (lines) and the finite difference (markers); the title gives their largest relative "
            "difference over every point."),)),
)


if __name__ == "__main__":
    sys.exit(common.run_standalone(make, __doc__.splitlines()[0]))
