"""Attention entropy per head against n (docs/science.md#figures) from a "transformer-dispersion"
result file (docs/science.md#transformers-disperse, #measuring-heads): the analogue of the paper's
Gemma entropy figure.

One panel per model (positional scheme × LayerNorm, init scale nearest 1). Lines: each head's
entropy averaged over every query row (causal rows 1…n), coloured by layer; dashed black: uniform
attention's value ln(n!)/n for causal rows (ln n for an encoder); dotted black: ln n, the last row's
uniform entropy. Dispersing heads climb parallel to the baseline; with ALiBi, or index positions
without LayerNorm, heads stay low or fall. For adaptive-temperature heads
(docs/science.md#adaptive-temperature) the curves meet softmax's once H > 5.94, where β = 1.

    /usr/bin/python3 analysis/fig_transformer_entropy.py results/transformer-dispersion.h5 --out results/figures
"""
from __future__ import annotations

import sys

import numpy as np
from matplotlib.lines import Line2D

import common
import product
import transformer_panels as tp

EXPERIMENT = "transformer-dispersion"
# What this module reads of the file (checked against the binary's --describe by
# analysis/tests/test_needs_declared.py).
NEEDS = common.Needs(EXPERIMENT, params=("n", "positional", "layer_norm", "init_scale", "causal"),
                     metrics=("uniform_baseline", "entropy_all_mean"))
INPUT_FILE = "transformer-dispersion.h5"
ADAPTIVE_MEETS_SOFTMAX = 5.9445   # β_poly(H) = 1 there (docs/science.md#adaptive-temperature)


def draw(result: common.Result, panels: list):
    fig, axes, legend_ax = tp.panel_grid(len(panels))
    for ax, (check, rows) in zip(axes, panels):
        n = result.params["n"][rows].astype(float)
        entropy = tp.head_series(result, rows, "entropy_all_mean")      # [N, L·H]
        layers, heads = check.sup_delta.shape[1:]
        colours = tp.layer_colours(layers)
        for j in range(entropy.shape[1]):
            ax.plot(n, entropy[:, j], color=colours[j // heads], lw=1.0, marker="o", ms=2)
        ax.plot(n, result.metrics["uniform_baseline"][rows], color="black", lw=1.0, ls="--")
        ax.plot(n, np.log(n), color="black", lw=0.8, ls=":")
        if check.key["normaliser"] == "adaptive":
            ax.axhline(ADAPTIVE_MEETS_SOFTMAX, color="0.5", lw=0.6)
        common.log2_axis(ax, "x", max_ticks=6)
        ax.set_ylim(bottom=0)
        ax.set_title(tp.panel_title(check), fontsize=8)
        ax.set_xlabel("input length $n$")
    axes[0].set_ylabel("mean row entropy (nats)")
    layers = max(c.sup_delta.shape[1] for c, _ in panels)
    causal = all(c.key["causal"] for c, _ in panels)
    handles = [Line2D([], [], color=c, lw=1.0, marker="o", ms=2, label=f"layer {l} heads")
               for l, c in enumerate(tp.layer_colours(layers))]
    handles += [Line2D([], [], color="black", lw=1.0, ls="--",
                       label=r"uniform: $\ln(n!)/n$" if causal else r"uniform: $\ln n$ (causal: $\ln(n!)/n$)"),
                Line2D([], [], color="black", lw=0.8, ls=":", label=r"$\ln n$")]
    legend_ax.legend(handles=handles, loc="center", ncol=min(len(handles), 4), fontsize=7.5, frameon=False)
    return fig


def make(path: str, outdir: str) -> list:
    """Figure transformer_entropy.{png,pdf}; returns the paths."""
    result, panels = tp.load_panels(path, NEEDS)
    return common.save_figure(draw(result, panels), outdir, "transformer_entropy")


# What this module makes (analysis/products.py collects it for make_figures and the page).
PRODUCTS = (
    product.Product("transformer_entropy", INPUT_FILE, make,
        figures=(
        product.Figure(
            "transformer_entropy", "Head entropy against n",
            "Mean row entropy of every head against n beside uniform attention's ln(n!)/n (dashed) and ln n "
            "(dotted), one panel per model. Adaptive temperature leaves a row with H > 5.94 unchanged (β = 1 there)."),)),
)


if __name__ == "__main__":
    sys.exit(common.run_standalone(make, __doc__.splitlines()[0]))
