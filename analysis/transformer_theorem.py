"""The theorem's check across n (docs/science.md#transformers-disperse, #measuring-heads) on
sharp-transformer-dispersion result files.

    /usr/bin/python3 analysis/transformer_theorem.py results/transformer-dispersion.h5 [MORE.h5 ...]

(make figures writes the same check as a table, transformer_theorem.md, for transformer-dispersion.h5
and the boundary control and trained models beside it.)

A model is every point with the same parameters except n; per-head arrays are [layer, head].

Verdict, decided by the certificate: per head and n the product β·C, C the head's weight-norm bound
on every row's logit spread (the `certificate` array: R analytic where LayerNorm precedes attention,
so C does not depend on n, measured otherwise; ALiBi's slope·(n − 1) included) and β its largest
effective inverse temperature (1 for softmax, s·ln n for SSMax), each product the supremum over
n' ≤ n (a bound for length n covers every shorter input). "outside the hypothesis" when some head's
β·C rises by more than 10% over the grid's last 4× of n (from the largest n on the grid at most
n_max/4 to n_max); "holds" when none does and no row violates the lemma; "INCONSISTENT" when a row
violates the lemma or a bug check fails (δ ≤ C and k·α_max ≤ e^(β·C) follow from the bound and the
lemma, so a failure is a bug, never data); "not checked" for normalisers without an effective β.
Power: β or C growing like ln n rises by ln n_max / ln(n_max/4) > 1.10 while n_max < 4^11 = 2^22.

The rate, a consequence shown beside the verdict: the least-squares slope of
ln(mean k·α_max over rows with k ≥ n/2, mean over heads) against ln n over the grid, with its 95%
t interval: "O(1/n)" when the interval lies within ±0.15, "slower than 1/n" when it lies above
0.15, "inconclusive" otherwise. The lemma forces the rate only once n outgrows e^(β·sup δ): before
that a holding model's sharp heads may keep k·α_max growing, which the line says.
The measured δ, an illustration only: the slope of sup δ (max over heads) against ln n, with its
95% interval.

Prints one line per model; exit status 0 when the files were read (the verdicts are data, e.g. the
controls must be outside the hypothesis), 1 otherwise.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys

import numpy as np
from scipy import stats

import common
import product

EXPERIMENT = "transformer-dispersion"
GROWTH_LIMIT = 1.10     # β·certificate may rise by at most this factor over the last 4× of n
SPAN = 4                # ... that is, from the largest n <= n_max/4 to n_max
RATE_TOLERANCE = 0.15   # |slope of ln(mean k·α_max) against ln n| for the O(1/n) rate
LEVEL = 0.95            # the intervals' coverage
# The theorem check's table (make): the random models, the boundary control and the trained models.
INPUT_FILE = "transformer-dispersion.h5"
BESIDE = ("transformer-dispersion-boundary.h5", "transformer-dispersion-trained.h5")

HOLDS, OUTSIDE, INCONSISTENT, NOT_CHECKED = "holds", "outside the hypothesis", "INCONSISTENT", "not checked"
RATE_HOLDS, RATE_SLOWER, RATE_INCONCLUSIVE = "O(1/n)", "slower than 1/n", "inconclusive"

MODEL_PARAMS = ("checkpoint", "layers", "heads", "d_model", "vocab", "causal", "positional", "layer_norm",
                "init_scale", "max_length", "normaliser", "input", "samples", "seed")
# What this module reads of the file (checked against the binary's --describe by
# analysis/tests/test_needs_declared.py).
NEEDS = common.Needs(EXPERIMENT, params=MODEL_PARAMS + ("n",), metrics=("lemma_violations", "tokens"))
ARRAYS = ("delta_max", "beta_max", "certificate", "n_alpha_max_last", "n_alpha_max_half_mean")


@dataclasses.dataclass
class Slope:
    """A least-squares slope with its LEVEL t interval (infinite with fewer than 3 points)."""
    value: float
    low: float
    high: float

    def text(self) -> str:
        return f"{self.value:.3g} [{self.low:.3g}, {self.high:.3g}]"


def slope_interval(x, y) -> Slope:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    fit = stats.linregress(x, y)
    half = (float(stats.t.ppf(0.5 + LEVEL / 2, x.size - 2)) * float(fit.stderr)
            if x.size > 2 else math.inf)
    return Slope(float(fit.slope), float(fit.slope) - half, float(fit.slope) + half)


@dataclasses.dataclass
class ModelCheck:
    """The check of one model. `key` are its parameters (without n); arrays are [layer, head]."""
    key: dict
    ns: list
    start: int                     # index in ns of the last 4×'s first n (the largest <= n_max/4)
    sup_delta: np.ndarray          # [len(ns), layers, heads]: sup over n' <= n of delta_max
    certified: np.ndarray          # [len(ns), layers, heads]: sup over n' <= n of β·certificate
    growth: np.ndarray             # [layers, heads]: certified at n_max / at ns[start]
    beta_growth: float             # the same for β alone, max over heads
    beta: np.ndarray               # [layers, heads]: largest effective β over n (NaN: none)
    lemma_violations: int
    bound_holds: bool              # bug check: k·α_max <= e^(β·certificate) at every n and head
    certificate_holds: bool        # bug check: δ <= certificate at every n and head
    rate: Slope                    # of ln(mean k·α_max over half rows) against ln n
    delta_slope: Slope             # of sup δ (max over heads) against ln n: illustration only

    @property
    def checked(self) -> bool:
        """The normaliser has an effective β (softmax family), so the lemma applies."""
        return bool(np.all(np.isfinite(self.beta)))

    @property
    def levels_off(self) -> bool:
        """Within the hypothesis: no head's β·certificate rises by more than GROWTH_LIMIT over the last 4×."""
        return self.checked and bool(np.all(self.growth <= GROWTH_LIMIT))

    @property
    def consistent(self) -> bool:
        return self.lemma_violations == 0 and self.bound_holds and self.certificate_holds

    @property
    def outcome(self) -> str:
        if not self.checked:
            return NOT_CHECKED
        if not self.consistent:
            return INCONSISTENT
        return HOLDS if self.levels_off else OUTSIDE

    @property
    def holds(self) -> bool:
        return self.outcome == HOLDS

    @property
    def rate_outcome(self) -> str:
        if -RATE_TOLERANCE <= self.rate.low and self.rate.high <= RATE_TOLERANCE:
            return RATE_HOLDS
        return RATE_SLOWER if self.rate.low > RATE_TOLERANCE else RATE_INCONCLUSIVE

    @property
    def bound_forces_rate(self) -> bool:
        """e^(β·sup δ) < n_max for every head: only then must the lemma show on the grid's rate."""
        beta = np.where(np.isfinite(self.beta), self.beta, 1.0)
        return bool(np.all(beta * self.sup_delta[-1] < math.log(self.ns[-1])))

    def label(self) -> str:
        k = self.key
        if k["checkpoint"] != "none":
            return f"trained {k['checkpoint']} ({k['input']} inputs, {k['samples']} samples)"
        name = f"{k['positional']}{'' if k['layer_norm'] else ' no-LN'} init {k['init_scale']:g}"
        extras = [f"{k['layers']}x{k['heads']} d{k['d_model']}", k["input"], k["normaliser"]]
        if not k["causal"]:
            extras.append("encoder")
        return f"{name} ({', '.join(extras)}, seed {k['seed']})"

    def span(self) -> str:
        """The last 4× of n as the grid has it."""
        return f"n {self.ns[self.start]}..{self.ns[-1]}"

    def verdict(self) -> str:
        outcome, g = self.outcome, float(self.growth.max())
        if outcome == NOT_CHECKED:
            return (f"{NOT_CHECKED}: the normaliser {self.key['normaliser']} has no effective inverse "
                    f"temperature, the lemma does not apply [n {self.ns[0]}..{self.ns[-1]}]")
        if outcome == INCONSISTENT:
            bugs = [f"{self.lemma_violations} lemma violation(s)"] if self.lemma_violations else []
            bugs += [] if self.certificate_holds else ["delta EXCEEDS the certificate"]
            bugs += [] if self.bound_holds else ["k alpha_max EXCEEDS exp(beta*certificate)"]
            head = f"{INCONSISTENT} (a bug, not data): {', '.join(bugs)}"
        elif outcome == OUTSIDE:
            cause = "beta grows" if self.beta_growth > GROWTH_LIMIT else "the certificate grows"
            head = (f"{OUTSIDE}: beta*certificate rises {g:.2f}x over {self.span()} "
                    f"(tolerance {GROWTH_LIMIT - 1:.0%}; {cause}, beta {self.beta_growth:.2f}x)")
        else:
            head = (f"{HOLDS}: beta*certificate constant ({g:.2f}x over {self.span()}, tolerance "
                    f"{GROWTH_LIMIT - 1:.0%}; largest {float(self.certified[-1].max()):.3g}), 0 lemma violations")
        rate = f"rate: slope {self.rate.text()}, {self.rate_outcome}"
        if self.rate_outcome != RATE_HOLDS and outcome == HOLDS and not self.bound_forces_rate:
            rate += " (not forced yet: exp(beta*sup delta) > n_max)"
        return (f"{head}; {rate}; sup delta {float(self.sup_delta[-1].max()):.3g}, slope against ln n "
                f"{self.delta_slope.text()} (illustration) [n {self.ns[0]}..{self.ns[-1]}]")


