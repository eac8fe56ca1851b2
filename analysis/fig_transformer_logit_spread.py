"""The logit-spread table across heads (docs/science.md#figures) from a "transformer-dispersion"
result file, beside the paper's Gemma rows (docs/science.md#logit-spread-in-llms).

One row per model (random at each init scale, the negative controls, and trained models: those of
the file, and those of transformer-dispersion-trained.h5 beside it, one row per training recipe
with its seeds pooled): at the model's largest n, each head's δ = its largest row spread max − min of the
scaled, masked logits; the row gives the range over heads, mean ± std, the number of heads, and the
theorem check's verdict across n with the largest rise of β·certificate over the last 4× of n
(analysis/transformer_theorem.py). Gemma 2B and 7B are the
paper's measurements on one source-code input (their weights are not available offline). Writes
transformer_logit_spread.{png,pdf} (the table drawn) and transformer_logit_spread.md (the same as
text). For adaptive-temperature heads (docs/science.md#adaptive-temperature) the spreads are the
logits' (before β): adaptive meets softmax once H > 5.94.

    /usr/bin/python3 analysis/fig_transformer_logit_spread.py results/transformer-dispersion.h5 --out results/figures
"""
from __future__ import annotations

import os
import sys

import numpy as np
import matplotlib.pyplot as plt

import common
import product
import trained_dispersion as td
import transformer_panels as tp
import transformer_theorem

EXPERIMENT = "transformer-dispersion"
# What this module reads of the file (checked against the binary's --describe by
# analysis/tests/test_needs_declared.py).
NEEDS = common.Needs(EXPERIMENT, params=transformer_theorem.MODEL_PARAMS + ("n",), metrics=("delta_max",))
INPUT_FILE = "transformer-dispersion.h5"

# The paper's δ over all heads of Gemma on one input: (name, min, max, mean, std, heads).
GEMMA = [("Gemma 2B (paper)", 2.28, 14.78, 5.69, 2.05, 144),
         ("Gemma 7B (paper)", 0.09, 32.74, 5.82, 2.61, None)]

HEADER = ["model", "n", "heads", "δ range", "δ mean ± std", "theorem check"]


def model_name(check) -> str:
    k = check.key
    if k["checkpoint"] != "none":
        return f"trained {k['checkpoint']}"
    ln = "" if k["layer_norm"] else ", no LN"
    parts = [f"{k['positional']}{ln}", f"init {k['init_scale']:g}",
             f"{k['layers']}x{k['heads']} d{k['d_model']}"]
    if k["normaliser"] != "softmax":
        parts.append(k["normaliser"])
    if k["input"] != "uniform":
        parts.append(k["input"])
    if not k["causal"]:
        parts.append("encoder")
    return ", ".join(parts) + f" (seed {k['seed']})"


def trained_rows(path: str) -> list:
    """Rows of the trained models of a file (sharp-transformer-dispersion --checkpoint), one per
    (task, trained normaliser, input) with the heads of its seeds pooled, at the largest n they share."""
    result, models = td.trained_models(path)
    rows = []
    for (task, normaliser, kind), members in sorted(td.groups(models).items(),
                                                    key=lambda g: (g[0][0], td.normaliser_order(g[0][1]), g[0][2])):
        checked = [m for m in members if m.check is not None]
        if not checked:
            continue
        n = min(int(m.n[-1]) for m in checked)
        delta = np.concatenate([np.asarray(result.arrays(result.ids[m.rows[list(m.n).index(n)]])["delta_max"],
                                           dtype=float).ravel() for m in checked if n in m.n])
        growth = max(float(m.check.growth.max()) for m in checked)
        outcomes = sorted({m.check.outcome for m in checked})
        seeds = sorted({m.seed for m in checked})
        what = "" if kind == "task" else f", {kind} tokens"
        name = (f"trained {task}, {normaliser} ({checked[0].positional}, "
                f"{len(seeds)} seed{'s' if len(seeds) > 1 else ''}){what}")
        rows.append([name, common.power_of_two_label(n).replace("{", "").replace("}", ""), str(delta.size),
                     f"[{fmt(delta.min())}, {fmt(delta.max())}]", f"{fmt(delta.mean())} ± {fmt(delta.std())}",
                     check_cell(" / ".join(outcomes), growth)])
    return rows


