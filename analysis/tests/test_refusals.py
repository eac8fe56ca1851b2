"""The report builder never crashes (issue 26, item 11): a result file whose columns have the wrong
type, or a transformer-dispersion file without /arrays, is refused with its reason by
make_figures.py (exit 1, one line per figure naming file and reason) and by make_report.py (the page is
written, the section shows the reason); a bug inside one figure or section stops only that one and
says "this ... failed: <exception> — please report it".
"""
import glob
import os
import re
import shutil
import subprocess
import sys

import h5py
import numpy as np
import pytest

import common
import make_figures
import product
import products
from page import report, tables
import synthetic
from page.sections import SECTIONS

ANALYSIS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(ANALYSIS_DIR)


def write_every_file(d):
    """One small synthetic file of every experiment the page reads (report.file_names())."""
    synthetic.write_bounds(d / "bounds.h5", ns=(2, 8, 32, 128))
    synthetic.write_weight_bound(d / "weight-bound.h5", ns=(16,), d_models=(16,), trials=5)
    synthetic.write_entropy_temperature(d / "entropy-temperature.h5", ns=(16, 256), beta_steps=9)
    synthetic.write_train_max(d / "train-max.h5", seeds=(1, 2))
    synthetic.write_eval_max(d / "eval-max.h5", ns=(16, 256), train_seeds=(1, 2), samples=8)
    synthetic.write_eval_max(d / "eval-remedies.h5", ns=(16, 256), train_seeds=(1, 2), samples=8,
                             normalisers=("trained",))
    synthetic.write_fit_adaptive(d / "fit-adaptive.h5", train_seeds=(1,), samples=8)
    synthetic.write_transformer_dispersion(d / "transformer-dispersion.h5")
    synthetic.write_transformer_dispersion(d / "transformer-dispersion-boundary.h5")
    (d / "other").mkdir()
    synthetic.write_transformer_dispersion_trained(d / "transformer-dispersion-trained.h5",
                                                   d / "other" / "train-text.h5")
    synthetic.write_text_study(d, lengths=(4, 8, 16), seeds=(1, 2), samples=6)
    shutil.copy(d / "train-text.h5", d / "train-text-pilot.h5")   # the text study's pilot
    shutil.copy(d / "eval-text.h5", d / "eval-text-pilot.h5")
    written = sorted(os.path.basename(p) for p in glob.glob(str(d / "*.h5")))
    assert written == sorted(report.file_names()), "a file the page reads has no case here"


def retype_params(path, to_text: bool) -> list:
    """Rewrite every numeric parameter column as text (its values written out) when `to_text`,
    else every text column as integers 0..P-1; returns the names of the columns changed."""
    changed = []
    with synthetic.edited(path) as f:
        params = f["points/params"]
        for name in list(params):
            values = params[name][()]
            is_text = h5py.check_string_dtype(params[name].dtype) is not None
            if is_text == to_text:
                continue
            del params[name]
            if to_text:
                params.create_dataset(name, data=[str(v) for v in values], dtype=synthetic.STR)
            else:
                params.create_dataset(name, data=np.arange(len(values), dtype=np.int64))
            changed.append(name)
    return changed


def run(script, *args, cwd):
    return subprocess.run([sys.executable, os.path.join(ANALYSIS_DIR, script), *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "MPLBACKEND": "Agg"})


def section_text(page: str, key: str) -> str:
    match = re.search(rf'<section id="{key}">(.*?)</section>', page, re.S)
    assert match, f"no section {key}"
    return match.group(1)