def check_models(result: common.Result) -> list:
    """One ModelCheck per model with at least two n, the larger at least SPAN× the smaller."""
    NEEDS.check(result, finite=False)
    checks = []
    for key, rows in result.group_by(*MODEL_PARAMS):
        ns = [int(result.params["n"][i]) for i in rows]
        order = np.argsort(ns)
        rows, ns = rows[order], [ns[i] for i in order]
        if len(ns) < 2 or ns[-1] < SPAN * ns[0]:
            continue
        per_n = [result.arrays(result.ids[i]) for i in rows]
        for i, a in zip(rows, per_n):
            missing = [name for name in ARRAYS if name not in a]
            if missing:
                raise common.ResultFileError(
                    f"/arrays/{result.ids[i]} has no {', '.join(missing)}: the file predates the theorem's "
                    f"certificate; rerun sharp-transformer-dispersion")
        arrays = {name: np.array([a[name] for a in per_n], dtype=float) for name in ARRAYS}   # [N, L, H]
        start = max(j for j, n in enumerate(ns) if n <= ns[-1] // SPAN)
        sup = np.maximum.accumulate(arrays["delta_max"], axis=0)
        beta_n = arrays["beta_max"]                                     # NaN: no effective β
        certified = np.maximum.accumulate(beta_n * arrays["certificate"], axis=0)
        beta_sup = np.maximum.accumulate(beta_n, axis=0)
        with np.errstate(over="ignore", invalid="ignore"):
            bound = np.exp(beta_n * arrays["certificate"])
            bound_holds = bool(np.all(arrays["n_alpha_max_last"] <= bound * (1 + 1e-12)))
        certificate_holds = bool(np.all(arrays["delta_max"] <= arrays["certificate"] * (1 + 1e-12)))
        ln_n = np.log(result.metrics["tokens"][rows].astype(float))     # n, or a task prompt's own length
        rate = slope_interval(ln_n, np.log(arrays["n_alpha_max_half_mean"].mean(axis=(1, 2))))
        checks.append(ModelCheck(
            key=dict(zip(MODEL_PARAMS, key)), ns=ns, start=start, sup_delta=sup, certified=certified,
            growth=certified[-1] / certified[start],
            beta_growth=float(np.max(beta_sup[-1] / beta_sup[start])),
            beta=np.max(beta_n, axis=0), lemma_violations=int(np.sum(result.metrics["lemma_violations"][rows])),
            bound_holds=bound_holds, certificate_holds=certificate_holds,
            rate=rate,
            delta_slope=slope_interval(ln_n, sup.max(axis=(1, 2)))))
    return checks


TABLE_HEADER = ["file", "model", "n", "β·certificate rise over the last 4× of n", "rate slope [95%]",
                "rate", "sup δ slope against ln n [95%] (illustration)", "verdict"]


def table(paths: list) -> str:
    """The check of every model of the files, as a markdown table with the rule above it."""
    rows = []
    for path in paths:
        for c in check_models(common.load_result(path, EXPERIMENT)):
            rows.append([os.path.basename(path), c.label(), f"{c.ns[0]}..{c.ns[-1]}",
                         f"{float(c.growth.max()):.2f}× ({c.span()})", c.rate.text(), c.rate_outcome,
                         c.delta_slope.text(), c.outcome])
    rule = (f"The theorem's check per model (analysis/transformer_theorem.py, docs/science.md#measuring-heads): "
            f"\"{HOLDS}\" when no head's β·certificate rises by more than {GROWTH_LIMIT - 1:.0%} over the grid's "
            f"last {SPAN}× of n and no row violates the lemma, \"{OUTSIDE}\" when one does; the rate is the "
            f"slope of ln(mean k·α_max over rows with k ≥ n/2) against ln n, \"{RATE_HOLDS}\" when its 95% "
            f"interval lies within ±{RATE_TOLERANCE}, \"{RATE_SLOWER}\" when above {RATE_TOLERANCE}; the δ slope "
            f"illustrates, it does not decide.")
    lines = ["| " + " | ".join(TABLE_HEADER) + " |", "|" + "---|" * len(TABLE_HEADER)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return rule + "\n\n" + "\n".join(lines) + "\n"


def make(path: str, outdir: str) -> list:
    """transformer_theorem.md: the check of `path` and of the files of BESIDE next to it."""
    folder = os.path.dirname(os.path.abspath(path))
    paths = [path] + [os.path.join(folder, name) for name in BESIDE if os.path.exists(os.path.join(folder, name))]
    return [common.save_text(table(paths), outdir, "transformer_theorem.md")]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="sharp-transformer-dispersion result files")
    args = parser.parse_args(argv)
    for path in args.files:
        try:
            checks = check_models(common.load_result(path, EXPERIMENT))
        except common.ResultFileError as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
        if not checks:
            print(f"{path}: no model has two n at least {SPAN}x apart; nothing to check")
        for c in checks:
            print(f"{c.label()}: {c.verdict()}")
    return 0


# What this module makes (analysis/products.py collects it for make_figures and the page).
PRODUCTS = (
    product.Product("transformer_theorem", INPUT_FILE, make),
)


if __name__ == "__main__":
    sys.exit(main())
