"""Every remedy trained into the max-retrieval head, side by side (docs/science.md#remedies,
docs/science.md#max-retrieval): figure remedies.{png,pdf} from an eval-max file of models trained
with several normalisers, each evaluated with its own (`trained`).

    /usr/bin/python3 analysis/fig_remedies.py results/eval-remedies.h5 [--out DIR]

Left, the leaderboard: accuracy against n per training normaliser, mean over models (seeds) with
a 95% t interval, the paper's softmax and adaptive numbers and the best public number at 16384
(27.9%, docs/science.md#published-numbers) marked. Middle, the error taken apart: per remedy its
accuracy (solid), its ranking rate (dashed: the highest logit is on the true maximum) and the
oracle rate (dotted: weight 1 on the true maximum reads the right class), as lines, not stacked
(soft mixing can beat the ranking rate). Right, accuracy as a fraction of the ranking rate.
Models trained with different normalisers are never pooled as seeds (max_retrieval.py).
"""
from __future__ import annotations

import sys

import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

import common  # noqa: E402
import product  # noqa: E402
import max_retrieval as mr  # noqa: E402

INPUT_FILE = "eval-remedies.h5"
BEST_PUBLIC_16384 = 27.9   # % (docs/science.md#published-numbers)
TRAINED = "trained"


def _per_model(data: mr.EvalMax, metric: str, n: int) -> np.ndarray:
    """[models] a per-point metric (oracle_rate, ranking_rate) of each model at n, pooled over
    evaluation seeds by sample count."""
    row = {pid: i for i, pid in enumerate(data.result.ids)}
    out = []
    for cell in data.cells[n]:
        rows = [row[p] for p in cell.point_ids]
        out.append(float(np.mean(data.result.metrics[metric][rows])))
    return np.array(out)


def series(data: mr.EvalMax) -> dict:
    """{name: (mean [N], low [N], high [N])} over the models at each n, in % (ratio: a fraction)."""
    out = {}
    ns = data.ns
    acc = [data.per_model("correct", TRAINED, n) for n in ns]
    rank = [_per_model(data, "ranking_rate", n) for n in ns]
    oracle = [_per_model(data, "oracle_rate", n) for n in ns]
    ratio = [a / np.where(r > 0, r, np.nan) for a, r in zip(acc, rank)]
    for name, values, scale in (("accuracy", acc, 100), ("ranking", rank, 100), ("oracle", oracle, 100),
                                ("ratio", ratio, 1)):
        triples = [mr.t_interval(v[np.isfinite(v)]) if np.isfinite(v).any() else (np.nan,) * 3
                   for v in values]
        out[name] = tuple(scale * np.array([t[i] for t in triples]) for i in range(3))
    return out


def draw(groups: dict):
    fig, axes = plt.subplots(1, 3, figsize=(13.5, 4.2), constrained_layout=True)
    colours = mr.normaliser_colours(list(groups))
    for remedy, data in groups.items():
        if TRAINED not in data.normalisers:
            raise common.ResultFileError(f"{data.path}: the normaliser list lacks 'trained'; evaluate "
                                         f"each model with its own normaliser (--normaliser trained).")
        s = series(data)
        ns = np.array(data.ns)
        c = colours[remedy]
        label = f"{mr.normaliser_label(remedy)} ({len(data.train_seeds)} seeds)"
        mean, low, high = s["accuracy"]
        axes[0].plot(ns, mean, "-o", ms=3, color=c, label=label)
        if np.isfinite(low).any():
            axes[0].fill_between(ns, low, high, color=c, alpha=0.2, lw=0)
        axes[1].plot(ns, mean, "-", color=c)
        axes[1].plot(ns, s["ranking"][0], "--", color=c)
        axes[1].plot(ns, s["oracle"][0], ":", color=c)
        axes[2].plot(ns, s["ratio"][0], "-o", ms=3, color=c, label=remedy)
    for x, marker in (("softmax", "s"), ("adaptive", "^")):
        axes[0].plot(mr.PAPER_N, mr.PAPER_ACCURACY[x], marker, mfc="none", color="0.3", ls="none",
                     label=f"paper: {mr.normaliser_label(x)}")
    axes[0].plot([16384], [BEST_PUBLIC_16384], "*", ms=11, color="gold", mec="0.2",
                 label="best public at 16384 (27.9%)")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("items per set $n$")
        ax.grid(alpha=0.3)
    axes[0].axhline(mr.CHANCE, color="0.5", lw=0.8, ls="--")
    axes[0].set_ylabel("accuracy (%)")
    axes[0].set_title("leaderboard: each remedy trained in")
    axes[0].legend(fontsize=7)
    axes[1].set_ylabel("rate (%)")
    axes[1].set_title("accuracy, ranking (- -), oracle (···)")
    # Colours as in the leaderboard's legend; here only what each line style is (one entry per
    # remedy and rate would be 3 x 10 entries, more than the panel holds).
    axes[1].legend(handles=[Line2D([], [], color="0.3", ls=ls, label=what) for ls, what in
                            (("-", "accuracy"), ("--", "ranking rate"), (":", "oracle rate"))],
                   fontsize=7, loc="lower left")
    axes[2].set_ylabel("accuracy / ranking rate")
    axes[2].axhline(1.0, color="0.5", lw=0.8)
    axes[2].set_title("how much of the ranking ceiling is reached")
    return fig


def make(path: str, outdir: str) -> list:
    """Figure remedies.{png,pdf}; returns the paths."""
    fig = draw(mr.load_eval_max_groups(path))
    return common.save_figure(fig, outdir, "remedies")


# What this module makes (analysis/products.py collects it for make_figures and the page).
PRODUCTS = (
    product.Product("remedies", INPUT_FILE, make,
        figures=(
        product.Figure(
            "remedies", "Every remedy trained in, against n",
            "Left: accuracy of each remedy, mean over seeds with a 95% interval, beside the paper's softmax and "
            "adaptive points and the best public number at 16384. Middle: accuracy (solid), ranking rate (dashed) "
            "and oracle rate (dotted) per remedy. Right: accuracy as a fraction of the ranking rate: how much of the"
            " ceiling a remedy reaches."),)),
)


if __name__ == "__main__":
    sys.exit(common.run_standalone(make, __doc__.splitlines()[0]))
