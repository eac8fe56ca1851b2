"""Tests of the analysis package on synthetic "sharp/1" files (tests/synthetic.py).

    /usr/bin/python3 -m pytest -q -p no:cacheprovider analysis/tests
"""
import os
import re
import shutil
import subprocess
import sys

import h5py
import numpy as np
import pytest

import common
import fig_dispersion
import fig_entropy_temperature
import fig_transformer_logit_spread
import fig_transformer_trained
import fig_weight_bound
import make_figures
import products
import synthetic

ANALYSIS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL_NS = tuple(2 ** k for k in range(1, 13))
FIGURE_MODULES = [fig_dispersion, fig_weight_bound, fig_entropy_temperature]


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    """One directory with every synthetic result file make_figures.py reads, written once per
    module (the max-retrieval files small: their own tests are in test_max_retrieval.py)."""
    d = tmp_path_factory.mktemp("results")
    synthetic.write_bounds(d / "bounds.h5", ns=SMALL_NS)
    synthetic.write_weight_bound(d / "weight-bound.h5", trials=40)
    synthetic.write_entropy_temperature(d / "entropy-temperature.h5", ns=(16, 256),
                                        beta_steps=25)
    synthetic.write_eval_max(d / "eval-max.h5", ns=(16, 256), train_seeds=(1, 2), samples=16)
    synthetic.write_eval_max(d / "eval-remedies.h5", ns=(16, 256), train_seeds=(1, 2), samples=16,
                             normalisers=("trained",))
    synthetic.write_fit_adaptive(d / "fit-adaptive.h5", train_seeds=(1,), samples=8)
    synthetic.write_transformer_dispersion(d / "transformer-dispersion.h5")
    synthetic.write_transformer_dispersion_trained(d / "transformer-dispersion-trained.h5", d / "train-text.h5")
    synthetic.write_eval_text(d / "eval-text.h5")
    shutil.copy(d / "train-text.h5", d / "train-text-pilot.h5")   # the text study's pilot: its own file
    return d


# ---- reading


def test_load_result_reads_every_part_of_the_schema(results_dir):
    r = common.load_result(results_dir / "bounds.h5", "bounds")
    assert r.experiment == "bounds"
    assert r.attrs["schema"] == "sharp/1" and r.attrs["complete"] == 1
    assert isinstance(r.attrs["git_sha"], str) and isinstance(r.attrs["threads"], int)
    P = len(SMALL_NS) * 2 * 2 * 4
    assert len(r) == P and len(r.ids) == P
    assert all(isinstance(i, str) and re.fullmatch(r"[0-9a-f]{16}", i) for i in r.ids)
    assert "logits = " in r.config and isinstance(r.config, str)
    assert r.params["n"].dtype == np.int64 and r.params["spread"].dtype == np.float64
    assert r.params["logits"].dtype.kind == "U"  # decoded to str, not bytes
    assert set(r.params["logits"]) == {"uniform", "one-hot", "two-point", "gaussian"}
    assert r.metrics["violations"].dtype == np.int64
    assert r.metrics["alpha_max"].shape == (P,)
    assert set(r.timing) == {"wall_seconds", "peak_rss_bytes"}
    # metrics follow the closed forms they were written from
    n, ratio = r.params["n"], r.params["spread"] / r.params["theta"]
    np.testing.assert_allclose(r.metrics["bound_upper"], np.exp(ratio) / n)
    assert np.all(r.metrics["alpha_max"] <= r.metrics["worst_case_alpha_max"] * (1 + 1e-12))


def test_rows_and_group_by_select_by_parameter_values(results_dir):
    r = common.load_result(results_dir / "bounds.h5")
    rows = r.rows(logits="one-hot", spread=5.69, theta=1.0)
    assert len(rows) == len(SMALL_NS)
    assert sorted(r.params["n"][rows]) == list(SMALL_NS)
    assert len(r.rows(logits=["one-hot", "uniform"], n=[2, 4])) == 2 * 2 * 2 * 2
    assert len(r.rows(logits="no-such-law")) == 0
    groups = r.group_by("logits", "theta")
    assert [k for k, _ in groups][:2] == [("gaussian", 0.5), ("gaussian", 1.0)]  # sorted keys
    assert sum(len(g) for _, g in groups) == len(r)
    assert r.distinct("theta") == [0.5, 1.0]
    with pytest.raises(KeyError, match="no parameter or metric named 'nope'"):
        r.column("nope")
    with pytest.raises(common.ResultFileError, match="lacks /points/params/d_model"):
        r.require(params=("n", "d_model"))


