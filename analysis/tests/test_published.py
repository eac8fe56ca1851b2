"""Shipped results (results/published/<scale>/ with MANIFEST.json): scripts/publish.py writes them
and refuses what it must; the manifest check refuses a modified file; the report and the figures
fall back to shipped files when the results directory lacks them and label them; a shipped file is
stale only when the code the binaries are built from changed (a moved file or a doc does not count).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "scripts"))

import make_figures  # noqa: E402
import published  # noqa: E402
import publish  # noqa: E402
from page import report  # noqa: E402
from page import sources as report_sources  # noqa: E402
import synthetic  # noqa: E402

PAPER = {"scale": "paper"}


def paper_results(directory: str) -> None:
    """A small paper-scale run: bounds, weight-bound and eval-max, plus a training file with
    weights (which is not shipped) and a quick-scale file (which is skipped)."""
    os.makedirs(directory, exist_ok=True)
    synthetic.write_bounds(os.path.join(directory, "bounds.h5"), ns=(2, 4, 8, 16),
                           spreads=(1.0,), thetas=(1.0,))
    synthetic.write_weight_bound(os.path.join(directory, "weight-bound.h5"), trials=5)
    synthetic.write_eval_max(os.path.join(directory, "eval-max.h5"), ns=(16, 64), samples=16,
                             map_samples=4)
    synthetic.write_result(os.path.join(directory, "train-max.h5"), "train-max",
                           [{"seed": 1}], {"final_accuracy": [0.99]},
                           arrays={0: {"param.w": np.ones(3)}}, attrs=PAPER)
    synthetic.write_entropy_temperature(os.path.join(directory, "entropy-temperature.h5"),
                                        ns=(16,), beta_steps=5)
    for name in ("bounds.h5", "weight-bound.h5", "eval-max.h5"):
        with synthetic.edited(os.path.join(directory, name)) as f:
            f.attrs["scale"] = "paper"
    with synthetic.edited(os.path.join(directory, "entropy-temperature.h5")) as f:
        f.attrs["scale"] = "quick"
    with open(os.path.join(directory, "stage-times.tsv"), "w") as fh:
        fh.write("eval-max.h5\t100\t2\tpaper\t2026-01-01T00:00:00Z\n"
                 "eval-max.h5\t20\t2\tpaper\t2026-01-02T00:00:00Z\n"
                 "eval-max.h5\t999\t2\tquick\t2026-01-02T00:00:00Z\n")


@pytest.fixture
def shipped(tmp_path):
    """(results dir of the run, published dir) after publishing it."""
    results = str(tmp_path / "run")
    paper_results(results)
    out = str(tmp_path / "published")
    assert publish.main(["--scale", "paper", results, "--out", os.path.join(out, "paper")]) == 0
    return results, out


def test_publish_ships_the_scale_with_a_manifest_and_never_weights(shipped):
    _, out = shipped
    folder = os.path.join(out, "paper")
    manifest = published.load_manifest(folder)
    assert sorted(manifest["files"]) == ["bounds.h5", "eval-max.h5", "weight-bound.h5"]
    assert sorted(os.listdir(folder)) == ["MANIFEST.json", "bounds.h5", "eval-max.h5",
                                          "weight-bound.h5"]
    item = manifest["files"]["eval-max.h5"]
    assert item["sha256"] == published.sha256_of(os.path.join(folder, "eval-max.h5"))
    assert item["wall_seconds"] == 120 and item["cores"] == 2  # resumed runs summed, quick not
    assert item["git_sha"] == "synthetic" and item["scale"] == "paper"
    assert "sharp-eval-max" in item["command"]
    assert manifest["not_shipped"]["train-max.h5"]["command"] == "sharp-train-max (synthetic)"
    with h5py.File(os.path.join(shipped[0], "train-max.h5"), "r") as f:
        point = f["points/id"][0]
    assert manifest["not_shipped"]["train-max.h5"]["points"] == {publish.text(point): {"seed": 1}}
    assert published.label(item) == ("published: made at commit synthetic on 2025-01-01, "
                                     "2 cores, 2 minutes")
    # Shipped repacked: the run's file is named by its own hash, the copy holds the same data.
    results, _ = shipped
    run_file = os.path.join(results, "eval-max.h5")
    assert item["source_sha256"] == published.sha256_of(run_file)
    with h5py.File(run_file, "r") as a, h5py.File(os.path.join(folder, "eval-max.h5"), "r") as b:
        assert publish.common.data_checksum(b) == publish.text(a.attrs["checksum"])
        assert set(b.attrs) == set(a.attrs) and b.attrs["checksum"] == a.attrs["checksum"]


CORRUPTING_REPACK = """import shutil, sys, h5py
shutil.copy(sys.argv[-2], sys.argv[-1])
with h5py.File(sys.argv[-1], "a") as f:
    column = next(d for d in f["points"].values() if isinstance(d, h5py.Dataset) and d.dtype.kind == "f")
    column[0] += 0.5
