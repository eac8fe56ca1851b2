"""Max-retrieval accuracy against n (docs/science.md#figures) from an "eval-max" result file (docs/science.md#max-retrieval).

One line per normaliser of the file: the mean accuracy over trained models (seeds) with a shaded
95% interval across them (Student t; with a single model, the Wilson interval of its samples) and
each model's own accuracy as a faint dot. Beside them, the paper's published numbers (both rows,
dashed, hollow markers) and another public reproduction's softmax numbers (dotted), and chance
(10%). x: log2 n.

    /usr/bin/python3 analysis/fig_max_accuracy.py results/eval-max.h5 --out results/figures
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


def interval_note(data: mr.EvalMax) -> str:
    counts = sorted({data.models(n) for n in data.ns})
    if counts == [1]:
        return "95% Wilson interval (one model)"
    return "95% t-interval across models"


def draw(data: mr.EvalMax):
    fig, ax, legend_ax = common.new_figure(ncols=1, width=6.2, height=3.1, legend_width=0.5)
    colours = mr.normaliser_colours(data.normalisers)
    for x in data.normalisers:
        ns = [n for n in data.ns if data.has(x, n)]
        summaries = [data.summary("correct", x, n) for n in ns]
        mean = 100 * np.array([s.mean for s in summaries])
        low = 100 * np.array([s.low for s in summaries])
        high = 100 * np.array([s.high for s in summaries])
        ax.fill_between(ns, low, high, color=colours[x], alpha=0.22, lw=0)
        ax.plot(ns, mean, color=colours[x], marker="o", ms=3.5, lw=1.4, zorder=3)
        for n in ns:  # every model, so a reader sees the spread behind the interval
            per_model = 100 * data.per_model("correct", x, n)
            ax.plot(np.full(per_model.size, n), per_model, ls="none", marker=".", ms=2.5,
                    color=colours[x], alpha=0.5, zorder=2)
    for x, values in mr.PAPER_ACCURACY.items():
        ax.plot(mr.PAPER_N, values, color=colours.get(x, mr.normaliser_colours([x])[x]), ls="--",
                lw=1.0, marker="s", ms=3.5, mfc="white", mew=0.9, zorder=2)
    ax.plot(mr.OTHER_REPRODUCTION_N, mr.OTHER_REPRODUCTION_SOFTMAX, color=colours.get(
        "softmax", common.PALETTE["blue"]), ls=":", lw=1.2, marker="^", ms=3.5, mfc="white", mew=0.8, zorder=2)
    ax.axhline(mr.CHANCE, color="0.45", lw=0.8, ls=(0, (1, 2)))
    ax.annotate("chance", xy=(0.0, mr.CHANCE), xycoords=("axes fraction", "data"),
                xytext=(3, 2), textcoords="offset points", ha="left", va="bottom",
                fontsize=7, color="0.35")

    everything = list(data.ns) + list(mr.PAPER_N) + list(mr.OTHER_REPRODUCTION_N)
    common.log2_axis(ax, "x", max_ticks=12)
    ax.set_xlim(min(everything) / 1.25, max(everything) * 1.25)
    ax.set_ylim(0, 102)
    ax.set_xlabel(f"number of items $n$ (trained at $n = {data.train_n}$)")
    ax.set_ylabel("accuracy [%]")
    ax.set_title("Max retrieval: accuracy against set size")

    seeds = data.train_seeds
    ours = [Line2D([], [], color=colours[x], marker="o", ms=3.5, lw=1.4,
                   label=mr.normaliser_label(x)) for x in data.normalisers]
    ours.append(Patch(color="0.6", alpha=0.4, label=interval_note(data)))
    ours.append(Line2D([], [], color="0.4", ls="none", marker=".", ms=4, label="one model"))
    first = legend_ax.legend(handles=ours, title=f"this suite ({len(seeds)} model"
                             f"{'s' if len(seeds) != 1 else ''})", loc="upper left",
                             borderaxespad=0.0)
    legend_ax.add_artist(first)
    published = [Line2D([], [], color=mr.normaliser_colours([x])[x], ls="--", lw=1.0, marker="s",
                        ms=3.5, mfc="white", mew=0.9, label=f"paper, {mr.normaliser_label(x)}")
                 for x in mr.PAPER_ACCURACY]
    published.append(Line2D([], [], color=common.PALETTE["blue"], ls=":", lw=1.2, marker="^", ms=3.5,
                            mfc="white", mew=0.8, label="other reproduction,\nsoftmax (3 seeds)"))
    legend_ax.legend(handles=published, title="published", loc="lower left", borderaxespad=0.0)
    return fig


def make(path: str, outdir: str) -> list:
    """Figure max_accuracy.{png,pdf}; returns the paths."""
    data = mr.load_eval_max(path)
    return common.save_figure(draw(data), outdir, "max_accuracy")


# What this module makes (analysis/products.py collects it for make_figures and the page).
PRODUCTS = (
    product.Product("max_accuracy", INPUT_FILE, make,
        figures=(
        product.Figure(
            "max_accuracy", "Accuracy against n",
            "Accuracy of softmax and adaptive temperature, mean over trained models with a 95% interval, beside the "
            "paper's published points and another public reproduction; chance is 10%. The gap between the two curves"
            " is adaptive temperature's gain; by its rule it leaves every row whose entropy is above 5.94 nats "
            "unchanged (β = 1 there)."),)),
)


if __name__ == "__main__":
    sys.exit(common.run_standalone(make, __doc__.splitlines()[0]))
