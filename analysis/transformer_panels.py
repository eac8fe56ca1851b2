"""What the transformer-dispersion figures share: which models get a panel, the per-head series of a
model across n (arrays [layer, head] of every point), and a grid of panels.

A panel is one model (positional scheme × LayerNorm) at one init scale: the scale nearest 1 present
for that model, so the figures compare positional schemes, not scales (the spread table covers
scales). Models are read through transformer_theorem.check_models, so a panel's title carries the
theorem's verdict.
"""
from __future__ import annotations

import math

import numpy as np
import matplotlib.pyplot as plt

import common
import transformer_theorem

POSITIONAL_ORDER = ["none", "sinusoidal", "learned", "rope", "index", "alibi"]


def panel_models(result: common.Result) -> list:
    """[(ModelCheck, rows sorted by n)] for one model per (positional, layer_norm), in figure order:
    bounded schemes first, with LayerNorm before without."""
    checks = transformer_theorem.check_models(result)
    best: dict = {}
    for c in checks:
        k = c.key
        slot = (k["positional"], k["layer_norm"])
        score = (abs(math.log(k["init_scale"])), k["seed"], k["input"] != "uniform", k["normaliser"] != "softmax")
        if slot not in best or score < best[slot][0]:
            best[slot] = (score, c)

    def order(slot):
        pos, ln = slot
        return (POSITIONAL_ORDER.index(pos) if pos in POSITIONAL_ORDER else 99, -ln)

    out = []
    for slot in sorted(best, key=order):
        c = best[slot][1]
        rows = result.rows(**{name: c.key[name] for name in transformer_theorem.MODEL_PARAMS})
        rows = rows[np.argsort(result.params["n"][rows])]
        out.append((c, rows))
    return out


def load_panels(path: str, needs: common.Needs) -> tuple:
    """(result, panel_models(result)) of the file at `path`, which must hold what `needs` names;
    refused when no model has two input lengths at least 4x apart (nothing to plot against n)."""
    result = needs.load(path)
    panels = panel_models(result)
    if not panels:
        raise common.ResultFileError(f"{path}: no model has two input lengths at least 4x apart; "
                                     f"nothing to plot against n.")
    return result, panels


def head_series(result: common.Result, rows, name: str) -> np.ndarray:
    """[len(rows), layers·heads]: the per-head array `name` of each point, heads flattened."""
    series = []
    for i in rows:
        a = np.asarray(result.arrays(result.ids[i])[name], dtype=float)
        result.require_finite(f"/arrays/{result.ids[i]}/{name}", a.reshape(1, -1), result.ids[i])
        series.append(a.ravel())
    return np.array(series)


def panel_title(check) -> str:
    k = check.key
    ln = "LayerNorm" if k["layer_norm"] else "no LayerNorm"
    return f"{k['positional']}, {ln}\n(init {k['init_scale']:g}; {check.outcome})"


def panel_grid(count: int, height_per_row: float = 2.3):
    """A figure with `count` panels, three per row, and a strip below them for the legend (an axes
    with its frame off, so the legend never covers data). Returns (fig, panels, legend_ax)."""
    matplotlib_style()
    cols = min(3, count)
    nrows = (count + cols - 1) // cols
    fig = plt.figure(figsize=(common.FULL_WIDTH, height_per_row * nrows + 0.7), layout="constrained")
    grid = fig.add_gridspec(nrows + 1, cols, height_ratios=[1.0] * nrows + [0.22])
    axes = [fig.add_subplot(grid[i // cols, i % cols]) for i in range(count)]
    legend_ax = fig.add_subplot(grid[nrows, :])
    legend_ax.axis("off")
    return fig, axes, legend_ax


def matplotlib_style() -> None:
    import matplotlib
    matplotlib.rcParams.update(common.STYLE)


def layer_colours(layers: int) -> list:
    return common.sequential_colours(max(layers, 1))
