"""The theorem's check across n (docs/science.md#transformers-disperse, #measuring-heads) on a
sharp-transformer-dispersion result file.

    /usr/bin/python3 analysis/transformer_theorem.py results/transformer-dispersion.h5

A model is every point with the same parameters except n. Per head (arrays [layer, head]):
sup δ(n) = max over n' ≤ n of the head's largest δ_row. The hypothesis (bounded logits) holds when
every head's sup δ grows by less than 1.5× over the last 4× of n; then the lemma's consequence
n·α_max ≤ exp(β·sup δ) must hold at every n, and α_max must fall (the heads' mean α_max over rows
with k ≥ n/2 is lower at the largest n than 4× earlier) once the bound forces it, i.e. once
exp(β·sup δ) < n for every head (before that a sharp head may stay sharp: n is not yet large). Prints one line per model; exit status 0
when the file was read (the verdicts are data, e.g. the negative controls must fail), 1 otherwise.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

EXPERIMENT = "transformer-dispersion"
GROWTH_LIMIT = 1.5      # sup δ may grow by less than this over the last 4× of n
SPAN = 4                # ... that is, from n_max/4 to n_max


@dataclasses.dataclass
class ModelCheck:
    """The check of one model. `key` are its parameters (without n); arrays are [layer, head]."""
    key: dict
    ns: list
    sup_delta: np.ndarray          # [len(ns), layers, heads]: sup over n' <= n of delta_max
    growth: np.ndarray             # [layers, heads]: sup δ(n_max) / sup δ(n_max/4)
    bound_holds: bool              # n·α_max_last <= exp(β_max·sup δ(n_max)) at every n and head
    alpha_ratio: float             # mean α_max over half rows at n_max / at n_max/4
    lemma_violations: int
    beta: np.ndarray               # [layers, heads]: largest effective β (1 without one)

    @property
    def levels_off(self) -> bool:
        return bool(np.all(self.growth < GROWTH_LIMIT))

    @property
    def alpha_falls(self) -> bool:
        return self.alpha_ratio < 1.0

    @property
    def bound_informative(self) -> bool:
        """exp(β·sup δ)/n < 1 at the largest n for every head: only then must α_max be falling."""
        return bool(np.all(self.beta * self.sup_delta[-1] < math.log(self.ns[-1])))

    @property
    def holds(self) -> bool:
        """Bounded logits, and their consequences (α_max falling wherever the bound forces it)."""
        return (self.levels_off and self.bound_holds and self.lemma_violations == 0
                and (self.alpha_falls or not self.bound_informative))

    def label(self) -> str:
        k = self.key
        if k["checkpoint"] != "none":
            return f"trained {k['checkpoint']} ({k['input']} inputs, {k['samples']} samples)"
        name = f"{k['positional']}{'' if k['layer_norm'] else ' no-LN'} init {k['init_scale']:g}"
        extras = [f"{k['layers']}x{k['heads']} d{k['d_model']}", k["input"], k["normaliser"]]
        if not k["causal"]:
            extras.append("encoder")
        return f"{name} ({', '.join(extras)}, seed {k['seed']})"

    def verdict(self) -> str:
        g = float(self.growth.max())
        n0, n1 = self.ns[0], self.ns[-1]
        sup = float(self.sup_delta[-1].max())
        if not self.levels_off:
            return (f"hypothesis FAILS: sup delta grows {g:.2f}x over n {n1 // SPAN}..{n1} "
                    f"(limit {GROWTH_LIMIT}x, sup delta {sup:.3g}): the logits are not bounded in n")
        parts = [f"sup delta levels off ({g:.2f}x over n {n1 // SPAN}..{n1}, sup delta {sup:.3g})",
                 "n alpha_max <= exp(beta sup delta)" if self.bound_holds else "n alpha_max EXCEEDS exp(beta sup delta)"]
        if self.alpha_falls:
            parts.append(f"alpha_max falls ({self.alpha_ratio:.2f}x)")
        elif self.bound_informative:
            parts.append(f"alpha_max does NOT fall ({self.alpha_ratio:.2f}x) though exp(beta sup delta) < n")
        else:
            parts.append(f"alpha_max not forced down yet ({self.alpha_ratio:.2f}x: exp(beta sup delta) > n)")
        return ("holds: " if self.holds else "INCONSISTENT: ") + ", ".join(parts) + f" [n {n0}..{n1}]"


MODEL_PARAMS = ("checkpoint", "layers", "heads", "d_model", "vocab", "causal", "positional", "layer_norm",
                "init_scale", "max_length", "normaliser", "input", "samples", "seed")


def check_models(result: common.Result) -> list:
    """One ModelCheck per model with at least two n, the larger at least SPAN× the smaller."""
    result.require(params=MODEL_PARAMS + ("n",), metrics=("lemma_violations",), finite=False)
    checks = []
    for key, rows in result.group_by(*MODEL_PARAMS):
        ns = [int(result.params["n"][i]) for i in rows]
        order = np.argsort(ns)
        rows, ns = rows[order], [ns[i] for i in order]
        if len(ns) < 2 or ns[-1] < SPAN * ns[0]:
            continue
        per_n = [result.arrays(result.ids[i]) for i in rows]
        delta = np.array([a["delta_max"] for a in per_n])            # [N, L, H]
        sup = np.maximum.accumulate(delta, axis=0)
        start = max(j for j, n in enumerate(ns) if n <= ns[-1] // SPAN)
        growth = sup[-1] / sup[start]
        beta = np.array([a["beta_max"] for a in per_n])             # NaN: no effective β
        beta = np.where(np.isfinite(beta), beta, 1.0)
        # k·α_max of the last row, k its keys (n, or a task prompt's own length <= n); files made
        # before the array existed: n·α_max.
        if all("n_alpha_max_last" in a for a in per_n):
            n_alpha = np.array([a["n_alpha_max_last"] for a in per_n])
        else:
            n_alpha = np.array(ns, dtype=float)[:, None, None] * np.array([a["alpha_max_last"] for a in per_n])
        with np.errstate(over="ignore"):
            bound = np.exp(beta * sup[-1][None])
        bound_holds = bool(np.all(n_alpha <= bound * (1 + 1e-12)))
        alpha_half = np.array([float(np.mean(a["alpha_max_half_mean"])) for a in per_n])
        alpha_ratio = float(alpha_half[-1] / alpha_half[start])
        lemma = int(np.sum(result.metrics["lemma_violations"][rows]))
        names = dict(zip(MODEL_PARAMS, key))
        checks.append(ModelCheck(names, ns, sup, growth, bound_holds, alpha_ratio, lemma, beta.max(axis=0)))
    return checks


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", help="a sharp-transformer-dispersion result file")
    args = parser.parse_args(argv)
    try:
        result = common.load_result(args.file, EXPERIMENT)
        checks = check_models(result)
    except common.ResultFileError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    if not checks:
        print(f"{args.file}: no model has two n at least {SPAN}x apart; nothing to check")
    for c in checks:
        print(f"{c.label()}: {c.verdict()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
