"""Entropy of the trained max-retrieval head against n (docs/science.md#figures) from an "eval-max" result file
(docs/science.md#max-retrieval).

Left: the head's mean attention entropy (nats) per normaliser, mean over trained models with a
shaded 95% interval (t across models; one model: t over its samples), beside ln n, the entropy of
uniform attention, which a dispersing head approaches. Right: the mean weight the head puts on the
true maximum, beside 1/n (uniform attention). x: log2 n.

    /usr/bin/python3 analysis/fig_head_entropy.py results/eval-max.h5 --out results/figures
"""
from __future__ import annotations

import sys

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

import common
import product
import max_retrieval as mr

EXPERIMENT = mr.EXPERIMENT
INPUT_FILE = mr.INPUT_FILE


def draw(data: mr.EvalMax):
    fig, (ax_h, ax_w), legend_ax = common.new_figure(ncols=2, width=7.0, height=2.8,
                                                     legend_width=0.42)
    colours = mr.normaliser_colours(data.normalisers)
    for ax, what in ((ax_h, "entropy"), (ax_w, "weight_on_max")):
        for x in data.normalisers:
            ns = [n for n in data.ns if data.has(x, n)]
            summaries = [data.summary(what, x, n) for n in ns]
            ax.fill_between(ns, [s.low for s in summaries], [s.high for s in summaries],
                            color=colours[x], alpha=0.22, lw=0)
            ax.plot(ns, [s.mean for s in summaries], color=colours[x], marker="o", ms=3.5,
                    lw=1.4, zorder=3)
    dense = np.geomspace(min(data.ns), max(data.ns), 200)
    ax_h.plot(dense, np.log(dense), color="0.2", ls="--", lw=0.9)
    ax_w.plot(dense, 1 / dense, color="0.2", ls="--", lw=0.9)

    for ax in (ax_h, ax_w):
        common.log2_axis(ax, "x", max_ticks=10)
        ax.set_xlim(min(data.ns) / 1.3, max(data.ns) * 1.3)
        ax.set_xlabel(f"number of items $n$ (trained at $n = {data.train_n}$)")
    ax_h.set_ylim(0, np.log(max(data.ns)) * 1.05)
    ax_h.set_ylabel("attention entropy [nats]")
    ax_h.set_title("Entropy of the head's attention")
    ax_w.set_yscale("log")
    ax_w.set_ylabel("weight on the true maximum")
    ax_w.set_title("Weight on the true maximum")

    counts = sorted({data.models(n) for n in data.ns})
    handles = [Line2D([], [], color=colours[x], marker="o", ms=3.5, lw=1.4,
                      label=mr.normaliser_label(x)) for x in data.normalisers]
    handles.append(Patch(color="0.6", alpha=0.4, label="95% interval " + (
        "over samples\n(one model)" if counts == [1] else "across\nmodels")))
    handles += [Line2D([], [], color="0.2", ls="--", lw=0.9,
                       label="uniform attention\n(left $\\ln n$, right $1/n$)")]
    seeds = data.train_seeds
    legend_ax.legend(handles=handles, loc="upper left", borderaxespad=0.0,
                     title=f"{len(seeds)} model{'s' if len(seeds) != 1 else ''}")
    return fig


def make(path: str, outdir: str) -> list:
    """Figure head_entropy.{png,pdf}; returns the paths."""
    data = mr.load_eval_max(path)
    return common.save_figure(draw(data), outdir, "head_entropy")


# What this module makes (analysis/products.py collects it for make_figures and the page).
PRODUCTS = (
    product.Product("head_entropy", INPUT_FILE, make,
        figures=(
        product.Figure(
            "head_entropy", "Entropy of the trained head against n",
            "Left: the head's attention entropy against n, beside ln n (uniform attention, dashed). Right: the "
            "weight on the true maximum against n, beside 1/n (dashed)."),)),
)


if __name__ == "__main__":
    sys.exit(common.run_standalone(make, __doc__.splitlines()[0]))
