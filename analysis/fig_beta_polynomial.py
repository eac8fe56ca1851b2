"""The entropy → β polynomial of adaptive temperature (docs/science.md#figures) from a "fit-adaptive" result
file (docs/science.md#refitting-the-polynomial, the reconstruction of how the paper fitted it).

Scatter: one dot per evaluation set, (H, β*): the head's entropy at β = 1 (nats) and the β* ∈
[1, β_max] maximising the probability of the correct class, coloured by the set size n, over every
model of the file. Lines: our least-squares degree-4 fit through the per-set pairs, one per model
(/arrays/<id>/coefficients); when the file has the binned protocol (bin_entropy, bin_beta,
bin_count, coefficients_binned: per entropy bin the single β maximising the mean log-probability of
the correct class over the bin's sets), its bins (marker area ∝ sets in the bin) and fit; and the
paper's polynomial β(H) as the model applies it: β = max(β(H), 1) when H > 0.5, else 1 (solid),
beside the bare polynomial (dotted).

    /usr/bin/python3 analysis/fig_beta_polynomial.py results/fit-adaptive.h5 --out results/figures
"""
from __future__ import annotations

import dataclasses
import sys

import numpy as np
from matplotlib.lines import Line2D

import common
import product

EXPERIMENT = "fit-adaptive"
INPUT_FILE = "fit-adaptive.h5"

# docs/science.md#adaptive-temperature, highest degree first: β(H) = −0.037·H⁴ + 0.481·H³ − 2.3·H² + 4.917·H − 1.791
PAPER_COEFFICIENTS = (-0.037, 0.481, -2.3, 4.917, -1.791)
PAPER_GATE = 0.5  # H ≤ 0.5 keeps β = 1
REQUIRED = ("n", "entropy", "beta_star", "coefficients")
BINNED = ("bin_entropy", "bin_beta", "bin_count", "coefficients_binned")
# What this module reads of the file (checked against the binary's --describe by
# analysis/tests/test_needs_declared.py); the binned fit is optional, all of BINNED or none.
NEEDS = common.Needs(EXPERIMENT, arrays=REQUIRED)
OPTIONAL = common.Needs(EXPERIMENT, arrays=BINNED)


def paper_beta(h) -> np.ndarray:
    """The bare polynomial of docs/science.md#adaptive-temperature."""
    return np.polyval(PAPER_COEFFICIENTS, np.asarray(h, dtype=float))


def paper_effective_beta(h) -> np.ndarray:
    """What adaptive temperature applies (docs/science.md#adaptive-temperature): max(β(H), 1) when H > 0.5, else 1."""
    h = np.asarray(h, dtype=float)
    return np.where(h > PAPER_GATE, np.maximum(paper_beta(h), 1.0), 1.0)


@dataclasses.dataclass
class Model:
    """One point of the file (one trained model): its per-set pairs and fits."""
    point_id: str
    n: np.ndarray             # [pairs] set size of each pair
    entropy: np.ndarray       # [pairs] H at β = 1, nats
    beta_star: np.ndarray     # [pairs]
    coefficients: np.ndarray  # [5] highest degree first
    binned: dict | None       # bin_entropy, bin_beta, bin_count [bins], coefficients_binned [5]


