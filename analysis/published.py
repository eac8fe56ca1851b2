"""Shipped results: results/published/<scale>/ holds the result files of one run of a scale, with
MANIFEST.json (written by scripts/publish.py, `make publish SCALE=...`). The report falls back to
them for any file missing in the results directory; this module reads the manifest and checks a
file against it.

MANIFEST.json:
    {"scale": "paper", "published": UTC ISO-8601, "cores": N,
     "files": {"eval-max.h5": {"sha256", "bytes", "git_sha", "command", "scale", "created",
                               "finished", "wall_seconds", "cores"}, ...},
     "not_shipped": {"train-max.h5": {"why", "command"}, ...}}

A file whose sha256 differs from its manifest entry is refused with the reason (it was edited or
damaged after publishing); a file the manifest does not list is not a published file.
"""
from __future__ import annotations

import hashlib
import json
import os

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# SHARP_PUBLISHED_DIR replaces it (tests of "missing" pages point it at an empty folder, so that
# the repository's own shipped files do not fill their gaps).
PUBLISHED_DIR = os.environ.get("SHARP_PUBLISHED_DIR") or os.path.join(REPO_ROOT, "results",
                                                                      "published")
MANIFEST = "MANIFEST.json"
# Largest first: the scorecard judges a claim at the largest scale present, and a missing file
# falls back to the largest published scale that has it.
SCALES = ("cluster", "paper", "quick")


class ManifestError(Exception):
    """A published folder or file that cannot be trusted; the message says why."""


def sha256_of(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def load_manifest(folder: str) -> dict:
    """The manifest of one published folder; ManifestError when it is missing or malformed."""
    path = os.path.join(folder, MANIFEST)
    try:
        with open(path, encoding="utf-8") as fh:
            manifest = json.load(fh)
    except FileNotFoundError:
        raise ManifestError(f"{path} is missing") from None
    except (OSError, ValueError) as err:
        raise ManifestError(f"{path} cannot be read: {err}") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise ManifestError(f"{path} has no 'files' table")
    return manifest


def entry(folder: str, name: str) -> dict | None:
    """The manifest entry of `name` in `folder`, None when the folder does not publish it (no such
    file and no entry). ManifestError when the file is there but the manifest cannot vouch for it:
    no manifest, no entry, or a different sha256."""
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        return None
    manifest = load_manifest(folder)
    item = manifest["files"].get(name)
    if not isinstance(item, dict) or "sha256" not in item:
        raise ManifestError(f"{path} is not listed in {os.path.join(folder, MANIFEST)}")
    actual = sha256_of(path)
    if actual != item["sha256"]:
        raise ManifestError(
            f"{path} does not match its manifest: sha256 {actual[:16]}… where "
            f"{MANIFEST} says {str(item['sha256'])[:16]}… (changed after publishing; "
            f"`git checkout -- {os.path.relpath(path, REPO_ROOT)}` restores it)")
    return item


def find(name: str, published_dir: str | None = None) -> tuple[str, str] | None:
    """(scale, folder) of the largest published scale that holds `name`, or None."""
    published_dir = published_dir or PUBLISHED_DIR
    for scale in SCALES:
        folder = os.path.join(published_dir, scale)
        if os.path.exists(os.path.join(folder, name)):
            return scale, folder
    return None


def label(item: dict) -> str:
    """'published: made at commit X on DATE, N cores, T minutes' for a manifest entry."""
    sha = str(item.get("git_sha", "unknown"))[:12]
    date = str(item.get("finished") or item.get("created") or "an unknown date")[:10]
    cores = item.get("cores")
    seconds = item.get("wall_seconds")
    parts = [f"published: made at commit {sha} on {date}"]
    if cores:
        parts.append(f"{cores} cores")
    if seconds is not None:
        parts.append(f"{float(seconds) / 60:.0f} minutes")
    return ", ".join(parts)


def resolve(results_dir: str, name: str,
            published_dir: str | None = None) -> tuple[str | None, str]:
    """Where to read `name` from: (results_dir/name, "") when it is there, else (the shipped file,
    its label) from the largest published scale that has it, else (None, ""). ManifestError when
    the shipped file is there but its manifest does not vouch for it."""
    path = os.path.join(results_dir, name)
    if os.path.exists(path):
        return path, ""
    shipped = find(name, published_dir)
    if shipped is None:
        return None, ""
    return os.path.join(shipped[1], name), label(entry(shipped[1], name))
