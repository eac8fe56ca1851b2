#!/usr/bin/python3
"""Ship the result files of a finished run of one scale with the repository (`make publish`).

    /usr/bin/python3 scripts/publish.py --scale paper [RESULTS_DIR] [--out DIR]

Copies every merged result file RESULTS_DIR/*.h5 whose root attribute `scale` is SCALE into
results/published/SCALE/ (replacing what was there) and writes MANIFEST.json beside them: each
file's sha256, size, git_sha, command line, scale, created/finished, and the wall time and cores
of the stage that made it (RESULTS_DIR/stage-times.tsv, written by scripts/paper.sh; summed over
resumed runs). Files that hold model weights (arrays named param.*) are not shipped: the manifest
records the command that regenerates them and each point's parameters (so that an evaluation
of those models still names them). --include ships named files of another scale. The report
(analysis/make_report.py) falls back to these files for any result missing in results/ and labels
them "published: made at commit X on DATE".

Each file is shipped rewritten by h5repack in HDF5's latest object formats with groups of up to 64
links kept compact: the same data, attributes and data checksum (verified), a third less metadata
(a paper-scale transformer-dispersion.h5 of 1584 points, 43 000 small datasets, before its
labelled view stored small arrays as copies: 24.8 -> 16.8 MB).
The manifest's sha256 and size are those of the shipped file; `source_sha256` is the run's own.

Refuses (exit 2, nothing written): a file made from a checkout with uncommitted changes (its
git_dirty attribute), an incomplete file, no file of that scale, or more than --limit-mb in all.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile

import h5py

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO_ROOT, "analysis"))

import common  # noqa: E402
import published  # noqa: E402


def text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def point_params(f: h5py.File) -> dict:
    """{point id: {parameter: value}} of a file: kept in the manifest for a file not shipped, so
    that evaluations of its models still name them (analysis/checkpoints.py reads it)."""
    ids = [text(v) for v in f["points/id"][()]]
    columns = {name: f["points/params"][name][()] for name in f["points/params"]}
    plain = lambda v: text(v) if isinstance(v, (bytes, str)) else v.item()  # noqa: E731
    return {pid: {name: plain(values[i]) for name, values in sorted(columns.items())}
            for i, pid in enumerate(ids)}


def holds_weights(f: h5py.File) -> bool:
    """Whether any point of the file stores model weights (/arrays/<id>/param.<tensor>)."""
    arrays = f.get("arrays")
    if arrays is None:
        return False
    return any(name.startswith("param.") for point in arrays.values() for name in point)


REPACK = ["h5repack", "-L", "-c", "64"]


def compact_copy(source: str, target: str) -> str | None:
    """target = source rewritten by h5repack (REPACK); None, or why it could not be (then nothing is
    left at target). The data checksum (analysis/common.py) of the copy must equal the source's."""
    try:
        p = subprocess.run([*REPACK, source, target], capture_output=True, text=True, timeout=3600)
    except OSError as err:
        return f"h5repack cannot be run ({err}; Debian package hdf5-tools, `make deps`)"
    if p.returncode != 0:
        return f"h5repack failed on {source}: {p.stderr.strip()[:500]}"
    with h5py.File(source, "r") as a, h5py.File(target, "r") as b:
        stored, ours = text(a.attrs.get("checksum", "")), common.data_checksum(b)
        same = stored == ours == common.data_checksum(a) and \
            {k: text(v) for k, v in a.attrs.items()} == {k: text(v) for k, v in b.attrs.items()}
    if not same:
        os.remove(target)
        return f"the repacked copy of {source} does not hold the same data (checksum {ours} vs {stored})"
    return None