@pytest.mark.parametrize("to_text", [True, False], ids=["text-for-numbers", "numbers-for-text"])
def test_wrong_column_types_are_refused_by_figures_and_page(tmp_path, to_text):
    d = tmp_path / "results"
    d.mkdir()
    write_every_file(d)
    changed = {name: retype_params(d / name, to_text) for name in report.file_names()}
    refused = {name for name, columns in changed.items() if columns}
    # weight-bound has no text parameter; every other file has both kinds
    assert refused == set(report.file_names()) - ({"weight-bound.h5"} if not to_text else set())
    expected_words = "holds text, not" if to_text else "holds integers, not text"

    figures = run("make_figures.py", d, cwd=tmp_path)
    assert figures.returncode == 1, figures.stderr
    assert "Traceback" not in figures.stderr
    errors = [line for line in figures.stderr.splitlines() if line.startswith("error: ")]
    expected = [(p.name, p.input_file) for p in products.PRODUCTS if p.input_file in refused]
    assert len(errors) == len(expected), figures.stderr
    for (name, inp), line in zip(expected, errors):
        assert line.startswith(f"error: {name}: {d / inp}: refused: "), line
        assert expected_words in line and "regenerate it" in line
        for column in changed[inp]:
            assert f"/points/params/{column} holds" in line
        assert f"wrote {name}:" not in figures.stdout

    page_run = run("make_report.py", d, cwd=tmp_path)
    assert page_run.returncode == 0, page_run.stderr
    assert "Traceback" not in page_run.stderr
    # page/report.py reads its sections' files itself; a file only a figure reads (the text study's
    # pilot) is refused by make_figures above, which draws no figure from it.
    read_by_page = {name for section in SECTIONS for name in section.files}
    for name in refused & read_by_page:
        assert f"error: {name}: {d / name}: refused: " in page_run.stderr
    page = (d / "report" / "index.html").read_text(encoding="utf-8")
    assert "Traceback" not in page and "this section failed" not in page
    for section in SECTIONS:
        text = section_text(page, section.key)
        for name in section.files:
            if name in refused:
                assert f"refused: {d / name}" in text, (section.key, name)
                assert expected_words in text and "not run" not in text


def test_transformer_file_without_arrays_is_refused(tmp_path):
    d = tmp_path / "results"
    d.mkdir()
    path = d / "transformer-dispersion.h5"
    synthetic.write_transformer_dispersion(path)
    with synthetic.edited(path) as f:
        del f["arrays"]
    figures = run("make_figures.py", d, cwd=tmp_path)
    assert figures.returncode == 1 and "Traceback" not in figures.stderr
    errors = [line for line in figures.stderr.splitlines() if line.startswith("error: ")]
    users = [p.name for p in products.PRODUCTS if p.input_file == path.name]
    assert [line.split(":")[1].strip() for line in errors] == users
    assert all(f"{path}: has no /arrays group" in line for line in errors)

    page_run = run("make_report.py", d, cwd=tmp_path)
    assert page_run.returncode == 0 and "Traceback" not in page_run.stderr, page_run.stderr
    text = section_text((d / "report" / "index.html").read_text(encoding="utf-8"), "transformers")
    assert f"refused: {path}" in text and "has no /arrays group" in text


def test_a_missing_array_is_a_refusal_naming_file_point_and_array(tmp_path):
    path = tmp_path / "transformer-dispersion.h5"
    ids = synthetic.write_transformer_dispersion(path)
    arrays = common.load_result(path).arrays(ids[0])
    assert "delta_max" in arrays and "absent" not in arrays
    with pytest.raises(common.ResultFileError, match=rf"/arrays/{ids[0]} has no 'absent'"):
        arrays["absent"]


def test_a_metric_of_text_is_refused(tmp_path):
    path = tmp_path / "bounds.h5"
    synthetic.write_bounds(path, ns=(2, 4))
    common.load_result(path)  # the unchanged file reads
    with synthetic.edited(path) as f:
        count = f["points/alpha_max"].shape[0]
        del f["points/alpha_max"]
        f.create_dataset("points/alpha_max", data=["x"] * count, dtype=synthetic.STR)
    with pytest.raises(common.ResultFileError, match="/points/alpha_max holds text, not numbers"):
        common.load_result(path)