def read_models(result: common.Result) -> list:
    NEEDS.check(result)
    models = []
    for point_id in result.ids:
        arrays = result.arrays(point_id)
        values = {name: np.asarray(arrays[name], dtype=float).ravel() for name in REQUIRED}
        sizes = {values[name].size for name in ("n", "entropy", "beta_star")}
        if len(sizes) != 1 or values["coefficients"].size != 5:
            raise common.ResultFileError(
                f"{result.path}: /arrays/{point_id}: n, entropy and beta_star must have one "
                f"length and coefficients 5 values (degree 4); re-run sharp-fit-adaptive.")
        for name, v in values.items():
            result.require_finite(f"/arrays/{point_id}/{name}", v, point_id)
        binned = None
        present = [name for name in BINNED if name in arrays]
        if present:
            if len(present) != len(BINNED):
                raise common.ResultFileError(
                    f"{result.path}: /arrays/{point_id} has {', '.join(present)} but not "
                    f"{', '.join(sorted(set(BINNED) - set(present)))}; the binned fit is "
                    f"incomplete. Re-run sharp-fit-adaptive.")
            binned = {name: np.asarray(arrays[name], dtype=float).ravel() for name in BINNED}
            for name, v in binned.items():
                result.require_finite(f"/arrays/{point_id}/{name}", v, point_id)
        models.append(Model(point_id, values["n"], values["entropy"], values["beta_star"],
                            values["coefficients"], binned))
    return models


