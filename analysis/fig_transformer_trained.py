"""Head entropy of trained text models against prompt length (docs/science.md#figures), beside the
random models' (docs/science.md#transformers-disperse, #algorithmic-text): the analogue of the
paper's Gemma entropy figure for models trained here.

Input: a "transformer-dispersion" file of trained models on prompts of their own task
(sweeps/*/transformer-dispersion-trained.cfg); the random models come from transformer-dispersion.h5
in the same directory (left out, and said so in the title, when it is absent).
Top row: entropy at the answer position (a prompt's last row, whose k keys are the whole prompt)
against the prompt length, beside ln k (dotted: uniform attention on that row). Bottom row: mean
entropy over every row against uniform causal attention's ln(n!)/n (dashed) and ln n (dotted).
First column: random models (NoPE with LayerNorm at the init scale nearest 1, and the ALiBi negative
control) on uniform tokens against n. Then one column per trained task, one colour per trained-in
normaliser: the mean over heads (and seeds), shaded from the lowest to the highest head; grey: the
prompts of the training lengths. Adaptive-temperature heads meet softmax's once H > 5.94 (β = 1).

    /usr/bin/python3 analysis/fig_transformer_trained.py results/transformer-dispersion-trained.h5 --out results/figures
"""
from __future__ import annotations

import math
import sys

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
import matplotlib.pyplot as plt

import common
import product
import trained_dispersion as td
import transformer_panels as tp

EXPERIMENT = td.EXPERIMENT
INPUT_FILE = td.INPUT_FILE
ADAPTIVE_MEETS_SOFTMAX = 5.9445   # β_poly(H) = 1 there (docs/science.md#adaptive-temperature)
ROWS = (("entropy_last", "entropy of the last row (nats)\n(trained: the answer position)"),
        ("entropy_all_mean", "mean row entropy (nats)"))
RANDOM_MODELS = (("none", 1, "random NoPE"), ("alibi", 1, "random ALiBi (control)"))
MAX_COLUMNS = 4


def random_curves(path: str | None) -> list:
    """[(label, n [N], {array: [N, heads]})] for the random reference models, [] without a file."""
    if path is None:
        return []
    result = common.load_result(path, EXPERIMENT)
    out = []
    for check, rows in tp.panel_models(result):
        for positional, layer_norm, label in RANDOM_MODELS:
            if (check.key["positional"], check.key["layer_norm"]) == (positional, layer_norm) \
                    and check.key["checkpoint"] == "none":
                series = {name: tp.head_series(result, rows, name) for name, _ in ROWS}
                out.append((label, np.asarray(result.params["n"][rows], dtype=float), series))
    return out


def trained_curves(result: common.Result, models: list) -> list:
    """[(task, [(normaliser, tokens [N], {array: [N, heads·seeds]}, train_tokens)])] for the models on
    task prompts, one entry per task (algorithm mix); seeds pooled at the n they share."""
    by_task: dict = {}
    for (task, normaliser, kind), members in td.groups(models).items():
        if kind != "task":
            continue
        shared = sorted(set.intersection(*(set(m.n.tolist()) for m in members)))
        if len(shared) < 2:
            continue
        series, tokens = {}, []
        for m in members:
            keep = np.isin(m.n, shared)
            tokens.append(m.tokens[keep])
            for name, _ in ROWS:
                series.setdefault(name, []).append(td.head_series(result, m, name)[keep])
        series = {name: np.concatenate(parts, axis=1) for name, parts in series.items()}
        train = np.nanmean([m.train_tokens for m in members]) if any(np.isfinite(m.train_tokens) for m in members) \
            else float("nan")
        by_task.setdefault(task, []).append((normaliser, np.mean(tokens, axis=0), series, train))
    return [(task, sorted(curves, key=lambda c: td.normaliser_order(c[0]))) for task, curves in sorted(by_task.items())]


def band(ax, x, values, colour, label=None):
    """Mean over heads (solid) and the band from the lowest to the highest head."""
    ax.fill_between(x, values.min(axis=1), values.max(axis=1), color=colour, alpha=0.18, lw=0)
    ax.plot(x, values.mean(axis=1), color=colour, lw=1.2, marker="o", ms=2.5, label=label)


def baselines(ax, x_lo, x_hi, row: int):
    x = np.geomspace(max(x_lo, 2.0), x_hi, 64)
    ax.plot(x, np.log(x), color="black", lw=0.8, ls=":")
    if row == 1:
        ax.plot(x, [math.lgamma(v + 1) / v for v in x], color="black", lw=1.0, ls="--")