def test_param_kinds_match_the_experiments():
    """common.PARAM_KINDS says what the C++ declares (runners/param_spec.hpp builders), so that a
    renamed or retyped parameter cannot make the analysis refuse good files or pass bad ones."""
    builders = {"integer_param": common.INTEGER, "flag_param": common.INTEGER,
                "real_param": common.REAL, "real_param_above": common.REAL,
                "real_param_at_least": common.REAL, "text_param": common.TEXT,
                "derived_text_param": common.TEXT, "point_reference_param": common.TEXT}
    pattern = re.compile(r"\b(" + "|".join(builders) + r')\(\s*"([a-z_0-9]+)"')
    declared = {}
    for source in glob.glob(os.path.join(REPO, "experiments", "*.[ch]pp")) + glob.glob(
            os.path.join(REPO, "runners", "*.cpp")):
        with open(source, encoding="utf-8") as fh:
            for builder, name in pattern.findall(fh.read()):
                declared.setdefault(name, set()).add(builders[builder])
    assert {"n", "seed", "checkpoint", "layer_norm", "train_normaliser"} <= set(declared)
    assert all(len(kinds) == 1 for kinds in declared.values()), declared
    assert {name: kinds.pop() for name, kinds in declared.items()} == common.PARAM_KINDS


# ---- a bug in one product stops only that product


def test_a_failing_figure_does_not_stop_the_others(tmp_path, monkeypatch, capsys):
    synthetic.write_bounds(tmp_path / "bounds.h5", ns=(2, 8, 32))

    def broken(path, outdir):
        raise RuntimeError("boom")

    monkeypatch.setattr(products, "PRODUCTS", [product.Product("broken", "bounds.h5", broken)]
                        + [p for p in products.PRODUCTS if p.name == "dispersion"])
    assert make_figures.main([str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert (f"error: broken: {tmp_path / 'bounds.h5'}: this figure failed: RuntimeError: boom — "
            f"please report it") in err
    assert "Traceback" in err  # for the report it asks for
    assert "wrote dispersion:" in out and (tmp_path / "figures" / "dispersion.png").exists()


def test_a_failing_section_reader_or_scorecard_says_so_and_the_page_is_written(
        tmp_path, monkeypatch, capsys):
    synthetic.write_bounds(tmp_path / "bounds.h5", ns=(2, 8, 32))
    synthetic.write_weight_bound(tmp_path / "weight-bound.h5", ns=(16,), d_models=(16,), trials=5)
    synthetic.write_transformer_dispersion(tmp_path / "transformer-dispersion.h5")

    def boom(*args):
        raise RuntimeError("boom")

    monkeypatch.setitem(tables.TABLE_BUILDERS, "dispersion_thresholds", boom)
    monkeypatch.setattr(report.transformer_theorem, "check_models", boom)
    assert report.main([str(tmp_path)]) == 1
    err = capsys.readouterr().err
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    failed = "this section failed: RuntimeError: boom — please report it"
    assert failed in section_text(page, "dispersion")
    assert f"error: section dispersion: {failed}" in err
    transformers = section_text(page, "transformers")
    assert "transformer-dispersion.h5: failed" in transformers and failed in transformers
    assert f"error: {tmp_path / 'transformer-dispersion.h5'}: {failed}" in err
    weight = section_text(page, "weight-bound")  # the others are untouched
    assert "Sharpness needs large weights" in weight and 'class="box error"' not in weight
    assert "Traceback" not in page and "<table" in section_text(page, "scorecard")

    monkeypatch.setattr(report, "build_scorecard", boom)
    assert report.main([str(tmp_path)]) == 1
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert failed in section_text(page, "scorecard")
    assert 'class="box error"' not in section_text(page, "weight-bound")


def test_needs_refuse_a_file_lacking_an_array_naming_it(tmp_path):
    # Needs.load refuses a point without an array it needs, naming point and array; with all of
    # them it loads (the boundary: an extra array is not a refusal).
    path = str(tmp_path / "entropy-temperature.h5")
    grid = [{"n": 16, "logits": "uniform", "seed": 1}, {"n": 32, "logits": "uniform", "seed": 1}]
    full = {"beta": np.ones(3), "entropy": np.ones(3), "extra": np.ones(3)}
    ids = synthetic.write_result(path, "entropy-temperature", grid, {"monotone": [1, 1]},
                                 arrays={0: full, 1: {"beta": np.ones(3)}})
    needs = common.Needs("entropy-temperature", params=("n",), arrays=("beta", "entropy"))
    with pytest.raises(common.ResultFileError, match=f"lacks /arrays/{ids[1]}/entropy"):
        needs.load(path)
    common.Needs("entropy-temperature", arrays=("beta",)).load(path)
