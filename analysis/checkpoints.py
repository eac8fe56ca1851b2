"""What a checkpoint reference FILE.h5#ID names: the training point of a model, read from the
training file (train-max, train-text) that an evaluation file's `checkpoint` column points to.

The training file is looked up beside the evaluation file first (a run writes both into one
results folder), then as written (relative to where the binary ran).
"""
from __future__ import annotations

import os

import common


def training_params(path: str, references: list, experiment: str = "train-text") -> dict:
    """checkpoint reference FILE.h5#ID -> its training point's parameters {name: value} (None when
    its file or point cannot be read); `path` is the file that names the references, `experiment`
    the training files' experiment."""
    out, files = {}, {}
    for ref in references:
        file, _, point = ref.rpartition("#")
        if file not in files:
            files[file] = None
            here = os.path.dirname(os.path.abspath(path))
            for candidate in (os.path.join(here, os.path.basename(file)), file):
                if os.path.exists(candidate):
                    try:
                        files[file] = common.load_result(candidate, experiment)
                    except common.ResultFileError:
                        files[file] = None
                    break
        train = files[file]
        out[ref] = None
        if train is not None and point in train.ids:
            row = train.ids.index(point)
            out[ref] = {name: common._decode(values[row]) for name, values in train.params.items()}
    return out


def steps_text(params: list) -> str:
    """The training steps of some models as the page prints them: "4000", "500–800" when they
    differ, "" when no model's steps are known. `params`: training_params values (None allowed)."""
    steps = sorted({int(p["steps"]) for p in params if p and "steps" in p})
    if not steps:
        return ""
    return str(steps[0]) if len(steps) == 1 else f"{steps[0]}–{steps[-1]}"
