"""The state of each result file the paper page reads: missing, refused (with the reader's reason),
failed (reading it raised a bug of the analysis), or loaded, with its provenance (git_sha, command line, scale, creation time) and whether it is
stale (built from another commit than the checkout's). analysis/page/report.py renders these.

Nothing here guesses: a file without the root attribute `scale` has scale "unknown", a checkout
that is not a git work tree has commit "unknown" and no file is called stale against it.
"""
from __future__ import annotations

import dataclasses
import os
import subprocess

import common
import published

REPO_ROOT = published.REPO_ROOT
UNKNOWN = "unknown"


def checkout_sha(repo: str = REPO_ROOT) -> str:
    """HEAD of the checkout the analysis runs from, or 'unknown' (not a git work tree)."""
    try:
        p = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True,
                           text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return UNKNOWN
    return p.stdout.strip() if p.returncode == 0 and p.stdout.strip() else UNKNOWN


def commits_between(old: str, new: str, repo: str = REPO_ROOT) -> int | None:
    """How many commits `new` is ahead of `old`, or None when git cannot tell (unknown commit)."""
    try:
        p = subprocess.run(["git", "-C", repo, "rev-list", "--count", f"{old}..{new}"],
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return int(p.stdout.strip()) if p.returncode == 0 and p.stdout.strip().isdigit() else None


# What the binaries are built from: a file made by another commit is only stale in substance when
# one of these changed between that commit and the checkout (docs, analysis and sweep files do not
# make a result file wrong).
CODE_PATHS = ("lib", "experiments", "runners", "tools", "cmake", "CMakeLists.txt")


def code_changes(old: str, new: str, repo: str = REPO_ROOT) -> int | None:
    """How many source files under CODE_PATHS changed between two commits, a file moved or renamed
    without a change of content not counted; None when git cannot tell."""
    try:
        p = subprocess.run(["git", "-C", repo, "diff", "-M", "--name-status", old, new, "--",
                            *CODE_PATHS], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    if p.returncode != 0:
        return None
    return sum(1 for line in p.stdout.splitlines() if line and not line.startswith("R100"))


@dataclasses.dataclass
class Source:
    """One result file. state: 'missing' | 'refused' | 'failed' | 'ok'. For 'ok', `result` is the loaded
    file and the provenance fields are its root attributes (or 'unknown' when absent)."""
    name: str                    # file name inside the results directory, e.g. "bounds.h5"
    path: str                    # as given (results/bounds.h5)
    state: str
    reason: str = ""             # why refused or failed (common.Problem's text)
    result: common.Result | None = None
    experiment: str = ""
    git_sha: str = UNKNOWN
    git_dirty: bool = False
    command_line: str = UNKNOWN
    scale: str = UNKNOWN
    created: str = UNKNOWN
    finished: str = UNKNOWN
    stale: bool = False
    behind: int | None = None    # commits between the file's git_sha and the checkout
    code_changed: int | None = None  # files under CODE_PATHS changed since (None: unknown)
    published: str = ""          # the label of a shipped file (results/published/<scale>/), else ""

    @property
    def origin(self) -> str:
        """Where the file comes from, as the scorecard's rows say it: "run" (made into the results
        folder) or the shipped file's label ("published: made at commit X on DATE, ...")."""
        return self.published or "run"

    @property
    def ok(self) -> bool:
        return self.state == "ok"


def experiment_of(name: str, repo: str = REPO_ROOT) -> str:
    """The experiment a result file holds: its sweep's line `# experiment: NAME` (one binary
    writes several files, e.g. eval-remedies.h5 by sharp-eval-max), else the file's name; a pilot's
    file (NAME-pilot.h5) holds NAME's experiment."""
    stem = os.path.splitext(name)[0]
    if stem.endswith("-pilot"):  # a study's pilot (train-text-pilot.h5) holds its study's experiment
        stem = stem[:-len("-pilot")]
    config = os.path.join(repo, "sweeps", "quick", f"{stem}.cfg")
    if os.path.isfile(config):
        with open(config, encoding="utf-8") as fh:
            for line in fh:
                text = line.strip()
                if text.startswith("# experiment:"):
                    return text[len("# experiment:"):].strip() or stem
    return stem


def inspect(results_dir: str, name: str, head: str,
            published_dir: str | None = None) -> Source:
    """Load results_dir/name (common.load_result's checks: HDF5, schema, complete, and the
    experiment its name says: bounds.h5 holds "bounds") and read its provenance; `head` is the
    checkout's commit (checkout_sha()). A file missing there is taken from the largest published
    scale that ships it (published_dir/<scale>/name), after its manifest vouches for it."""
    try:
        path, label = published.resolve(results_dir, name, published_dir)
    except published.ManifestError as err:
        shipped = published.find(name, published_dir)
        return Source(name, os.path.join(shipped[1], name) if shipped else name, "refused",
                      reason=str(err))
    if path is None:
        return Source(name, os.path.join(results_dir, name), "missing")
    return load(path, name, head, label)


# How large a scale is, for judging a claim at the largest scale present: the named scales in
# order; a custom run (any other grid) ranks above quick and below paper; an unknown one last.
SCALE_RANK = {"quick": 0, "custom": 1, "paper": 2, "cluster": 3}


def inspect_largest(results_dir: str, name: str, head: str,
                    published_dir: str | None = None) -> Source:
    """Like inspect(), but choosing among results_dir/name and every published scale's copy the
    readable one of the largest scale (root attribute `scale`, SCALE_RANK); on a tie the results
    folder's own. The scorecard judges each claim from it; its rows say which file it was."""
    first = inspect(results_dir, name, head, published_dir)
    candidates = [first]
    folder_root = published_dir or published.PUBLISHED_DIR
    for scale in published.SCALES:
        folder = os.path.join(folder_root, scale)
        path = os.path.join(folder, name)
        if path == first.path or not os.path.exists(path):
            continue
        try:
            label = published.label(published.entry(folder, name))
        except published.ManifestError:
            continue  # inspect() of the page shows the refusal where the file is displayed
        candidates.append(load(path, name, head, label))
    readable = [c for c in candidates if c.ok]
    if not readable:
        return first
    return max(readable, key=lambda c: SCALE_RANK.get(c.scale, -1))  # max keeps the first on ties


def load(path: str, name: str, head: str, label: str = "") -> Source:
    """The Source of the result file at `path` (holding `name`'s experiment); `label` marks a
    shipped file."""
    result, problem = common.attempt(lambda: common.load_result(path, experiment_of(name)))
    if problem is not None:
        return Source(name, path, problem.kind, reason=problem.text, published=label)
    attrs = result.attrs
    sha = str(attrs.get("git_sha", UNKNOWN)) or UNKNOWN
    stale = head != UNKNOWN and sha != head
    changed = code_changes(sha, head) if stale and sha != UNKNOWN else None
    if label and changed == 0:
        stale = False  # a shipped file is only stale when the code that computes it has changed
    return Source(
        name, path, "ok", result=result, experiment=str(attrs.get("experiment", "")),
        git_sha=sha, git_dirty=bool(attrs.get("git_dirty", 0)),
        command_line=str(attrs.get("command_line", UNKNOWN)),
        scale=str(attrs["scale"]) if "scale" in attrs else UNKNOWN,
        created=str(attrs.get("created", UNKNOWN)), finished=str(attrs.get("finished", UNKNOWN)),
        stale=stale,
        behind=commits_between(sha, head) if stale and sha != UNKNOWN else None,
        code_changed=changed if stale else None, published=label)


def rerun_command(results_dir: str, experiment: str, repo: str = REPO_ROOT) -> str:
    """The command that makes results_dir/<experiment>.h5 at quick scale: its sweep file when
    sweeps/quick/<experiment>.cfg exists (with the inputs its '# input:' lines name, as
    scripts/paper.sh passes them), the bare binary otherwise."""
    out = os.path.join(results_dir, f"{experiment}.h5")
    config = os.path.join("sweeps", "quick", f"{experiment}.cfg")
    words = [f"build/bin/sharp-{experiment_of(experiment + '.h5', repo)}"]
    full = os.path.join(repo, config)
    if os.path.isfile(full):
        words += ["--config", config]
        with open(full, encoding="utf-8") as fh:
            for line in fh:
                text = line.strip()
                if text.startswith("# input:") and "=" in text:
                    flag, source = (part.strip() for part in text[len("# input:"):].split("=", 1))
                    words += [f"--{flag}", os.path.join(results_dir, f"{source}.h5")]
    words += ["--out", out]
    return " ".join(words)
