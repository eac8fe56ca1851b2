"""Algorithmic text: exact match of the final output against length (docs/science.md#figures), from
an "eval-text" result file (docs/science.md#algorithmic-text).

One panel per algorithm; one curve per trained-in normaliser (the models' own heads), and a dashed
curve where a normaliser was applied at inference only (e.g. adaptive on a softmax-trained model).
Each point is the mean over the models (seeds) of that normaliser with the 95% t-interval across
them (shaded); with one model, its exact match and the Wilson 95% interval of its samples. The
training lengths are marked by grey ticks; lengths beyond them are extrapolation. The
trained normaliser of each model is read from its training file (the checkpoint's FILE.h5, looked up
beside the evaluation file first); without it the curves are labelled by model id.

    /usr/bin/python3 analysis/fig_text_accuracy.py results/eval-text.h5 --out results/figures
"""
from __future__ import annotations

import sys

import numpy as np
from matplotlib.lines import Line2D

import common
import product
from max_retrieval import normaliser_colours, t_interval, wilson_interval
from text_results import trained_normalisers

EXPERIMENT = "eval-text"
# What this module reads of the file (checked against the binary's --describe by
# analysis/tests/test_needs_declared.py).
NEEDS = common.Needs(EXPERIMENT, params=("checkpoint", "algorithm", "length", "samples"), metrics=("evaluated",))
INPUT_FILE = "eval-text.h5"


def seed_interval(fractions, samples, models) -> tuple:
    """(mean, low, high) of exact match at one length: with two or more models (seeds) the mean
    over models and its 95% t-interval clipped to [0, 1]; with one, its fraction and the Wilson
    interval of its samples. A model evaluated at several evaluation seeds has them pooled first."""
    right, total = {}, {}
    for f, k, m in zip(fractions, samples, models):
        right[m] = right.get(m, 0.0) + f * k
        total[m] = total.get(m, 0.0) + k
    if len(total) >= 2:
        mean, low, high = t_interval([right[m] / total[m] for m in total])
        return mean, max(0.0, low), min(1.0, high)
    (m,) = total
    low, high = wilson_interval(right[m], total[m])
    return right[m] / total[m], low, high


def make(path: str, outdir: str) -> list:
    r = NEEDS.load(path, finite=False)
    evaluated = np.asarray(r.metrics["evaluated"]) == 1
    if not evaluated.any():
        raise common.ResultFileError(f"{path}: no point was evaluated (every algorithm outside the models' training)")
    refs = [str(common._decode(x)) for x in r.params["checkpoint"]]
    algos = [str(common._decode(x)) for x in r.params["algorithm"]]
    lengths = np.asarray(r.params["length"], dtype=int)
    samples = np.asarray(r.params["samples"], dtype=float)
    in_training = np.asarray(r.metrics.get("in_training_lengths", np.zeros(len(r))), dtype=int)
    trained = trained_normalisers(path, sorted(set(refs)))
    items = sorted({name.split(".", 1)[1] for name in r.metrics if name.startswith("exact_final.")})

    panels = [a for a in dict.fromkeys(algos) if any(evaluated[i] for i in range(len(r)) if algos[i] == a)]
    curves = sorted({(trained[refs[i]], item) for i in range(len(r)) if evaluated[i] for item in items
                     if np.isfinite(r.metrics[f"exact_final.{item}"][i])})
    # A normaliser applied at inference equal to the trained one is the trained curve again.
    curves = [(t, item) for t, item in curves if item == "trained" or item != t]
    names = sorted({t for t, _ in curves})
    colours = normaliser_colours(names)   # softmax blue, adaptive orange, as in every figure

    fig, axes, legend_ax = common.new_figure(ncols=len(panels), width=max(3.2, 2.6 * len(panels)) + 1.4,
                                             height=2.8, legend_width=0.55 if len(panels) > 1 else 0.45)
    axes = [axes] if len(panels) == 1 else axes
    for ax, algo in zip(axes, panels):
        rows = [i for i in range(len(r)) if algos[i] == algo and evaluated[i]]
        ns = sorted({int(lengths[i]) for i in rows})
        for t, item in curves:
            xs, mean, low, high = [], [], [], []
            for n in ns:
                sel = [i for i in rows if lengths[i] == n and trained[refs[i]] == t
                       and np.isfinite(r.metrics[f"exact_final.{item}"][i])]
                if not sel:
                    continue
                m, lo, hi = seed_interval([r.metrics[f"exact_final.{item}"][i] for i in sel],
                                          [samples[i] for i in sel], [refs[i] for i in sel])
                xs.append(n)
                mean.append(100 * m)
                low.append(100 * lo)
                high.append(100 * hi)
            if not xs:
                continue
            ls = "-" if item == "trained" else "--"
            ax.fill_between(xs, low, high, color=colours[t], alpha=0.18, lw=0)
            ax.plot(xs, mean, color=colours[t], ls=ls, marker="o" if item == "trained" else "s", ms=3, lw=1.3)
        for n in sorted({int(lengths[i]) for i in rows if in_training[i] == 1}):
            ax.axvline(n, color="0.75", lw=0.8, zorder=0)
        ax.set_xscale("log", base=2)
        ax.set_xticks([n for n in (4, 8, 16, 32, 64) if ns and ns[0] <= n <= ns[-1]])
        ax.get_xaxis().set_major_formatter(lambda v, _: f"{int(v)}")
        ax.set_ylim(-2, 102)
        ax.set_title(algo.replace("_", " "))
        ax.set_xlabel("length (keys)")
    axes[0].set_ylabel("exact match of the final output [%]")
    handles = [Line2D([], [], color=colours[t], marker="o", ms=3, lw=1.3, label=f"{t} (trained in)") for t in names]
    handles += [Line2D([], [], color=colours[t], ls="--", marker="s", ms=3, lw=1.3, label=f"{t} + {item} at inference")
                for t, item in curves if item != "trained"]
    handles.append(Line2D([], [], color="0.75", lw=0.8, label="training lengths"))
    scale = r.attrs.get("scale", "custom")
    target = legend_ax if legend_ax is not None else axes[-1]
    target.legend(handles=handles, loc="upper left", title=f"{scale} scale", borderaxespad=0.0)
    fig.suptitle("Algorithmic text (generated in the CLRS-Text format): accuracy against length", fontsize=9)
    return common.save_figure(fig, outdir, "text_accuracy")


# What this module makes (analysis/products.py collects it for make_figures and the page).
PRODUCTS = (
    product.Product("text_accuracy", INPUT_FILE, make,
        figures=(
        product.Figure(
            "text_accuracy", "Exact match against length, per algorithm",
            "One panel per algorithm, one solid curve per normaliser trained into every head, dashed where a "
            "normaliser was applied at inference only; shaded: 95% t-interval across seeds (one seed: Wilson "
            "interval of its samples); grey ticks: training lengths (beyond 16: extrapolation)."),)),
)


if __name__ == "__main__":
    sys.exit(common.run_standalone(make, __doc__.splitlines()[0]))