def draw(result: common.Result, models: list):
    fig, ax, legend_ax = common.new_figure(ncols=1, width=6.6, height=3.4, legend_width=0.55)
    ns = sorted({int(v) for m in models for v in m.n})
    n_colours = dict(zip(ns, common.sequential_colours(len(ns))))
    entropy = np.concatenate([m.entropy for m in models])
    beta_star = np.concatenate([m.beta_star for m in models])
    sizes = np.concatenate([m.n for m in models]).astype(int)
    # larger n last, so the high-entropy sets are not buried under the many small-n dots
    order = np.argsort(sizes, kind="stable")
    ax.scatter(entropy[order], beta_star[order], s=5, lw=0, alpha=0.55,
               c=[n_colours[n] for n in sizes[order]], zorder=2, rasterized=False)

    h_max = float(entropy.max()) * 1.03
    dense = np.linspace(0.0, max(h_max, 1e-3), 400)
    for m in models:  # each fit over the range of its own data: no extrapolation drawn
        h = dense[dense <= m.entropy.max() * 1.0001]
        ax.plot(h, np.polyval(m.coefficients, h), color="black", lw=1.1, zorder=4)
        if m.binned is not None:
            b = m.binned
            area = 12 + 60 * b["bin_count"] / max(float(b["bin_count"].max()), 1.0)
            ax.scatter(b["bin_entropy"], b["bin_beta"], s=area, marker="D", facecolor="white",
                       edgecolor=common.PALETTE["vermillion"], lw=0.9, zorder=5)
            hb = dense[(dense >= b["bin_entropy"].min()) & (dense <= b["bin_entropy"].max())]
            ax.plot(hb, np.polyval(b["coefficients_binned"], hb), color=common.PALETTE["vermillion"], lw=1.1,
                    ls="--", zorder=4)
    ax.plot(dense, paper_effective_beta(dense), color=common.PALETTE["orange"], lw=2.0, zorder=6)
    ax.plot(dense, paper_beta(dense), color=common.PALETTE["orange"], lw=1.0, ls=":", zorder=6)
    ax.axvline(PAPER_GATE, color="0.5", lw=0.6, ls=(0, (1, 2)), zorder=1)
    ax.annotate("gate\n$H = 0.5$", xy=(PAPER_GATE, 0.0), xycoords=("data", "axes fraction"),
                xytext=(2, 3), textcoords="offset points", fontsize=6.5, color="0.35")

    if "beta_max" in result.params:  # β* is searched in [1, β_max]: dots here hit the limit
        reached = [b for b in sorted({float(v) for v in result.params["beta_max"]})
                   if beta_star.max() >= 0.99 * b]
        for beta_max in reached:
            ax.axhline(beta_max, color="0.5", lw=0.6, ls=(0, (4, 2)), zorder=1)
            ax.annotate(rf"search limit $\beta_{{\max}} = {common.format_number(beta_max)}$",
                        xy=(0.0, beta_max), xycoords=("axes fraction", "data"), xytext=(3, 2),
                        textcoords="offset points", fontsize=7, color="0.35", va="bottom")
    beta_hi = float(max(beta_star.max(), 2.5, max(float(np.polyval(m.coefficients, dense[
        dense <= m.entropy.max()]).max()) for m in models)))
    ax.set_ylim(min(-2.0, float(paper_beta(dense).min()) - 0.3), beta_hi * 1.08)
    ax.set_xlim(0.0, h_max)
    ax.set_xlabel(r"entropy of the head at $\beta = 1$, $H$ [nats]")
    ax.set_ylabel(r"inverse temperature $\beta$")
    ax.set_title(r"Entropy $\to$ inverse temperature: per-set $\beta^*$, our fit, the paper's "
                 r"$\beta(H)$")

    size_handles = [Line2D([], [], ls="none", marker="o", ms=4, mew=0, color=n_colours[n],
                           label=f"${common.power_of_two_label(n)}$") for n in ns]
    columns = 1 if len(size_handles) <= 8 else 2
    first = legend_ax.legend(handles=size_handles, title=r"$\beta^*$ per set, $n$",
                             loc="upper left", borderaxespad=0.0, ncols=columns,
                             columnspacing=0.6, handletextpad=0.2)
    legend_ax.add_artist(first)
    plural = "s" if len(models) != 1 else ""
    # Which rule helps the model most: [mean ln p(correct)] over the sets, averaged over models.
    def score(key: str) -> str:
        name = f"mean_log_p.{key}"
        return f" [{np.mean(result.metrics[name]):.3f}]" if name in result.metrics else ""
    rms = np.array(result.metrics["rms_fit"]) if "rms_fit" in result.metrics else None
    fit_label = f"our fit, per set ({len(models)} model{plural}){score('fit')}" + (
        f"\nrms {common.format_number(float(rms.mean()), 3)}" if rms is not None else "")
    curves = [Line2D([], [], color="black", lw=1.1, label=fit_label)]
    if any(m.binned is not None for m in models):
        curves += [Line2D([], [], ls="none", marker="D", mfc="white", mec=common.PALETTE["vermillion"], ms=5,
                          label="best β per entropy bin\n(area ∝ sets)"),
                   Line2D([], [], color=common.PALETTE["vermillion"], lw=1.1, ls="--", label="our fit, binned" + score("binned"))]
    curves += [Line2D([], [], color=common.PALETTE["orange"], lw=2.0,
                      label="paper, as applied" + score("paper") + ":\nmax(β(H), 1) if H > 0.5"),
               Line2D([], [], color=common.PALETTE["orange"], lw=1.0, ls=":", label="paper polynomial β(H)")]
    title = f"[mean ln p(correct)], β = 1:{score('one')}" if score("one") else None
    legend_ax.legend(handles=curves, loc="lower left", borderaxespad=0.0, title=title,
                     title_fontsize=7.5)
    return fig


def make(path: str, outdir: str) -> list:
    """Figure beta_polynomial.{png,pdf}; returns the paths."""
    result = common.load_result(path, EXPERIMENT)
    if len(result) == 0:
        raise common.ResultFileError(f"{path}: no points to plot; the run's grid was empty.")
    models = read_models(result)
    if sum(m.entropy.size for m in models) == 0:
        raise common.ResultFileError(f"{path}: no (H, β*) pairs to plot.")
    return common.save_figure(draw(result, models), outdir, "beta_polynomial")


# What this module makes (analysis/products.py collects it for make_figures and the page).
PRODUCTS = (
    product.Product("beta_polynomial", INPUT_FILE, make,
        figures=(
        product.Figure(
            "beta_polynomial", "Entropy → β: data, our refit, the paper's curve",
            "Dots: per-set (H, β*), coloured by n. Black: our fit per model; red: the binned fit. Orange: the "
            "paper's polynomial as applied (solid) and bare (dotted). Compare where the curves rise above β = 1 and "
            "where they peak; the legend's numbers say which rule gives the model the highest mean log-probability "
            "of the right class."),)),
)


if __name__ == "__main__":
    sys.exit(common.run_standalone(make, __doc__.splitlines()[0]))