def stage_times(results_dir: str, scale: str) -> dict:
    """file name -> (seconds summed over the runs of its stage at this scale, cores of the last)."""
    path = os.path.join(results_dir, "stage-times.tsv")
    times: dict = {}
    if not os.path.exists(path):
        return times
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 4 or fields[3] != scale:
                continue
            seconds, cores = times.get(fields[0], (0, None))
            times[fields[0]] = (seconds + int(fields[1]), int(fields[2]))
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results_dir", nargs="?", default="results", metavar="RESULTS_DIR")
    parser.add_argument("--scale", required=True, choices=["quick", "paper", "cluster"])
    parser.add_argument("--out", help="default: results/published/SCALE in this repository")
    parser.add_argument("--include", action="append", default=[], metavar="NAME",
                        help="also ship this file of RESULTS_DIR whatever its scale (repeatable; e.g. the text "
                             "study's pilot evaluation, run from the command line: scale custom); the "
                             "manifest records each file's own scale")
    parser.add_argument("--limit-mb", type=float, default=25.0,
                        help="refuse to ship more than this many megabytes (default 25)")
    args = parser.parse_args(argv)
    out = args.out or os.path.join(published.PUBLISHED_DIR, args.scale)

    def refuse(message: str) -> int:
        print(f"publish: {message}; nothing written", file=sys.stderr)
        return 2

    absent = [name for name in args.include if not os.path.isfile(os.path.join(args.results_dir, name))]
    if absent:
        return refuse(f"--include {' '.join(absent)}: not in {args.results_dir}")
    times = stage_times(args.results_dir, args.scale)
    files, not_shipped, skipped = {}, {}, []
    for name in sorted(os.listdir(args.results_dir)) if os.path.isdir(args.results_dir) else []:
        path = os.path.join(args.results_dir, name)
        if not name.endswith(".h5") or not os.path.isfile(path):
            continue
        try:
            with h5py.File(path, "r") as f:
                attrs = {k: text(v) for k, v in f.attrs.items()
                         if k in ("scale", "git_sha", "git_dirty", "command_line", "created",
                                  "finished", "complete", "experiment")}
                weights = holds_weights(f)
                params = point_params(f) if weights else {}
        except OSError as err:
            return refuse(f"{path} cannot be read ({err})")
        if attrs.get("scale") != args.scale and name not in args.include:
            skipped.append(f"{name} (scale {attrs.get('scale', 'unknown')})")
            continue
        if attrs.get("complete") != "1":
            return refuse(f"{path} is incomplete")
        if attrs.get("git_dirty", "0") not in ("0", "False", "false"):
            return refuse(f"{path} was made from a checkout with uncommitted changes; commit, "
                          f"rerun `make paper SCALE={args.scale}` and publish again")
        if weights:
            not_shipped[name] = {"why": "model weights (the evaluations made from them are shipped)",
                                 "git_sha": attrs.get("git_sha", "unknown"),
                                 "command": attrs.get("command_line", "unknown"),
                                 "points": params}
            continue
        seconds, cores = times.get(name, (None, None))
        files[name] = {"source_sha256": published.sha256_of(path), "source_bytes": os.path.getsize(path),
                       "git_sha": attrs.get("git_sha", "unknown"),
                       "command": attrs.get("command_line", "unknown"),
                       "scale": attrs.get("scale", "unknown"),
                       "created": attrs.get("created", "unknown"),
                       "finished": attrs.get("finished", "unknown"),
                       "wall_seconds": seconds, "cores": cores}
    if not files:
        return refuse(f"no complete result file of scale '{args.scale}' in {args.results_dir}"
                      + (f" (other scales: {', '.join(skipped)})" if skipped else ""))

    manifest = {
        "scale": args.scale,
        "published": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "cores": max((item["cores"] or 0 for item in files.values()), default=0) or None,
        "files": files,
        "not_shipped": not_shipped,
        "limit_mb": args.limit_mb,
    }
    # The folder is replaced whole: written beside it, then swapped in.
    parent = os.path.dirname(os.path.abspath(out))
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".publish-", dir=parent)
    try:
        for name, item in files.items():
            target = os.path.join(staging, name)
            problem = compact_copy(os.path.join(args.results_dir, name), target)
            if problem:
                shutil.rmtree(staging, ignore_errors=True)
                return refuse(problem)
            item["sha256"], item["bytes"] = published.sha256_of(target), os.path.getsize(target)
        total = sum(item["bytes"] for item in files.values())
        if total > args.limit_mb * 1e6:
            shutil.rmtree(staging, ignore_errors=True)
            return refuse(f"{total / 1e6:.1f} MB to ship (repacked; "
                          f"{sum(i['source_bytes'] for i in files.values()) / 1e6:.1f} MB as run), "
                          f"more than the {args.limit_mb:g} MB limit")
        with open(os.path.join(staging, published.MANIFEST), "w", encoding="utf-8") as fh:
            json.dump(manifest, fh, indent=1, sort_keys=True)
            fh.write("\n")
        if os.path.exists(out):
            old = out + ".old"
            shutil.rmtree(old, ignore_errors=True)
            os.rename(out, old)
            os.rename(staging, out)
            shutil.rmtree(old)
        else:
            os.rename(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    for name, item in files.items():
        print(f"published {name}: {item['bytes'] / 1e6:.2f} MB ({item['source_bytes'] / 1e6:.2f} MB as run), "
              f"commit {item['git_sha'][:12]}")
    for name in not_shipped:
        print(f"not shipped {name}: model weights (the manifest keeps its command)")
    for name in skipped:
        print(f"skipped {name}")
    print(f"publish: {len(files)} file(s), {total / 1e6:.2f} MB in {os.path.relpath(out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