"""


def test_publish_refuses_a_repacked_copy_that_changed_the_data(tmp_path, capsys, monkeypatch):
    results = str(tmp_path / "run")
    paper_results(results)
    out = str(tmp_path / "published" / "paper")
    script = tmp_path / "repack.py"
    script.write_text(CORRUPTING_REPACK)
    monkeypatch.setattr(publish, "REPACK", [sys.executable, str(script)])
    assert publish.main(["--scale", "paper", results, "--out", out]) == 2
    assert "does not hold the same data" in capsys.readouterr().err
    monkeypatch.setattr(publish, "REPACK", ["false"])
    assert publish.main(["--scale", "paper", results, "--out", out]) == 2
    assert "h5repack failed" in capsys.readouterr().err
    assert not os.path.exists(out)


@pytest.mark.parametrize("attrs, needle", [({"git_dirty": np.int64(1)}, "uncommitted changes"),
                                           ({"complete": np.int64(0)}, "incomplete")])
def test_publish_refuses_a_dirty_or_incomplete_file_and_writes_nothing(tmp_path, capsys, attrs,
                                                                      needle):
    results = str(tmp_path / "run")
    paper_results(results)
    with synthetic.edited(os.path.join(results, "bounds.h5")) as f:
        for key, value in attrs.items():
            f.attrs[key] = value
    out = str(tmp_path / "published" / "paper")
    assert publish.main(["--scale", "paper", results, "--out", out]) == 2
    assert needle in capsys.readouterr().err
    assert not os.path.exists(out)


def test_publish_refuses_more_than_the_size_limit_and_an_empty_scale(tmp_path, capsys):
    results = str(tmp_path / "run")
    paper_results(results)
    out = str(tmp_path / "published" / "paper")
    assert publish.main(["--scale", "paper", results, "--out", out, "--limit-mb", "0.001"]) == 2
    assert "limit" in capsys.readouterr().err
    assert publish.main(["--scale", "cluster", results, "--out", out]) == 2
    assert "no complete result file of scale 'cluster'" in capsys.readouterr().err
    assert not os.path.exists(out)


def test_a_modified_shipped_file_is_refused_with_the_reason(shipped, tmp_path):
    _, out = shipped
    path = os.path.join(out, "paper", "bounds.h5")
    with synthetic.edited(path) as f:
        f["points/alpha_max"][0] = 0.5  # one value changed after publishing
    with pytest.raises(published.ManifestError, match="does not match its manifest"):
        published.entry(os.path.join(out, "paper"), "bounds.h5")
    source = report_sources.inspect(str(tmp_path / "empty"), "bounds.h5", "unknown", out)
    assert source.state == "refused" and "does not match its manifest" in source.reason
    # and a file the manifest does not list is not a published file
    shutil.copy(os.path.join(out, "paper", "eval-max.h5"),
                os.path.join(out, "paper", "transformer-dispersion.h5"))
    source = report_sources.inspect(str(tmp_path / "empty"), "transformer-dispersion.h5",
                                    "unknown", out)
    assert source.state == "refused" and "not listed" in source.reason


def test_results_first_then_the_largest_published_scale(shipped, tmp_path):
    results, out = shipped
    empty = str(tmp_path / "empty")
    os.makedirs(empty)
    source = report_sources.inspect(empty, "eval-max.h5", "unknown", out)
    assert source.ok and source.published.startswith("published: made at commit synthetic")
    assert source.path == os.path.join(out, "paper", "eval-max.h5")
    own = report_sources.inspect(results, "eval-max.h5", "unknown", out)
    assert own.ok and own.published == "" and own.path == os.path.join(results, "eval-max.h5")
    assert report_sources.inspect(empty, "fit-adaptive.h5", "unknown", out).state == "missing"


def test_the_page_and_figures_fall_back_to_shipped_files_and_label_them(shipped, tmp_path):
    _, out = shipped
    empty = str(tmp_path / "empty")
    os.makedirs(empty)
    assert make_figures.main([empty, "--published", out]) == 0
    assert os.path.exists(os.path.join(empty, "figures", "dispersion.png"))
    path, inputs, _ = report.write_report(empty, published_dir=out)
    with open(path, encoding="utf-8") as fh:
        page = fh.read()
    for name in ("bounds.h5", "weight-bound.h5", "eval-max.h5"):
        assert inputs.sources[name].ok and inputs.sources[name].published
        assert f"results/ has no <code>{name}</code>" in page
    assert page.count("published: made at commit synthetic") >= 3
    assert "fit-adaptive.h5 is missing" in page or "fit-adaptive.h5</code> is missing" in page


def git(repo, *args):
    subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                   env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
                            GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t"))
    return subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()


def test_moved_files_and_docs_do_not_make_a_shipped_file_stale(tmp_path):
    repo = str(tmp_path / "repo")
    os.makedirs(os.path.join(repo, "lib"))
    os.makedirs(os.path.join(repo, "docs"))
    with open(os.path.join(repo, "lib", "a.cpp"), "w") as fh:
        fh.write("int a() { return 1; }\n" * 20)
    with open(os.path.join(repo, "docs", "x.md"), "w") as fh:
        fh.write("x\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    first = git(repo, "commit", "-q", "-m", "one")
    os.makedirs(os.path.join(repo, "lib", "core"))
    git(repo, "mv", "lib/a.cpp", "lib/core/a.cpp")
    with open(os.path.join(repo, "docs", "x.md"), "a") as fh:
        fh.write("more\n")
    git(repo, "add", ".")
    moved = git(repo, "commit", "-q", "-m", "move")
    assert report_sources.code_changes(first, moved, repo) == 0
    with open(os.path.join(repo, "lib", "core", "a.cpp"), "a") as fh:
        fh.write("int b() { return 2; }\n")
    git(repo, "add", ".")
    changed = git(repo, "commit", "-q", "-m", "change")
    assert report_sources.code_changes(first, changed, repo) == 1
    assert report_sources.code_changes("0" * 40, changed, repo) is None


def test_the_readme_table_comes_from_the_shipped_file(shipped, tmp_path):
    """scripts/results_readme.py's Table 1: from the shipped eval-max.h5 beside the paper's
    numbers; a placeholder when nothing is shipped; a refusal when the manifest does not match."""
    import results_readme
    _, out = shipped
    lines = results_readme.table1(out)
    text = "\n".join(lines)
    assert "published: made at commit synthetic" in text
    row16 = next(line for line in lines if line.startswith("| 16 |"))
    assert "98.6" in row16 and "0.4" in row16  # the paper's softmax and p at 16
    row16384 = next(line for line in lines if line.startswith("| 16384 |"))
    assert row16384.count("—") >= 5  # not evaluated in this small run
    assert "No paper-scale results are shipped yet" in results_readme.table1(str(tmp_path / "none"))[0]
    with open(os.path.join(out, "paper", "MANIFEST.json")) as fh:
        manifest = json.load(fh)
    manifest["files"]["eval-max.h5"]["sha256"] = "0" * 64
    with open(os.path.join(out, "paper", "MANIFEST.json"), "w") as fh:
        json.dump(manifest, fh)
    assert "refused" in results_readme.table1(out)[0]


def test_the_scorecard_judges_at_the_largest_scale_present(shipped, tmp_path):
    """results/ holds a quick eval-max.h5, the shipped folder a paper-scale one: the section shows
    the quick file (the user's own run), the scorecard judges from the paper-scale one and says so;
    with no shipped copy both use the quick file."""
    _, out = shipped
    quick = str(tmp_path / "quick")
    os.makedirs(quick)
    synthetic.write_eval_max(os.path.join(quick, "eval-max.h5"), ns=(16,), samples=8,
                             map_samples=2)
    with synthetic.edited(os.path.join(quick, "eval-max.h5")) as f:
        f.attrs["scale"] = "quick"
    _, inputs, rows = report.write_report(quick, published_dir=out)
    assert inputs.sources["eval-max.h5"].scale == "quick"
    judged = report.judged_inputs(inputs, out)
    assert judged.sources["eval-max.h5"].scale == "paper"
    assert judged.sources["eval-max.h5"].published
    accuracy = [r for r in rows if "eval-max.h5" in r.provenance.file]
    assert accuracy and all(r.provenance.scale == "paper" for r in accuracy)
    assert all(r.provenance.origin.startswith("published: made at commit") for r in accuracy)
    # nothing larger shipped: the page's own file is the judged one
    own = report.Inputs(quick, str(tmp_path / "nothing"))
    assert report.judged_inputs(own, str(tmp_path / "nothing")) is own
    assert report_sources.SCALE_RANK["cluster"] > report_sources.SCALE_RANK["paper"] > \
        report_sources.SCALE_RANK["custom"] > report_sources.SCALE_RANK["quick"]


def pilot_results(directory: str, gate_passes: bool) -> None:
    """The text study's pilot: train-text-pilot.h5 (paper scale, weights) and eval-text-pilot.h5
    (run from the command line: scale custom) at the training lengths only."""
    os.makedirs(directory, exist_ok=True)
    right = (lambda x, item, n, seed, index: np.ones(index.size, bool) if gate_passes
             else np.arange(index.size) % 2 == 0)
    synthetic.write_text_study(directory, lengths=(4, 8, 16), seeds=(1,), samples=10, right=right)
    with synthetic.edited(os.path.join(directory, "train-text.h5")) as f:
        f.attrs["scale"] = "paper"
        f.create_dataset(f"arrays/{publish.text(f['points/id'][0])}/param.w", data=np.ones(3))
    with synthetic.edited(os.path.join(directory, "eval-text.h5")) as f:
        f.attrs["scale"] = "custom"
    # the pilot's own names; the checkpoint references keep naming train-text.h5 as written
    os.rename(os.path.join(directory, "eval-text.h5"), os.path.join(directory, "eval-text-pilot.h5"))


@pytest.mark.parametrize("gate_passes", [False, True])
def test_a_shipped_pilot_names_its_models_and_states_the_outcome(tmp_path, capsys, gate_passes):
    """--include ships the pilot's evaluation (scale custom, recorded as such); its training file
    holds weights and is not shipped, but the manifest keeps its points' parameters, so the page
    still names each model (normaliser, seed) and says what the gate decides."""
    results = str(tmp_path / "run")
    pilot_results(results, gate_passes)
    out = str(tmp_path / "published")
    assert publish.main(["--scale", "paper", results, "--out", os.path.join(out, "paper"),
                         "--include", "missing.h5"]) == 2
    assert "--include missing.h5: not in" in capsys.readouterr().err
    assert publish.main(["--scale", "paper", "--include", "eval-text-pilot.h5", results,
                         "--out", os.path.join(out, "paper")]) == 0   # RESULTS_DIR after it: not a name
    manifest = published.load_manifest(os.path.join(out, "paper"))
    assert sorted(manifest["files"]) == ["eval-text-pilot.h5"]
    assert manifest["files"]["eval-text-pilot.h5"]["scale"] == "custom"
    assert manifest["not_shipped"]["train-text.h5"]["points"]
    empty = str(tmp_path / "empty")
    os.makedirs(empty)
    path, inputs, _ = report.write_report(empty, None, now="test", published_dir=out)
    with open(path, encoding="utf-8") as fh:
        page = fh.read()
    assert "minimum, softmax, seed 1" in page and "minimum, adaptive, seed 1" in page
    assert ("Not learned within budget" in page) != gate_passes
    assert ("The pilot passes" in page) == gate_passes
    assert "SCALE=custom" not in page and "its command, <code>sharp-eval-text (synthetic)</code>" in page
