"""Reading an "eval-text" result file (docs/science.md#algorithmic-text) for the figure and the
scorecard: which normaliser each evaluated model was trained with, and exact-match counts pooled
over models (seeds) at the lengths the models never saw.

The trained normaliser of a model is read from its training file (the checkpoint's FILE.h5, looked
up beside the evaluation file first); an unknown one is labelled by model id.
"""
from __future__ import annotations

import numpy as np

import common
from checkpoints import training_params

EXPERIMENT = "eval-text"
# What this module reads of the file (checked against the binary's --describe by
# analysis/tests/test_needs_declared.py).
NEEDS = common.Needs(EXPERIMENT, params=("checkpoint", "algorithm", "length", "samples"),
                     metrics=("evaluated", "in_training_lengths"))


def trained_normalisers(eval_path: str, references: list) -> dict:
    """checkpoint reference -> the normaliser its model was trained with (model id when unknown)."""
    params = training_params(eval_path, references)
    return {ref: str(p["normaliser"]) if p else f"model {ref.rpartition('#')[2][:6]}" for ref, p in params.items()}


def read_points(path: str) -> tuple:
    """(result, checkpoint [P] str, algorithm [P] str, length [P] int, evaluated [P] bool,
    in_training_lengths [P] bool) of an eval-text file; refuses one lacking these columns."""
    r = NEEDS.load(path, finite=False)
    return (r, [str(common._decode(x)) for x in r.params["checkpoint"]],
            [str(common._decode(x)) for x in r.params["algorithm"]],
            np.asarray(r.params["length"], dtype=int), np.asarray(r.metrics["evaluated"]) == 1,
            np.asarray(r.metrics["in_training_lengths"]) == 1)


def unseen_pools(path: str) -> dict:
    """{(algorithm, trained normaliser, item): (right, samples)}: exact_final.<item> × samples
    summed over every evaluated point of every model at a length not in that model's training and
    above its largest training length (item: an in-point normaliser, `trained` = the model's own,
    `adaptive` = applied at inference). Right counts are rounded to whole samples."""
    r, refs, algos, lengths, evaluated, in_training = read_points(path)
    samples = np.asarray(r.params["samples"], dtype=float)
    trained = trained_normalisers(path, sorted(set(refs)))
    largest = {}  # per model: its largest training length
    for i, ref in enumerate(refs):
        if in_training[i]:
            largest[ref] = max(largest.get(ref, 0), int(lengths[i]))
    items = sorted({name.split(".", 1)[1] for name in r.metrics if name.startswith("exact_final.")
                    and not name.endswith(("_low", "_high"))})
    pools: dict = {}
    for i in range(len(r)):
        if not evaluated[i] or in_training[i] or lengths[i] <= largest.get(refs[i], 0):
            continue
        for item in items:
            value = float(r.metrics[f"exact_final.{item}"][i])
            if not np.isfinite(value):
                continue
            key = (algos[i], trained[refs[i]], item)
            right, total = pools.get(key, (0, 0))
            pools[key] = (right + int(round(value * samples[i])), total + int(samples[i]))
    return pools