def table_rows(result: common.Result, trained: list = ()) -> list:
    """[[cell, ...]] in HEADER order: `trained` rows (trained_rows of another file), our models
    (trained first, then by scheme and scale), then Gemma."""
    rows = list(trained)
    checks = transformer_theorem.check_models(result)

    def order(c):
        k = c.key
        pos = tp.POSITIONAL_ORDER.index(k["positional"]) if k["positional"] in tp.POSITIONAL_ORDER else 99
        return (k["checkpoint"] == "none", pos, -k["layer_norm"], k["init_scale"], k["seed"], k["normaliser"], k["input"])

    for c in sorted(checks, key=order):
        delta = np.asarray(result.arrays(result.ids[_row_of(result, c, c.ns[-1])])["delta_max"], dtype=float).ravel()
        verdict = check_cell(c.outcome, float(c.growth.max()))
        rows.append([model_name(c), common.power_of_two_label(c.ns[-1]).replace("{", "").replace("}", ""),
                     str(delta.size), f"[{fmt(delta.min())}, {fmt(delta.max())}]",
                     f"{fmt(delta.mean())} ± {fmt(delta.std())}", verdict])
    for name, lo, hi, mean, std, heads in GEMMA:
        rows.append([name, "1 input", str(heads) if heads else "all", f"[{lo}, {hi}]", f"{mean} ± {std}", "—"])
    return rows


def check_cell(outcome: str, growth: float) -> str:
    """The theorem check's verdict and the largest rise of β·certificate over the last 4× of n."""
    return f"{outcome} ({growth:.2f}x)"


def fmt(x: float) -> str:
    """3 significant digits, without an exponent up to 10^6 (spreads of the controls reach 10^5)."""
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


def _row_of(result: common.Result, check, n: int) -> int:
    rows = result.rows(n=n, **{name: check.key[name] for name in transformer_theorem.MODEL_PARAMS})
    return int(rows[0])


def markdown(rows: list) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return ("Logit spread δ across heads at each model's largest n (δ per head: its largest row spread); "
            "theorem check: its verdict and the largest rise of β·certificate over the last 4× of n "
            "(analysis/transformer_theorem.py); "
            "trained models on prompts of their own task (n: the prompts' token budget) unless the row says "
            "otherwise; Gemma rows from the paper (docs/science.md#logit-spread-in-llms).\n\n"
            + "\n".join(lines) + "\n")


def draw(rows: list):
    tp.matplotlib_style()
    fig = plt.figure(figsize=(common.FULL_WIDTH + 2.0, 0.26 * (len(rows) + 1) + 0.5))
    ax = fig.add_subplot(111)
    ax.axis("off")
    table = ax.table(cellText=rows, colLabels=HEADER, loc="center", cellLoc="left", colLoc="left",
                     colWidths=[0.37, 0.06, 0.05, 0.13, 0.13, 0.26])
    table.auto_set_font_size(False)
    table.set_fontsize(7)
    table.scale(1.0, 1.25)
    for (r, _), cell in table.get_celld().items():
        cell.set_linewidth(0.3)
        if r == 0:
            cell.set_text_props(weight="bold")
        elif rows[r - 1][0].endswith("(paper)"):
            cell.set_facecolor("#f2f2f2")
        elif not rows[r - 1][-1].startswith((transformer_theorem.HOLDS, "—")):
            cell.set_facecolor("#fdecea")
        elif rows[r - 1][0].startswith("trained"):
            cell.set_facecolor("#eaf2fb")
    ax.set_title("Logit spread δ across heads (ours at the largest n; Gemma: the paper's)", fontsize=8.5)
    return fig


def make(path: str, outdir: str) -> list:
    """transformer_logit_spread.{png,pdf,md}; returns the paths."""
    result = NEEDS.load(path)
    trained_path = os.path.join(os.path.dirname(os.path.abspath(path)), td.INPUT_FILE)
    trained = []
    if os.path.exists(trained_path):
        try:
            trained = trained_rows(trained_path)
        except common.ResultFileError as err:
            common.loud_warning(f"trained models left out of the spread table: {err}")
    rows = table_rows(result, trained)
    if len(rows) == len(GEMMA):
        raise common.ResultFileError(f"{path}: no model has two input lengths at least 4x apart; "
                                     f"no spread to tabulate.")
    written = common.save_figure(draw(rows), outdir, "transformer_logit_spread")
    written.append(common.save_text(markdown(rows), outdir, "transformer_logit_spread.md"))
    return written


# What this module makes (analysis/products.py collects it for make_figures and the page).
PRODUCTS = (
    product.Product("transformer_logit_spread", INPUT_FILE, make,
        figures=(
        product.Figure(
            "transformer_logit_spread", "Logit spread across heads",
            "δ per head (its largest row spread) at the largest n: range and mean ± std over heads per model, beside"
            " the paper's Gemma 2B/7B rows; blue rows are the trained text models on prompts of their task (seeds "
            "pooled), red rows the negative controls. Where random models land depends on their init scale (the rows"
            " name it)."),)),
)


if __name__ == "__main__":
    sys.exit(common.run_standalone(make, __doc__.splitlines()[0]))
