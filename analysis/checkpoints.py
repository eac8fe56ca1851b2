"""What a checkpoint reference FILE.h5#ID names: the training point of a model, read from the
training file (train-max, train-text) that an evaluation file's `checkpoint` column points to.

The training file is looked up beside the evaluation file first (a run writes both into one
results folder), then as written (relative to where the binary ran); a shipped evaluation's
training file is not shipped (it holds weights), but the manifest beside it keeps its points'
parameters (scripts/publish.py), which stand in for it.
"""
from __future__ import annotations

import os

import common
import published


def training_params(path: str, references: list, experiment: str = "train-text") -> dict:
    """checkpoint reference FILE.h5#ID -> its training point's parameters {name: value} (None when
    its file or point cannot be read); `path` is the file that names the references, `experiment`
    the training files' experiment."""
    out, files, kept = {}, {}, {}
    here = os.path.dirname(os.path.abspath(path))
    for ref in references:
        file, _, point = ref.rpartition("#")
        if file not in files:
            files[file] = None
            for candidate in (os.path.join(here, os.path.basename(file)), file):
                if os.path.exists(candidate):
                    try:
                        files[file] = common.load_result(candidate, experiment)
                    except common.ResultFileError:
                        files[file] = None
                    break
            if files[file] is None:  # read once per training file, not once per reference
                kept[file] = _manifest_points(here, os.path.basename(file))
        train = files[file]
        out[ref] = None
        if train is not None and point in train.ids:
            row = train.ids.index(point)
            out[ref] = {name: common._decode(values[row]) for name, values in train.params.items()}
        elif train is None and isinstance(kept[file].get(point), dict):
            out[ref] = dict(kept[file][point])
    return out


def _manifest_points(folder: str, file: str) -> dict:
    """{point id: parameters} of the training file `file` as the manifest in `folder` keeps them for
    a file it did not ship; {} when there is no such manifest or entry."""
    try:
        manifest = published.load_manifest(folder)
    except published.ManifestError:
        return {}
    entry = manifest.get("not_shipped", {}).get(file)
    points = entry.get("points") if isinstance(entry, dict) else None
    return points if isinstance(points, dict) else {}


def steps_text(steps) -> str:
    """The training steps of some models as the page prints them: "4000", "500–800" when they
    differ, "" when no model's steps are known. `steps`: int or None per model."""
    known = sorted({int(k) for k in steps if k is not None})
    if not known:
        return ""
    return str(known[0]) if len(known) == 1 else f"{known[0]}–{known[-1]}"
