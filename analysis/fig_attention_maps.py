"""Attention maps of the trained max-retrieval head (docs/science.md#figures) from an "eval-max" result file.

A grid of heatmaps: one row per normaliser (softmax, adaptive temperature, …), one column per set
size n of the file. Each panel is one model's (the first training seed's, first evaluation seed's)
/arrays/<id>/map.X [map_samples, map_items]: for each of the recorded sets (rows), the head's
weights on its map_items highest-priority items, highest first (columns). One colour scale for
every panel, from 0 to the largest weight drawn, so the eye compares sharpness across n: sharp on
the maximum at n = 16, spread thin at large n.

    /usr/bin/python3 analysis/fig_attention_maps.py results/eval-max.h5 --out results/figures
"""
from __future__ import annotations

import sys

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

import common
import product
import max_retrieval as mr

EXPERIMENT = mr.EXPERIMENT
# What this module reads of the file (checked against the binary's --describe by
# analysis/tests/test_needs_declared.py).
NEEDS = common.Needs(EXPERIMENT, params=("checkpoint", "n", "normaliser", "seed"), metrics=("train_seed",))
INPUT_FILE = mr.INPUT_FILE
MAX_COLUMNS = 13  # 2^4..2^16 (make paper); beyond, panels get too narrow: every k-th size is shown


def first_model_points(result: common.Result) -> tuple:
    """(checkpoint, train seed, eval seed, {n: row}) of the first model: smallest training seed
    (ties: checkpoint text), smallest evaluation seed."""
    models = sorted({(int(result.metrics["train_seed"][i]), str(result.params["checkpoint"][i]))
                     for i in range(len(result))})
    train_seed, checkpoint = models[0]
    rows = result.rows(checkpoint=checkpoint)
    eval_seed = min(int(result.params["seed"][i]) for i in rows)
    by_n = {}
    for i in result.rows(checkpoint=checkpoint, seed=eval_seed):
        by_n.setdefault(int(result.params["n"][i]), i)
    return checkpoint, train_seed, eval_seed, dict(sorted(by_n.items()))


def shown_sizes(ns: list) -> list:
    """Every size when they fit; otherwise every k-th from the smallest (a regular stride keeps
    the columns evenly spaced in log n), and the largest always."""
    if len(ns) <= MAX_COLUMNS:
        return list(ns)
    stride = -(-len(ns) // MAX_COLUMNS)
    picks = list(ns[::stride])
    if picks[-1] != ns[-1]:
        picks.append(ns[-1])
    return picks


def read_maps(result: common.Result, by_n: dict, normalisers: list) -> dict:
    """(normaliser, n) -> [map_samples, map_items] weights; refuses missing or non-finite maps."""
    maps = {}
    for n, row in by_n.items():
        point_id = result.ids[row]
        arrays = result.arrays(point_id)
        for x in normalisers:
            name = f"map.{x}"
            if name not in arrays or np.size(arrays[name]) == 0:
                raise common.ResultFileError(
                    f"{result.path}: /arrays/{point_id} has no attention map {name!r}; the "
                    f"evaluation ran with --map-samples 0 or by another version of sharp-eval-max. "
                    f"Re-run it with --map-samples 32.")
            values = np.asarray(arrays[name], dtype=float)
            if values.ndim != 2:
                raise common.ResultFileError(
                    f"{result.path}: /arrays/{point_id}/{name} has shape {values.shape}, expected "
                    f"[map_samples, map_items]; re-run the evaluation.")
            result.require_finite(f"/arrays/{point_id}/{name}", values, point_id)
            maps[(x, n)] = values
    return maps


def draw(result: common.Result, maps: dict, normalisers: list, ns: list, all_ns: list,
         train_seed: int, eval_seed: int):
    matplotlib.rcParams.update(common.STYLE)  # common.new_figure makes one row; this is a grid
    fig = plt.figure(figsize=(7.0, 1.05 + 1.25 * len(normalisers)), layout="constrained")
    axes = fig.subplots(len(normalisers), len(ns), squeeze=False, sharex=False, sharey=True)
    vmax = max(float(m.max()) for m in maps.values())
    vmax = vmax if vmax > 0 else 1.0
    image = None
    for r, x in enumerate(normalisers):
        for c, n in enumerate(ns):
            ax = axes[r, c]
            weights = maps[(x, n)]  # [map_samples, map_items]
            image = ax.imshow(weights, aspect="auto", cmap="viridis", vmin=0.0, vmax=vmax,
                              interpolation="nearest")
            ax.grid(False)
            samples, items = weights.shape
            ax.set_xticks([0, items - 1], [1, items])
            ax.set_yticks([0, samples - 1], [1, samples])
            ax.tick_params(length=2, labelsize=6.5, direction="out")
            if r == 0:  # with many columns "n =" once, in the figure title, saves width
                ax.set_title(f"${common.power_of_two_label(n)}$" if len(ns) > 9 else
                             f"$n = {common.power_of_two_label(n)}$", fontsize=8.5)
            if c == 0:
                ax.set_ylabel(f"{mr.normaliser_label(x)}\nset", fontsize=8.5)
    cbar = fig.colorbar(image, ax=axes, shrink=0.9, aspect=25, pad=0.015)
    cbar.set_label("attention weight", fontsize=8)
    cbar.ax.tick_params(labelsize=7)
    shown = "" if len(ns) == len(all_ns) else f"; {len(ns)} of {len(all_ns)} sizes shown"
    fig.supxlabel("items by decreasing priority (1 = the maximum)", fontsize=8.5)
    sizes = "columns: set size $n$; " if len(ns) > 9 else ""
    fig.suptitle(f"Attention of the trained head ({sizes}training seed {train_seed}, evaluation "
                 f"seed {eval_seed}{shown})", fontsize=9)
    return fig


def make(path: str, outdir: str) -> list:
    """Figure attention_maps.{png,pdf}; returns the paths."""
    result = common.load_result(path, EXPERIMENT)
    if len(result) == 0:
        raise common.ResultFileError(f"{path}: no points to plot; the run's grid was empty.")
    NEEDS.check(result)
    checkpoint, train_seed, eval_seed, by_n = first_model_points(result)
    normalisers = []
    for i in by_n.values():
        normalisers += [x for x in mr.split_normalisers(result.params["normaliser"][i])
                        if x not in normalisers]
    all_ns = list(by_n)
    ns = shown_sizes(all_ns)
    maps = read_maps(result, {n: by_n[n] for n in ns}, normalisers)
    fig = draw(result, maps, normalisers, ns, all_ns, train_seed, eval_seed)
    return common.save_figure(fig, outdir, "attention_maps")


# What this module makes (analysis/products.py collects it for make_figures and the page).
PRODUCTS = (
    product.Product("attention_maps", INPUT_FILE, make,
        figures=(
        product.Figure(
            "attention_maps", "Attention maps",
            "Each panel: the head's weights on the 16 highest-priority items of 32 sets (rows), highest first. "
            "Compare across n how much weight the first column (the maximum) keeps, and at one n softmax's rows with"
            " adaptive's; adaptive temperature can only sharpen a row whose entropy is below 5.94 nats (β > 1 "
            "there)."),)),
)


if __name__ == "__main__":
    sys.exit(common.run_standalone(make, __doc__.splitlines()[0]))
