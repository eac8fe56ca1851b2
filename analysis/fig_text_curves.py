"""Learning curves of the text models (docs/science.md#running-the-text-study): from a "train-text"
result file's training curve (/arrays curve_step, curve_eval_exact_match, curve_train_loss,
curve_eval_loss), text_study_curves.png/pdf (or, from the pilot's own file train-text-pilot.h5,
text_study_curves_pilot.png/pdf).

One row per task (algorithm mix and positional scheme); left: exact match on the fixed evaluation
set at the training lengths (teacher-forced, which equals greedy exact match of the whole answer)
against the step, with the competence gate's 95% (the gate itself is judged on sharp-eval-text's
greedy exact match of the final output); right: training loss (solid) and evaluation loss (dashed)
per answer token. One colour per trained normaliser; seed 1 (the pilot) drawn thick, other seeds
thin.

    /usr/bin/python3 analysis/fig_text_curves.py results/train-text.h5 --out results/figures
"""
from __future__ import annotations

import sys

import numpy as np
from matplotlib.lines import Line2D

import common
import product
import competence_gate
import max_retrieval as mr

EXPERIMENT = "train-text"
INPUT_FILE = "train-text.h5"
PILOT_FILE = "train-text-pilot.h5"
SERIES = ("curve_step", "curve_eval_exact_match", "curve_train_loss", "curve_eval_loss")
# What this module reads of the file (checked against the binary's --describe by
# analysis/tests/test_needs_declared.py).
NEEDS = common.Needs(EXPERIMENT, params=("normaliser",), arrays=SERIES)
PILOT_SEED = 1


def curves(path: str) -> list:
    """[(task label, normaliser, seed, {series: array})] of every model of the file."""
    r = NEEDS.load(path)
    out = []
    for i, point in enumerate(r.ids):
        p = {name: common._decode(values[i]) for name, values in r.params.items()}
        arrays = r.arrays(point, SERIES)
        task = f"{p.get('algorithms', '?')}, positions {p.get('positional', '?')}"
        out.append((task, str(p["normaliser"]), int(p.get("seed", PILOT_SEED)),
                    {s: np.asarray(arrays[s], dtype=float) for s in SERIES}))
    return out


def draw(models: list, title: str):
    tasks = list(dict.fromkeys(m[0] for m in models))
    names = list(dict.fromkeys(m[1] for m in models))
    colours = mr.normaliser_colours(names)
    fig, axes, legend_ax = common.new_figure(ncols=2 * len(tasks), width=5.2 * len(tasks) + 1.8, height=2.6,
                                             legend_width=0.55 / len(tasks))
    for t, task in enumerate(tasks):
        ax_exact, ax_loss = axes[2 * t], axes[2 * t + 1]
        for _, name, seed, c in (m for m in models if m[0] == task):
            width, alpha = (1.5, 1.0) if seed == PILOT_SEED else (0.7, 0.5)
            ax_exact.plot(c["curve_step"], 100 * c["curve_eval_exact_match"], color=colours[name], lw=width,
                          alpha=alpha)
            ax_loss.plot(c["curve_step"], c["curve_train_loss"], color=colours[name], lw=width, alpha=alpha)
            ax_loss.plot(c["curve_step"], c["curve_eval_loss"], color=colours[name], lw=width, alpha=alpha, ls="--")
        ax_exact.axhline(100 * competence_gate.GATE, color="0.3", ls=":", lw=1.0)
        ax_exact.set_ylim(-2, 102)
        ax_exact.set_ylabel("exact match, training lengths [%]")
        ax_exact.set_title(task.replace("_", " "))
        ax_loss.set_yscale("log")
        ax_loss.set_ylabel("loss per answer token [nats]")
        for ax in (ax_exact, ax_loss):
            ax.set_xlabel("step")
    handles = [Line2D([], [], color=colours[n], lw=1.5, label=n) for n in names]
    handles += [Line2D([], [], color="0.3", lw=1.5, label=f"seed {PILOT_SEED} (pilot)"),
                Line2D([], [], color="0.3", lw=0.7, alpha=0.5, label="other seeds"),
                Line2D([], [], color="0.3", lw=1.0, ls="--", label="evaluation loss"),
                Line2D([], [], color="0.3", lw=1.0, ls=":", label=f"gate {100 * competence_gate.GATE:g}%")]
    legend_ax.legend(handles=handles, loc="upper left", borderaxespad=0.0)
    fig.suptitle(title, fontsize=9)
    return fig


def make(path: str, outdir: str, name: str = "text_study_curves") -> list:
    models = curves(path)
    if not models:
        raise common.ResultFileError(f"{path}: no trained model")
    return common.save_figure(draw(models, "Text models: learning curves (training curve of each model)"),
                              outdir, name)


def make_pilot(path: str, outdir: str) -> list:
    return make(path, outdir, "text_study_curves_pilot")


# What this module makes (analysis/products.py collects it for make_figures and the page).
PRODUCTS = (
    product.Product("text_study_curves", INPUT_FILE, make,
        figures=(
        product.Figure(
            "text_study_curves", "Learning curves",
            "Every model's training curve, one colour per arm, seed 1 (the pilot) thick: exact match on the fixed "
            "evaluation set at the training lengths (left) and training (solid) and evaluation (dashed) loss (right)"
            " against the step; dotted, the gate's 95%. Compare where each arm levels off with the gate."),)),
    product.Product("text_study_curves_pilot", PILOT_FILE, make_pilot,
        figures=(
        product.Figure(
            "text_study_curves_pilot", "The pilot's learning curves",
            "Seed 1 of every arm (the pilot, before the other seeds are trained): exact match on the fixed "
            "evaluation set at the training lengths and the losses against the step; dotted, the gate's 95% (judged "
            "on the greedy evaluation, not on this curve)."),)),
)


if __name__ == "__main__":
    sys.exit(common.run_standalone(make, __doc__.splitlines()[0]))