def test_arrays_reads_per_point_arrays(results_dir):
    r = common.load_result(results_dir / "weight-bound.h5", "weight-bound")
    arrays = r.arrays(r.ids[0])
    assert set(arrays) == {"ratio", "delta", "bound"}
    assert arrays["ratio"].shape == (40,)
    np.testing.assert_allclose(arrays["ratio"], arrays["delta"] / arrays["bound"])
    assert np.isclose(arrays["ratio"].max(), r.metrics["ratio_max"][0])
    with pytest.raises(common.ResultFileError, match="no group /arrays/ffffffffffffffff"):
        r.arrays("ffffffffffffffff")


# ---- refusing files


def _bounds_with(path, **attrs):
    synthetic.write_bounds(path, ns=(2, 4), spreads=(1.0,), thetas=(1.0,), laws=("one-hot",),
                           attrs=attrs)
    return path


@pytest.mark.parametrize("attrs, message", [
    ({"complete": None}, r"incomplete \(root attribute 'complete' is missing"),
    ({"complete": np.int64(0)}, r"incomplete \(root attribute 'complete' is 0"),
    ({"schema": "sharp/0"}, r"schema is 'sharp/0', this analysis reads 'sharp/1'"),
    ({"schema": None}, r"root attribute 'schema' is missing"),
])
def test_load_result_refuses_incomplete_or_unknown_schema(tmp_path, attrs, message):
    path = _bounds_with(tmp_path / "bounds.h5", **attrs)
    with pytest.raises(common.ResultFileError, match=message) as err:
        common.load_result(path, "bounds")
    assert str(path) in str(err.value) and "re-run" in str(err.value)


def test_load_result_refuses_a_wrong_experiment(tmp_path):
    path = _bounds_with(tmp_path / "bounds.h5")
    with pytest.raises(common.ResultFileError,
                       match="holds experiment 'bounds' but this figure needs 'weight-bound'"):
        common.load_result(path, "weight-bound")
    assert common.load_result(path).experiment == "bounds"  # no expectation, no refusal


def test_load_result_refuses_missing_and_non_hdf5_files(tmp_path):
    with pytest.raises(common.ResultFileError, match="file not found") as err:
        common.load_result(tmp_path / "nothing.h5")
    assert "nothing.h5" in str(err.value)
    text = tmp_path / "bounds.h5"
    text.write_text("not a result\n")
    with pytest.raises(common.ResultFileError, match="not an HDF5 file"):
        common.load_result(text)
    with pytest.raises(common.ResultFileError, match="file not found"):
        common.load_result(tmp_path)  # a directory is not a result file


def test_load_result_refuses_a_truncated_file(tmp_path):
    path = _bounds_with(tmp_path / "bounds.h5")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    with pytest.raises(common.ResultFileError, match="bounds.h5"):
        common.load_result(path)


def test_load_result_refuses_columns_of_the_wrong_length(tmp_path):
    path = _bounds_with(tmp_path / "bounds.h5")
    with synthetic.edited(path) as f:
        del f["points/alpha_max"]
        f["points/alpha_max"] = np.zeros(5)
    with pytest.raises(common.ResultFileError, match="malformed.*alpha_max has 5"):
        common.load_result(path)


