"""Reading a "transformer-dispersion" result file of trained text models (sharp-transformer-dispersion
--checkpoint, sweeps/*/transformer-dispersion-trained.cfg; docs/science.md#transformers-disperse,
#algorithmic-text) for the figures: which task and normaliser each model was trained on (from its
training file, looked up beside the result file first), its series across n, and the models grouped
by (algorithm mix, normaliser, input) with their seeds pooled.
"""
from __future__ import annotations

import dataclasses
import os

import numpy as np

import common
import text_results
import transformer_theorem

EXPERIMENT = "transformer-dispersion"
# What this module reads of the file (checked against the binary's --describe by
# analysis/tests/test_needs_declared.py).
NEEDS = common.Needs(EXPERIMENT, params=transformer_theorem.MODEL_PARAMS + ("n",),
                     metrics=("tokens", "ln_n", "uniform_baseline", "entropy_all_mean"))
INPUT_FILE = "transformer-dispersion-trained.h5"
RANDOM_FILE = "transformer-dispersion.h5"   # the random models, drawn beside the trained ones


@dataclasses.dataclass
class TrainedModel:
    """One trained model on one input kind, its points sorted by n. Per-head series are
    [len(rows), layers·heads]."""
    reference: str                 # FILE.h5#ID
    input: str
    rows: np.ndarray
    n: np.ndarray                  # the token budget of each point
    tokens: np.ndarray             # the prompts' mean length (n for uniform inputs)
    algorithms: str                # "minimum", "minimum+binary_search"; "?" when the training file is unreadable
    normaliser: str
    positional: str
    seed: int
    train_tokens: float            # prompt length at the largest training length (NaN: unknown)
    check: object                  # transformer_theorem.ModelCheck (None with fewer than two n 4x apart)


def _train_tokens(result: common.Result, rows, largest_length: float) -> float:
    """The prompt length (tokens) at the largest training length: a line through every sample's
    (task_length, tokens) of the model's points, evaluated there."""
    keys, tokens = [], []
    for i in rows:
        a = result.arrays(result.ids[i])
        keys += list(np.asarray(a["task_length"], dtype=float))
        tokens += list(np.asarray(a["tokens"], dtype=float))
    keys, tokens = np.array(keys), np.array(tokens)
    if not np.isfinite(largest_length) or len(set(keys)) < 2 or np.any(keys <= 0):
        return float("nan")
    slope, intercept = np.polyfit(keys, tokens, 1)
    return float(intercept + slope * largest_length)


def trained_models(path: str) -> tuple:
    """(result, [TrainedModel]) for every trained model of the file (random ones are skipped)."""
    result = NEEDS.load(path)
    refs = [str(common._decode(x)) for x in result.params["checkpoint"]]
    training = text_results.training_params(path, sorted({r for r in refs if r != "none"}))
    checks = {(c.key["checkpoint"], c.key["input"]): c for c in transformer_theorem.check_models(result)}
    models = []
    inputs = [str(common._decode(x)) for x in result.params["input"]]
    for ref, kind in sorted({(r, k) for r, k in zip(refs, inputs) if r != "none"}):
        rows = np.array([i for i in range(len(result)) if refs[i] == ref and inputs[i] == kind])
        rows = rows[np.argsort(result.params["n"][rows])]
        p = training.get(ref) or {}
        lengths = [int(x) for x in str(p.get("lengths", "")).replace("+", ",").split(",") if x.strip().isdigit()]
        largest = float(max(lengths)) if lengths else float("nan")
        models.append(TrainedModel(
            reference=ref, input=kind, rows=rows, n=np.asarray(result.params["n"][rows], dtype=float),
            tokens=np.asarray(result.metrics["tokens"][rows], dtype=float),
            algorithms=str(p.get("algorithms", "?")), normaliser=str(p.get("normaliser", f"model {ref[-6:]}")),
            positional=str(p.get("positional", "?")), seed=int(p.get("seed", 0)),
            train_tokens=_train_tokens(result, rows, largest) if kind == "task" else float("nan"),
            check=checks.get((ref, kind))))
    if not models:
        raise common.ResultFileError(f"{path}: no trained model (every point has checkpoint = none)")
    return result, models


def head_series(result: common.Result, model: TrainedModel, name: str) -> np.ndarray:
    """[len(model.rows), layers·heads]: the per-head array `name` at each n."""
    return np.array([np.asarray(result.arrays(result.ids[i])[name], dtype=float).ravel() for i in model.rows])


def groups(models: list) -> dict:
    """{(algorithms, normaliser, input): [TrainedModel]}: seeds of one training recipe together."""
    out: dict = {}
    for m in models:
        out.setdefault((m.algorithms, m.normaliser, m.input), []).append(m)
    return out


def normaliser_order(name: str) -> tuple:
    """softmax first, adaptive second, the others by name."""
    return ({"softmax": 0, "adaptive": 1}.get(name, 2), name)


def random_file_beside(path: str) -> str | None:
    candidate = os.path.join(os.path.dirname(os.path.abspath(path)), RANDOM_FILE)
    return candidate if os.path.exists(candidate) else None
