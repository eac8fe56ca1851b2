"""Largest attention coefficient per head against n (docs/science.md#figures) from a
"transformer-dispersion" result file (docs/science.md#transformers-disperse).

One panel per model (positional scheme × LayerNorm, init scale nearest 1). Lines: α_max of the last
query row (k = n keys) of every head, coloured by layer; dashed black: 1/n (uniform attention);
dotted, per head: the lemma's bound min(1, exp(β·sup δ)/n) with sup δ the head's largest row spread
over every n so far. With bounded positions every head's line stays under its bound and the bound
falls like 1/n; with ALiBi, or index positions without LayerNorm, sup δ grows with n, the bound
stays at 1 and heads can stay sharp. Panel titles give the theorem check's verdict
(analysis/transformer_theorem.py).

    /usr/bin/python3 analysis/fig_transformer_alpha.py results/transformer-dispersion.h5 --out results/figures
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
NEEDS = common.Needs(EXPERIMENT, params=("n", "positional", "layer_norm", "init_scale"), metrics=("lemma_violations",))
INPUT_FILE = "transformer-dispersion.h5"


def draw(result: common.Result, panels: list):
    fig, axes, legend_ax = tp.panel_grid(len(panels))
    for ax, (check, rows) in zip(axes, panels):
        n = result.params["n"][rows].astype(float)
        alpha = tp.head_series(result, rows, "alpha_max_last")          # [N, L·H]
        beta = np.where(np.isfinite(check.beta), check.beta, 1.0).ravel()
        sup = check.sup_delta.reshape(len(rows), -1)                     # [N, L·H]
        layers, heads = check.sup_delta.shape[1:]
        colours = tp.layer_colours(layers)
        with np.errstate(over="ignore"):
            bound = np.minimum(1.0, np.exp(beta[None, :] * sup) / n[:, None])
        for j in range(alpha.shape[1]):
            c = colours[j // heads]
            ax.plot(n, alpha[:, j], color=c, lw=1.0, marker="o", ms=2)
            ax.plot(n, bound[:, j], color=c, lw=0.7, ls=":", alpha=0.8)
        ax.plot(n, 1.0 / n, color="black", lw=1.0, ls="--")
        common.log2_axis(ax, "x", max_ticks=6)
        ax.set_yscale("log")
        ax.set_ylim(min(0.5 / n.max(), float(np.nanmin(alpha)) / 2), 1.6)
        ax.set_title(tp.panel_title(check), fontsize=8)
        ax.set_xlabel("input length $n$")
    axes[0].set_ylabel(r"$\alpha_{\max}$ of the last row")
    layers = max(c.sup_delta.shape[1] for c, _ in panels)
    handles = [Line2D([], [], color=c, lw=1.0, marker="o", ms=2, label=f"layer {l} heads")
               for l, c in enumerate(tp.layer_colours(layers))]
    handles += [Line2D([], [], color="0.3", lw=0.7, ls=":", label=r"bound $\min(1, e^{\beta\,\sup\delta}/n)$"),
                Line2D([], [], color="black", lw=1.0, ls="--", label="$1/n$ (uniform)")]
    legend_ax.legend(handles=handles, loc="center", ncol=min(len(handles), 4), fontsize=7.5, frameon=False)
    return fig


def make(path: str, outdir: str) -> list:
    """Figure transformer_alpha.{png,pdf}; returns the paths."""
    result, panels = tp.load_panels(path, NEEDS)
    violations = int(result.metrics["lemma_violations"].sum())
    if violations:
        common.loud_warning(f"{path}: {violations} attention row(s) outside the dispersion lemma's bounds "
                            f"(docs/science.md#dispersion-lemma); there must be none.")
    return common.save_figure(draw(result, panels), outdir, "transformer_alpha")


# What this module makes (analysis/products.py collects it for make_figures and the page).
PRODUCTS = (
    product.Product("transformer_alpha", INPUT_FILE, make,
        figures=(
        product.Figure(
            "transformer_alpha", "Largest coefficient per head against n",
            "Each panel one random model; lines: α_max of the last row of every head, dotted: its bound min(1, "
            "e^(β·sup δ)/n), dashed: 1/n. Compare each head's slope with 1/n's; the titles name the positional "
            "scheme, and the table below gives the theorem check's verdict per model."),)),
)


if __name__ == "__main__":
    sys.exit(common.run_standalone(make, __doc__.splitlines()[0]))