def draw(random: list, tasks: list, random_missing: bool):
    tp.matplotlib_style()
    columns = ([("random", None)] if random else []) + [(task, curves) for task, curves in tasks]
    blocks = [columns[i:i + MAX_COLUMNS] for i in range(0, len(columns), MAX_COLUMNS)]
    ncols = min(MAX_COLUMNS, len(columns))
    fig = plt.figure(figsize=(common.FULL_WIDTH, 4.1 * len(blocks) + 0.6), layout="constrained")
    grid = fig.add_gridspec(2 * len(blocks) + 1, ncols, height_ratios=[1.0] * (2 * len(blocks)) + [0.16])
    normalisers = sorted({c[0] for _, curves in tasks for c in curves}, key=td.normaliser_order)
    colours = dict(zip(normalisers, common.qualitative_colours(max(len(normalisers), 1))))
    random_colours = ["0.25", "#b2182b"]
    axes = []
    for b, block in enumerate(blocks):
        for c, (name, curves) in enumerate(block):
            for r, (array, ylabel) in enumerate(ROWS):
                ax = fig.add_subplot(grid[2 * b + r, c])
                axes.append(ax)
                if curves is None:
                    lo, hi = min(n[0] for _, n, _ in random), max(n[-1] for _, n, _ in random)
                    for (label, n, series), colour in zip(random, random_colours):
                        band(ax, n, series[array], colour)
                    title, xlabel = "random models, uniform tokens", "input length $n$"
                else:
                    lo = min(t[0] for _, t, _, _ in curves)
                    hi = max(t[-1] for _, t, _, _ in curves)
                    for normaliser, tokens, series, _ in curves:
                        band(ax, tokens, series[array], colours[normaliser])
                        if normaliser == "adaptive":
                            ax.axhline(ADAPTIVE_MEETS_SOFTMAX, color="0.6", lw=0.6)
                    train = np.nanmax([t for _, _, _, t in curves]) if any(np.isfinite(t) for *_, t in curves) \
                        else float("nan")
                    if np.isfinite(train) and train > lo:
                        ax.axvspan(lo, train, color="0.88", lw=0, zorder=0)
                    title, xlabel = f"trained: {name}", "prompt length (tokens)"
                baselines(ax, lo, hi, r)
                ax.set_xscale("log", base=2)
                common.log2_axis(ax, "x", max_ticks=5)
                if r == 0:
                    ax.set_title(title, fontsize=8)
                else:
                    ax.set_xlabel(xlabel)
                if c == 0:
                    ax.set_ylabel(ylabel, fontsize=7.5)
    top = max(ax.get_ylim()[1] for ax in axes)
    for ax in axes:
        ax.set_ylim(0, top)   # one scale: random and trained entropies side by side
    legend_ax = fig.add_subplot(grid[-1, :])
    legend_ax.axis("off")
    handles = [Line2D([], [], color=colours[n], lw=1.2, marker="o", ms=2.5, label=f"trained {n}")
               for n in normalisers]
    handles += [Line2D([], [], color=col, lw=1.2, marker="o", ms=2.5, label=label)
                for (label, _, _), col in zip(random, random_colours)]
    handles += [Patch(color="0.5", alpha=0.3, label="lowest..highest head"),
                Patch(color="0.88", label="training lengths"),
                Line2D([], [], color="black", lw=0.8, ls=":", label=r"$\ln n$ (uniform, last row)"),
                Line2D([], [], color="black", lw=1.0, ls="--", label=r"$\ln(n!)/n$ (uniform, causal mean)")]
    if "adaptive" in normalisers:
        handles.append(Line2D([], [], color="0.6", lw=0.6, label="H = 5.94: adaptive's β = 1 above"))
    legend_ax.legend(handles=handles, loc="center", ncol=4, fontsize=7, frameon=False)
    note = " (random models: transformer-dispersion.h5 not found)" if random_missing else ""
    fig.suptitle("Head entropy of trained text models against prompt length" + note, fontsize=9)
    return fig


def make(path: str, outdir: str) -> list:
    """Figure transformer_entropy_trained.{png,pdf}; returns the paths."""
    result, models = td.trained_models(path)
    tasks = trained_curves(result, models)
    if not tasks:
        raise common.ResultFileError(f"{path}: no trained model has task prompts at two lengths; "
                                     f"nothing to plot against prompt length.")
    random_path = td.random_file_beside(path)
    try:
        random = random_curves(random_path)
    except common.ResultFileError as err:
        common.loud_warning(f"random models left out: {err}")
        random = []
    return common.save_figure(draw(random, tasks, random_path is None), outdir, "transformer_entropy_trained")


# What this module makes (analysis/products.py collects it for make_figures and the page).
PRODUCTS = (
    product.Product("transformer_entropy_trained", INPUT_FILE, make,
        figures=(
        product.Figure(
            "transformer_entropy_trained", "Head entropy of trained text models against prompt length",
            "Top: entropy at the answer position (the prompt's last row) against the prompt length, bottom: mean "
            "entropy over every row; mean over heads, shaded from the lowest to the highest head. Left: random "
            "models on uniform tokens (NoPE; ALiBi, the negative control); then each trained task, one colour per "
            "trained-in normaliser, grey where the prompts are of training lengths, beside ln n (dotted) and "
            "ln(n!)/n (dashed). Compare each curve's climb past the training lengths with the baselines'; a head "
            "whose logit spread δ is large (e^δ far above n) can stay sharp at every n measured. Adaptive "
            "temperature leaves a row with H > 5.94 unchanged (β = 1 there)."),)),
)


if __name__ == "__main__":
    sys.exit(common.run_standalone(make, __doc__.splitlines()[0]))
