"""The competence gate of a trained text model (docs/science.md#published-numbers): a claim about
what a remedy does to text models is only measured on models that learned the task.

A model passes when its greedy exact match of the final output (after ` | `), read from the
eval-text rows of its own trained normaliser (`exact_final.trained`) at its own training lengths,
averaged over those rows (one per algorithm and training length), is at least GATE. The scorecard's
CLRS-Text rows and the text study's tables apply this rule unchanged.
"""
from __future__ import annotations

import dataclasses

import numpy as np

import text_results

GATE = 0.95   # fraction of exact final outputs at the training lengths


@dataclasses.dataclass(frozen=True)
class Competence:
    """One evaluated model of an eval-text file."""
    model: str               # checkpoint reference FILE.h5#ID
    trained: str             # normaliser trained in (model id when its training file is not found)
    seed: int | None         # training seed (None when unknown)
    algorithms: tuple        # algorithms it was evaluated on
    lengths: tuple           # its training lengths among the evaluated rows
    exact: float | None      # mean exact_final.trained over those rows; None: no such row
    traces: bool             # trained (and evaluated) with the algorithms' traces
    steps: int | None = None  # training steps (None when its training file is not found)

    @property
    def passes(self) -> bool:
        return self.exact is not None and self.exact >= GATE

    def label(self) -> str:
        """e.g. 'minimum, softmax, seed 1'."""
        seed = f", seed {self.seed}" if self.seed is not None else ""
        return f"{'+'.join(self.algorithms) or '?'}, {self.trained}{seed}"

    def figure(self) -> str:
        """e.g. 'minimum, softmax, seed 1: 31.2%' (or 'not evaluated at its training lengths')."""
        value = ("not evaluated at its training lengths" if self.exact is None
                 else f"{100 * self.exact:.1f}%")
        return f"{self.label()}: {value}"


def competence(path: str) -> dict:
    """{checkpoint reference: Competence} for every model of the eval-text file at `path`."""
    r, refs, algos, lengths, evaluated, in_training = text_results.read_points(path)
    exact = (np.asarray(r.metrics["exact_final.trained"], dtype=float)
             if "exact_final.trained" in r.metrics else np.full(len(r), np.nan))
    traces = (np.asarray(r.metrics["trace"]) == 1 if "trace" in r.metrics
              else np.zeros(len(r), dtype=bool))
    params = text_results.training_params(path, sorted(set(refs)))
    trained = text_results.trained_normalisers(path, sorted(set(refs)))
    out = {}
    for ref in sorted(set(refs)):
        rows = [i for i in range(len(r)) if refs[i] == ref and evaluated[i]]
        seen = [i for i in rows if in_training[i] and np.isfinite(exact[i])]
        p = params.get(ref) or {}
        out[ref] = Competence(
            model=ref, trained=trained[ref],
            seed=int(p["seed"]) if "seed" in p else None,
            algorithms=tuple(sorted({algos[i] for i in rows})),
            lengths=tuple(sorted({int(lengths[i]) for i in seen})),
            exact=float(np.mean(exact[seen])) if seen else None,
            traces=bool(rows) and bool(np.all(traces[rows])),
            steps=int(p["steps"]) if "steps" in p else None)
    return out


def gate_text(models) -> str:
    """The gate and each model's figure, for a row that names why it is (not) measured."""
    return (f"gate ≥ {100 * GATE:g}% greedy exact match at the training lengths; "
            + "; ".join(m.figure() for m in models))