def test_figures_refuse_non_finite_values(tmp_path):
    path = _bounds_with(tmp_path / "bounds.h5")
    with synthetic.edited(path) as f:
        f["points/alpha_max"][1] = np.nan
    with pytest.raises(common.ResultFileError, match="/points/alpha_max is not finite"):
        fig_dispersion.make(str(path), str(tmp_path / "out"))
    wb = tmp_path / "weight-bound.h5"
    ids = synthetic.write_weight_bound(wb, ns=(8,), d_models=(8,), trials=5)
    with synthetic.edited(wb) as f:
        f[f"arrays/{ids[0]}/ratio"][2] = np.inf
    with pytest.raises(common.ResultFileError, match=f"ratio is not finite at point {ids[0]}"):
        fig_weight_bound.make(str(wb), str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


# ---- figures


def _check_outputs(outdir, name):
    png, pdf = outdir / f"{name}.png", outdir / f"{name}.pdf"
    png_bytes, pdf_bytes = png.read_bytes(), pdf.read_bytes()
    assert png_bytes.startswith(b"\x89PNG") and len(png_bytes) > 20_000
    assert pdf_bytes.startswith(b"%PDF") and pdf_bytes.rstrip().endswith(b"%%EOF")
    assert len(pdf_bytes) > 10_000
    assert b"CreationDate" not in pdf_bytes and b"sharp analysis" in pdf_bytes
    import matplotlib.image
    pixels = matplotlib.image.imread(str(png))
    assert pixels.shape[1] > 900 and pixels[..., :3].std() > 0.05  # drawn, not blank
    return pdf_bytes


@pytest.mark.parametrize("module", FIGURE_MODULES, ids=lambda m: m.__name__)
def test_every_figure_renders_and_its_pdf_is_byte_reproducible(results_dir, tmp_path, module):
    name = module.__name__.removeprefix("fig_")
    path = results_dir / module.INPUT_FILE
    first = module.make(str(path), str(tmp_path / "a"))
    second = module.make(str(path), str(tmp_path / "b"))
    assert [os.path.basename(p) for p in first] == [os.path.basename(p) for p in second]
    assert _check_outputs(tmp_path / "a", name) == _check_outputs(tmp_path / "b", name)
    assert not any(f.name.startswith(".tmp") for f in (tmp_path / "a").iterdir())


@pytest.mark.parametrize("module", FIGURE_MODULES, ids=lambda m: m.__name__)
def test_every_figure_refuses_another_experiments_file(results_dir, tmp_path, module):
    other = "bounds.h5" if module is not fig_dispersion else "weight-bound.h5"
    with pytest.raises(common.ResultFileError, match=f"needs '{module.EXPERIMENT}'"):
        module.make(str(results_dir / other), str(tmp_path))
    assert not (tmp_path / "dispersion.png").exists()


def test_dispersion_thresholds_table(results_dir, tmp_path):
    fig_dispersion.make(str(results_dir / "bounds.h5"), str(tmp_path))
    table = (tmp_path / "dispersion_thresholds.md").read_text()
    rows = [line.split(" | ") for line in table.splitlines() if line.startswith("| one-hot")]
    assert len(rows) == 4  # one per (δ, θ)
    for cells in rows:
        spread, theta = float(cells[1]), float(cells[2])
        for eps, measured, closed in ((0.5, cells[4], cells[5]), (0.1, cells[6], cells[7])):
            expected = 1 + (1 / eps - 1) * np.exp(spread / theta)
            assert float(closed) == pytest.approx(expected, abs=0.06)
            # one-hot logits are the worst case: first grid n past the closed form, or none
            past = [n for n in SMALL_NS if n > expected]
            assert measured == (str(past[0]) if past else "—")
    assert "| one-hot | 5.69 | 1 | 5.69 | 512 | 296.9 |" in table  # docs/science.md#logit-spread-in-llms: n ≈ 297
    assert f"Total bound violations over {len(SMALL_NS) * 16} points: **0**" in table


def test_dispersion_warns_loudly_about_violations(tmp_path, capsys):
    path = tmp_path / "bounds.h5"
    synthetic.write_bounds(path, ns=(2, 4, 8), spreads=(1.0,), thetas=(1.0,), violate=2)
    fig_dispersion.make(str(path), str(tmp_path / "out"))
    err = capsys.readouterr().err
    assert "WARNING" in err and "2 violation(s)" in err
    assert "**2**" in (tmp_path / "out" / "dispersion_thresholds.md").read_text()


def test_weight_bound_and_entropy_warn_about_failed_checks(tmp_path, capsys):
    wb = tmp_path / "weight-bound.h5"
    synthetic.write_weight_bound(wb, ns=(8,), d_models=(8,), trials=5)
    with synthetic.edited(wb) as f:
        f["points/violations"][0] = 3
    fig_weight_bound.make(str(wb), str(tmp_path / "out"))
    assert "3 trial(s) where the logit spread exceeds" in capsys.readouterr().err
    et = tmp_path / "entropy-temperature.h5"
    synthetic.write_entropy_temperature(et, ns=(8,), laws=("uniform",), beta_steps=9)
    with synthetic.edited(et) as f:
        f["points/monotone"][0] = 0
    fig_entropy_temperature.make(str(et), str(tmp_path / "out"))
    assert "not strictly decreasing" in capsys.readouterr().err


# ---- trained text models beside the random transformers


def test_trained_dispersion_figure_and_spread_rows(tmp_path):
    """The trained models' entropy figure draws without the random file beside it (its title says
    so), the spread table gets one row per training recipe from the trained file beside the random
    one, and a file without trained models is refused for the trained figure."""
    trained = tmp_path / "transformer-dispersion-trained.h5"
    synthetic.write_transformer_dispersion_trained(trained, tmp_path / "train-text.h5")
    written = fig_transformer_trained.make(str(trained), str(tmp_path / "out"))
    assert [os.path.basename(w) for w in written] == ["transformer_entropy_trained.png",
                                                      "transformer_entropy_trained.pdf"]
    random = tmp_path / "transformer-dispersion.h5"
    synthetic.write_transformer_dispersion(random)
    fig_transformer_logit_spread.make(str(random), str(tmp_path / "out"))
    table = (tmp_path / "out" / "transformer_logit_spread.md").read_text()
    assert "| trained minimum, softmax (rope, 1 seed) | 2^10 | 4 | [10, 11] |" in table
    assert "| trained minimum, adaptive (rope, 1 seed) |" in table
    assert table.index("trained minimum, softmax") < table.index("| none,") < table.index("Gemma 2B")
    with pytest.raises(common.ResultFileError, match="no trained model"):
        fig_transformer_trained.make(str(random), str(tmp_path / "out"))


# ---- make_figures.py and the standalone scripts


def test_make_figures_skips_missing_inputs(tmp_path, capsys):
    assert make_figures.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(products.PRODUCTS)
    assert all(line.startswith("skipped ") and "not found" in line for line in out)
    assert not (tmp_path / "figures").exists()


def test_make_figures_draws_every_present_input(results_dir, tmp_path, capsys):
    assert make_figures.main([str(results_dir), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in out] == [f"wrote {name}"
                                                   for name in (p.name for p in products.PRODUCTS)]
    for name in ("dispersion", "weight_bound", "entropy_temperature", "attention_maps",
                 "max_accuracy", "head_entropy", "beta_polynomial", "transformer_alpha",
                 "transformer_entropy", "transformer_logit_spread", "text_accuracy",
                 "transformer_entropy_trained"):
        assert (tmp_path / f"{name}.png").stat().st_size > 0
        assert (tmp_path / f"{name}.pdf").stat().st_size > 0
    for table in ("dispersion_thresholds.md", "max_accuracy.md", "max_accuracy.tex"):
        assert (tmp_path / table).exists()


def test_make_figures_exits_1_on_a_refused_file_and_draws_the_rest(results_dir, tmp_path):
    d = tmp_path / "results"
    d.mkdir()
    _bounds_with(d / "bounds.h5", complete=None)  # present but incomplete
    (d / "weight-bound.h5").write_bytes((results_dir / "weight-bound.h5").read_bytes())
    # run as the Makefile does, from another directory, to check imports and exit status
    proc = subprocess.run([sys.executable, os.path.join(ANALYSIS_DIR, "make_figures.py"), str(d)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "incomplete" in proc.stderr and str(d / "bounds.h5") in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "wrote weight_bound" in proc.stdout
    assert "skipped entropy_temperature" in proc.stdout
    assert (d / "figures" / "weight_bound.pdf").exists()
    assert not (d / "figures" / "dispersion.pdf").exists()


def test_figure_scripts_run_standalone(results_dir, tmp_path):
    script = os.path.join(ANALYSIS_DIR, "fig_dispersion.py")
    out = tmp_path / "figs"
    ok = subprocess.run([sys.executable, script, str(results_dir / "bounds.h5"), "--out", str(out)],
                        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert f"wrote {out / 'dispersion.pdf'}" in ok.stdout
    refused = subprocess.run([sys.executable, script, str(results_dir / "weight-bound.h5")],
                             cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 1
    assert "needs 'bounds'" in refused.stderr and "Traceback" not in refused.stderr
