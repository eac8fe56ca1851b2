"""Tests of the max-retrieval analysis (docs/science.md#max-retrieval, docs/science.md#figures): the statistics against
hand-computed values, reading eval-max files, the table's numbers recomputed independently from
the file, and every figure module (renders, reproducible PDF, refuses what it must).

    /usr/bin/python3 -m pytest -q -p no:cacheprovider analysis/tests/test_max_retrieval.py
"""
import math
import os

import h5py
import numpy as np
import pytest

import common
import fig_attention_maps
import fig_beta_polynomial
import fig_head_entropy
import fig_max_accuracy
import max_accuracy_table
import max_retrieval as mr
import synthetic

NS = (16, 128, 1024)
EVAL_FIGURES = [fig_attention_maps, fig_max_accuracy, fig_head_entropy]
ALL_FIGURES = EVAL_FIGURES + [fig_beta_polynomial]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """eval-max with 3 models, eval-max with 1 model and 2 evaluation seeds, fit-adaptive with and
    without the binned protocol."""
    d = tmp_path_factory.mktemp("max")
    synthetic.write_eval_max(d / "eval-max.h5", ns=NS, train_seeds=(1, 2, 3), samples=40)
    synthetic.write_eval_max(d / "one-model.h5", ns=NS, train_seeds=(4,), seeds=(1, 2),
                             samples=24)
    synthetic.write_fit_adaptive(d / "fit-adaptive.h5", samples=12)
    synthetic.write_fit_adaptive(d / "fit-binned.h5", samples=12, binned=True)
    return d


# ---- statistics against hand-computed values


def test_wilson_interval_hand_values():
    # 8 of 10: the textbook Wilson interval [0.4902, 0.9433]; 0 of 10: [0, z²/(10 + z²)]
    low, high = mr.wilson_interval(8, 10)
    assert low == pytest.approx(0.490162, abs=1e-6) and high == pytest.approx(0.943318, abs=1e-6)
    z2 = 1.959963984540054 ** 2
    assert mr.wilson_interval(0, 10) == pytest.approx((0.0, z2 / (10 + z2)), abs=1e-12)
    assert mr.wilson_interval(10, 10)[1] == pytest.approx(1.0, abs=1e-15)
    assert mr.Z95 == pytest.approx(1.959963984540054, rel=1e-12)


def test_t_interval_hand_values():
    # df = 2 has a closed-form quantile: t_p = (2p − 1)/√(2p(1 − p)); p = 0.975 → 4.302653
    t975 = 0.95 / math.sqrt(2 * 0.975 * 0.025)
    mean, low, high = mr.t_interval([0.9, 0.8, 0.7])
    assert mean == pytest.approx(0.8)
    assert (high - low) / 2 == pytest.approx(t975 * 0.1 / math.sqrt(3), rel=1e-9)  # 0.248414
    assert (high - low) / 2 == pytest.approx(0.248414, abs=1e-6)
    one = mr.t_interval([0.5])
    assert one[0] == 0.5 and math.isnan(one[1]) and math.isnan(one[2])


def test_mcnemar_exact_on_tiny_tables():
    # 1 set only A right, 6 only B right, 5 both, 3 neither: p = 2·P(X ≤ 1 | Bin(7, ½)) = 16/128
    a = [1] * 1 + [0] * 6 + [1] * 5 + [0] * 3
    b = [0] * 1 + [1] * 6 + [1] * 5 + [0] * 3
    assert mr.mcnemar_exact(a, b) == mr.McNemar(1, 6, 0.125)
    assert mr.mcnemar_exact(b, a) == mr.McNemar(6, 1, 0.125)  # two-sided: symmetric
    assert mr.mcnemar_exact([0] * 5, [1] * 5).p == pytest.approx(2 / 32)
    # 3 / 11 discordant: 2·(1 + 14 + 91 + 364)/2^14
    test = mr.mcnemar_exact([1] * 3 + [0] * 11, [0] * 3 + [1] * 11)
    assert test.p == pytest.approx(2 * 470 / 2 ** 14, rel=1e-12)
    assert mr.mcnemar_exact([1, 0, 1], [1, 0, 1]) == mr.McNemar(0, 0, 1.0)  # no discordant pair
    with pytest.raises(ValueError, match="paired"):
        mr.mcnemar_exact([1, 0], [1, 0, 1])


def test_paired_t_hand_value():
    # differences 0.1, 0.05, 0.1: mean 1/12, s = 1/(20√3)·√… → t = 5 with 2 df;
    # two-sided p for 2 df is 1 − t/√(t² + 2)
    p = mr.paired_t_p([0.9, 0.8, 0.7], [0.8, 0.75, 0.6])
    assert p == pytest.approx(1 - 5 / math.sqrt(27), rel=1e-9)  # 0.03775
    assert math.isnan(mr.paired_t_p([0.9], [0.8]))               # one model: undefined
    assert math.isnan(mr.paired_t_p([0.9, 0.8], [0.8, 0.7]))     # no variance (up to rounding)
    assert math.isnan(mr.paired_t_p([0.5, 0.25], [0.5, 0.25]))   # no difference at all


def test_format_p():
    assert [mr.format_p(p) for p in (1.0, 0.4, 0.0574, 0.00414, 4.9e-4, 3.1e-29, math.nan)] == \
        ["1", "0.4", "0.0574", "0.00414", "4.9e-04", "3.1e-29", "n/a"]


def test_paper_numbers_are_spec_section_4():
    assert mr.paper_value("softmax", 1024) == 53.8 and mr.paper_value("adaptive", 16384) == 14.0
    assert mr.paper_value("softmax", 128) is None and mr.paper_value("ssmax", 16) is None
    assert len(mr.OTHER_REPRODUCTION_N) == len(mr.OTHER_REPRODUCTION_SOFTMAX) == 8


# ---- reading eval-max files


def test_load_eval_max_groups_models(files):
    data = mr.load_eval_max(str(files / "eval-max.h5"))
    assert data.normalisers == ["softmax", "adaptive"] and data.ns == list(NS)
    assert data.train_n == 16 and data.train_seeds == [1, 2, 3]
    for n in NS:
        assert [c.train_seed for c in data.cells[n]] == [1, 2, 3]
        assert all(c.samples == 40 for c in data.cells[n])
    r = data.result
    row = int(r.rows(n=128, checkpoint=data.cells[128][1].checkpoint)[0])
    assert data.cells[128][1].accuracy("adaptive") == pytest.approx(
        r.metrics["accuracy.adaptive"][row])


def test_one_model_pools_its_evaluation_seeds(files):
    data = mr.load_eval_max(str(files / "one-model.h5"))
    assert data.eval_seeds == [1, 2] and data.train_seeds == [4]
    cell = data.cells[128][0]
    assert cell.samples == 48 and len(cell.point_ids) == 2
    r = data.result
    first, second = (r.arrays(pid)["correct.softmax"] for pid in cell.point_ids)
    np.testing.assert_array_equal(cell.correct["softmax"], np.concatenate([first, second]))
    s = data.summary("correct", "softmax", 128)
    k = int(cell.correct["softmax"].sum())
    assert s.models == 1 and (s.low, s.high) == pytest.approx(mr.wilson_interval(k, 48))
    e = data.summary("entropy", "softmax", 128)  # one model: t-interval over its samples
    assert (e.mean, e.low, e.high) == pytest.approx(mr.t_interval(cell.entropy["softmax"]))


def test_stored_wilson_intervals_match(files):
    r = common.load_result(files / "eval-max.h5", "eval-max")
    for i in range(len(r)):
        k, m = int(r.metrics["correct.adaptive"][i]), int(r.params["samples"][i])
        assert mr.wilson_interval(k, m) == pytest.approx(
            (r.metrics["ci_low.adaptive"][i], r.metrics["ci_high.adaptive"][i]), abs=1e-12)


def _copy(files, tmp_path, name="eval-max.h5"):
    target = tmp_path / name
    target.write_bytes((files / name).read_bytes())
    return target


def test_load_eval_max_refuses_inconsistent_files(files, tmp_path):
    path = _copy(files, tmp_path)
    with synthetic.edited(path) as f:
        pid = f["points/id"].asstr()[0]
        f[f"arrays/{pid}/correct.softmax"][0] = 1 - f[f"arrays/{pid}/correct.softmax"][0]
    with pytest.raises(common.ResultFileError, match="correct.softmax sums to"):
        mr.load_eval_max(str(path))

    path = _copy(files, tmp_path)
    with synthetic.edited(path) as f:
        f["points/train_n"][0] = 32
    with pytest.raises(common.ResultFileError, match="mixes models trained at n = 16, 32"):
        mr.load_eval_max(str(path))

    path = _copy(files, tmp_path)
    with synthetic.edited(path) as f:
        pid = f["points/id"].asstr()[2]
        f[f"arrays/{pid}/entropy.adaptive"][3] = np.nan
    with pytest.raises(common.ResultFileError, match=f"entropy.adaptive is not finite at point "
                                                     f"{pid}"):
        mr.load_eval_max(str(path))

    path = _copy(files, tmp_path)
    with synthetic.edited(path) as f:
        pid = f["points/id"].asstr()[1]
        del f[f"arrays/{pid}/correct.adaptive"]
    with pytest.raises(common.ResultFileError, match="lacks 'correct.adaptive'"):
        mr.load_eval_max(str(path))


def _strip_real_series(path, only_point=None):
    """The file as `sharp-eval-max --per-sample correct` writes it: no per-sample entropy, weight on
    max or beta (of one point only when only_point is given)."""
    with synthetic.edited(path) as f:
        for pid in f["arrays"]:
            if only_point is not None and pid != only_point:
                continue
            for name in list(f[f"arrays/{pid}"]):
                if name.split(".")[0] in ("entropy", "weight_on_max", "beta"):
                    del f[f"arrays/{pid}/{name}"]


def test_correct_only_files_give_the_same_model_means(files, tmp_path):
    full = mr.load_eval_max(str(files / "eval-max.h5"))
    path = _copy(files, tmp_path)
    _strip_real_series(path)
    lean = mr.load_eval_max(str(path))
    for n in NS:
        for what in ("correct", "entropy", "weight_on_max"):
            for x in ("softmax", "adaptive"):
                np.testing.assert_allclose(lean.per_model(what, x, n), full.per_model(what, x, n),
                                           rtol=1e-12)
                assert lean.summary(what, x, n) == pytest.approx(full.summary(what, x, n))
        assert all(c.entropy is None and c.weight_on_max is None for c in lean.cells[n])
    # The means come from the per-point metrics: a changed metric moves them (the check can fail).
    with synthetic.edited(path) as f:
        f["points/entropy.softmax"][0] += 1.0
    moved = mr.load_eval_max(str(path))
    assert sum(not np.allclose(moved.per_model("entropy", "softmax", n),
                               full.per_model("entropy", "softmax", n)) for n in NS) == 1


def test_correct_only_one_model_has_no_sample_interval(files, tmp_path):
    path = _copy(files, tmp_path, "one-model.h5")
    _strip_real_series(path)
    data = mr.load_eval_max(str(path))
    assert data.summary("correct", "softmax", 128).models == 1  # Wilson needs only correct.X
    with pytest.raises(common.ResultFileError, match="--per-sample correct.*--per-sample all"):
        data.summary("entropy", "softmax", 128)


def test_mixed_per_sample_settings_are_refused(files, tmp_path):
    path = _copy(files, tmp_path, "one-model.h5")
    with h5py.File(path, "r") as f:
        first = f["points/id"].asstr()[0]
    _strip_real_series(path, only_point=first)
    with pytest.raises(common.ResultFileError, match="different --per-sample"):
        mr.load_eval_max(str(path))


# ---- the table


def _table_rows(markdown: str) -> dict:
    rows = {}
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0].isdigit():
            rows[int(cells[0])] = cells
    return rows


def test_table_numbers_recomputed_from_the_file(files, tmp_path):
    """Every statistic of one row recomputed here straight from the HDF5 file, with closed forms
    (3 models: t quantile and t-test p of 2 degrees of freedom; McNemar by summing binomials)."""
    written = max_accuracy_table.make(str(files / "eval-max.h5"), str(tmp_path))
    assert [os.path.basename(p) for p in written] == ["max_accuracy.md", "max_accuracy.tex"]
    rows = _table_rows((tmp_path / "max_accuracy.md").read_text())
    assert sorted(rows) == list(NS)
    t975 = 0.95 / math.sqrt(2 * 0.975 * 0.025)
    with h5py.File(files / "eval-max.h5") as f:
        n_col = f["points/params/n"][()]
        ids = f["points/id"].asstr()[()]
        for n in NS:
            picked = np.flatnonzero(n_col == n)  # one point per model (one evaluation seed)
            acc = {x: f[f"points/accuracy.{x}"][()][picked] for x in ("softmax", "adaptive")}
            cells = rows[n]
            for column, x in ((2, "softmax"), (3, "adaptive")):
                half = t975 * acc[x].std(ddof=1) / math.sqrt(3)
                assert cells[column] == f"{100 * acc[x].mean():.1f} ± {100 * half:.1f}"
            # McNemar per model (the models share the sets), discordant pairs summed, largest p.
            total_b = total_c = 0
            largest = 0.0
            for i in picked:
                soft = f[f"arrays/{ids[i]}/correct.softmax"][()]
                adap = f[f"arrays/{ids[i]}/correct.adaptive"][()]
                b, c = int(np.sum((soft == 1) & (adap == 0))), int(np.sum((soft == 0) & (adap == 1)))
                total_b, total_c = total_b + b, total_c + c
                tail = sum(math.comb(b + c, k) for k in range(min(b, c) + 1)) / 2 ** (b + c)
                largest = max(largest, min(1.0, 2 * tail) if b + c else 1.0)
            assert cells[7] == f"{total_b} / {total_c}"
            assert cells[8] == mr.format_p(largest)
            d = acc["adaptive"] - acc["softmax"]
            assert cells[6] == f"{100 * d.mean():+.1f}"
            if d.std(ddof=1) > 0:
                t = d.mean() / (d.std(ddof=1) / math.sqrt(3))
                assert cells[9] == mr.format_p(1 - abs(t) / math.sqrt(t * t + 2))
    assert rows[16][4:6] == ["98.6", "98.6"] and rows[1024][4:6] == ["53.8", "57.7"]
    assert rows[1024][10] == "0.0001" and rows[128][4] == "—" and rows[128][10] == "—"


def test_table_with_one_model_uses_wilson_and_no_t_test(files, tmp_path):
    max_accuracy_table.make(str(files / "one-model.h5"), str(tmp_path))
    text = (tmp_path / "max_accuracy.md").read_text()
    rows = _table_rows(text)
    data = mr.load_eval_max(str(files / "one-model.h5"))
    for n in NS:
        cell = data.cells[n][0]
        k = int(cell.correct["softmax"].sum())
        low, high = mr.wilson_interval(k, 48)
        assert rows[n][1] == "1"
        assert rows[n][2] == f"{100 * k / 48:.1f} [{100 * low:.1f}, {100 * high:.1f}]"
        assert rows[n][9] == "n/a"  # paired t needs two models
        test = mr.mcnemar_exact(cell.correct["softmax"], cell.correct["adaptive"])
        assert rows[n][7] == f"{test.only_a} / {test.only_b}"  # over both evaluation seeds
    assert "evaluation seed(s) 1, 2" in text and "McNemar: exact two-sided binomial" in text


def test_latex_table_is_well_formed(files, tmp_path):
    max_accuracy_table.make(str(files / "eval-max.h5"), str(tmp_path))
    tex = (tmp_path / "max_accuracy.tex").read_text()
    assert tex.count("\\begin{tabular}") == tex.count("\\end{tabular}") == 1
    assert "\\caption{" in tex and "McNemar" in tex and "ttest\\_rel" in tex
    spec = tex.split("\\begin{tabular}{")[1].split("}")[0]
    body = tex.split("\\midrule")[1].split("\\bottomrule")[0].strip().splitlines()
    assert len(body) == len(NS)
    assert all(line.count("&") == len(spec) - 1 and line.endswith("\\\\") for line in body)
    header = [line for line in tex.splitlines() if line.startswith("$n$ &")][0]
    assert header.count("&") == len(spec) - 1
    assert not any(ord(ch) > 127 for ch in tex)  # plain ASCII: no inputenc surprises


# ---- figures


def _outputs_ok(outdir, name):
    png, pdf = outdir / f"{name}.png", outdir / f"{name}.pdf"
    assert png.read_bytes().startswith(b"\x89PNG") and png.stat().st_size > 20_000
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF") and b"CreationDate" not in data
    import matplotlib.image
    pixels = matplotlib.image.imread(str(png))
    assert pixels.shape[1] > 900 and pixels[..., :3].std() > 0.05
    return data


@pytest.mark.parametrize("module, source", [
    (fig_attention_maps, "eval-max.h5"), (fig_max_accuracy, "eval-max.h5"),
    (fig_head_entropy, "one-model.h5"), (fig_beta_polynomial, "fit-binned.h5")],
    ids=lambda v: getattr(v, "__name__", v))
def test_figures_render(files, tmp_path, module, source):
    name = module.__name__.removeprefix("fig_")
    written = module.make(str(files / source), str(tmp_path))
    assert [os.path.basename(p) for p in written] == [f"{name}.png", f"{name}.pdf"]
    _outputs_ok(tmp_path, name)
    assert not any(f.name.startswith(".tmp") for f in tmp_path.iterdir())


@pytest.mark.parametrize("module, source", [
    (fig_attention_maps, "eval-max.h5"), (fig_beta_polynomial, "fit-binned.h5")],
    ids=lambda v: getattr(v, "__name__", v))
def test_pdfs_are_byte_reproducible(files, tmp_path, module, source):
    """The two layouts not shared with the other figures (a grid of heatmaps; a scatter): the
    line figures go through the same save_figure as fig_dispersion, tested in test_analysis.py."""
    name = module.__name__.removeprefix("fig_")
    module.make(str(files / source), str(tmp_path / "a"))
    module.make(str(files / source), str(tmp_path / "b"))
    assert (tmp_path / "a" / f"{name}.pdf").read_bytes() == \
        (tmp_path / "b" / f"{name}.pdf").read_bytes()


def test_figures_draw_the_other_variants(files):
    """Drawn, not saved (saving is the slow part): one model (Wilson band) for the accuracy curve,
    three models for the entropy, a fit-adaptive file without the binned protocol."""
    import matplotlib.pyplot as plt
    one = mr.load_eval_max(str(files / "one-model.h5"))
    fig = fig_max_accuracy.draw(one)
    legend_texts = [t.get_text() for leg in fig.axes[1].get_children()
                    if hasattr(leg, "get_texts") for t in leg.get_texts()]
    assert "95% Wilson interval (one model)" in legend_texts
    band = fig.axes[0].collections[0].get_paths()[0].vertices[:, 1]  # softmax band, in %
    s = one.summary("correct", "softmax", NS[0])
    assert np.isclose(band, 100 * s.low).any() and np.isclose(band, 100 * s.high).any()
    plt.close(fig)
    plt.close(fig_head_entropy.draw(mr.load_eval_max(str(files / "eval-max.h5"))))
    r = common.load_result(files / "fit-adaptive.h5", "fit-adaptive")
    fig = fig_beta_polynomial.draw(r, fig_beta_polynomial.read_models(r))
    labels = [t.get_text() for leg in fig.axes[1].get_children() if hasattr(leg, "get_texts")
              for t in leg.get_texts()]
    assert not any("binned" in t for t in labels) and any("our fit, per set" in t for t in labels)
    plt.close(fig)


@pytest.mark.parametrize("module", ALL_FIGURES + [max_accuracy_table], ids=lambda m: m.__name__)
def test_modules_refuse_incomplete_and_wrong_files(files, tmp_path, module):
    own = "fit-adaptive" if module is fig_beta_polynomial else "eval-max"
    incomplete = tmp_path / f"{own}.h5"
    if own == "eval-max":
        synthetic.write_eval_max(incomplete, ns=(16,), train_seeds=(1,), samples=4,
                                 attrs={"complete": None})
        other = files / "fit-adaptive.h5"
    else:
        synthetic.write_fit_adaptive(incomplete, train_seeds=(1,), ns=(16,), samples=8)
        with synthetic.edited(incomplete) as f:
            f.attrs["complete"] = np.int64(0)
        other = files / "eval-max.h5"
    out = tmp_path / "out"
    with pytest.raises(common.ResultFileError, match="incomplete"):
        module.make(str(incomplete), str(out))
    with pytest.raises(common.ResultFileError, match=f"needs '{own}'"):
        module.make(str(other), str(out))
    assert not out.exists()


def test_attention_maps_refuse_a_file_without_maps(tmp_path):
    path = tmp_path / "eval-max.h5"
    synthetic.write_eval_max(path, ns=(16, 32), train_seeds=(1,), samples=4, map_samples=0)
    with pytest.raises(common.ResultFileError, match="no attention map 'map.softmax'.*"
                                                     "--map-samples"):
        fig_attention_maps.make(str(path), str(tmp_path / "out"))
    max_accuracy_table.make(str(path), str(tmp_path / "out"))  # the rest needs no maps


def test_attention_maps_take_the_first_model_and_thin_many_sizes(files):
    r = common.load_result(files / "eval-max.h5", "eval-max")
    checkpoint, train_seed, eval_seed, by_n = fig_attention_maps.first_model_points(r)
    assert train_seed == 1 and eval_seed == 1 and list(by_n) == list(NS)
    assert all(r.params["checkpoint"][i] == checkpoint for i in by_n.values())
    sizes = [2 ** k for k in range(4, 21)]  # 17 sizes: every other one, 2^4 … 2^20
    assert fig_attention_maps.shown_sizes(sizes) == [2 ** k for k in range(4, 21, 2)]
    assert fig_attention_maps.shown_sizes(sizes[:13]) == sizes[:13]  # make paper: 2^4..2^16
    assert fig_attention_maps.shown_sizes(sizes[:14]) == sizes[:14:2] + [2 ** 17]


def test_paper_polynomial_with_gate_and_clamp():
    f = fig_beta_polynomial
    assert f.paper_beta(0.0) == pytest.approx(-1.791)
    h = np.array([0.3, 0.5, 0.8, 0.85, 4.412, 5.9, 6.5])
    effective = f.paper_effective_beta(h)
    assert list(effective[:3]) == [1.0, 1.0, 1.0]             # gate (H ≤ 0.5) and clamp (β < 1)
    assert effective[3] > 1.0 and effective[5] > 1.0          # β > 1 on (0.8486, 5.9445)
    assert effective[4] == pytest.approx(2.421, abs=2e-3)     # peak (docs/science.md#adaptive-temperature)
    assert effective[6] == 1.0


def test_beta_polynomial_reads_both_protocols(files, tmp_path):
    r = common.load_result(files / "fit-binned.h5", "fit-adaptive")
    models = fig_beta_polynomial.read_models(r)
    assert len(models) == 3 and all(m.binned is not None for m in models)
    assert all(m.binned["coefficients_binned"].size == 5 for m in models)
    plain = fig_beta_polynomial.read_models(common.load_result(files / "fit-adaptive.h5"))
    assert all(m.binned is None for m in plain)
    np.testing.assert_allclose(  # the stored fit is the polynomial of the stored coefficients
        np.polyval(models[0].coefficients, models[0].entropy),
        r.arrays(models[0].point_id)["fit_beta"], rtol=1e-10)

    partial = _copy(files, tmp_path, "fit-binned.h5")
    with synthetic.edited(partial) as f:
        del f[f"arrays/{r.ids[1]}/coefficients_binned"]
    with pytest.raises(common.ResultFileError, match="binned fit is incomplete"):
        fig_beta_polynomial.make(str(partial), str(tmp_path / "out"))
    broken = _copy(files, tmp_path, "fit-adaptive.h5")
    with synthetic.edited(broken) as f:
        pid = f["points/id"].asstr()[0]
        f[f"arrays/{pid}/beta_star"][5] = np.inf
    with pytest.raises(common.ResultFileError, match="beta_star is not finite"):
        fig_beta_polynomial.make(str(broken), str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


# ---- models of different training normalisers are different remedies, never seeds of one


def _training_file(path, normaliser_of_seed: dict):
    """A train-max result file whose models (ids as synthetic.write_eval_max names its checkpoints)
    were trained with the given normalisers: the columns the analysis reads to learn each model's
    training normaliser, in a complete "sharp/1" file (the one reader refuses anything else)."""
    seeds = sorted(normaliser_of_seed)
    synthetic.write_result(path, "train-max", [{"seed": s, "normaliser": normaliser_of_seed[s]} for s in seeds], {})
    with synthetic.edited(path) as f:
        del f["points/id"]
        f.create_dataset("points/id", data=[synthetic.point_id("train-max", {"seed": s}) for s in seeds],
                         dtype=synthetic.STR)


def test_models_are_grouped_by_training_normaliser(tmp_path):
    path = tmp_path / "eval-max.h5"
    synthetic.write_eval_max(path, ns=(16, 64), train_seeds=(1, 2, 3, 4), samples=8)
    # Without the training file every model is of one unknown kind: read as before.
    assert mr.load_eval_max(str(path)).train_normaliser == mr.UNKNOWN_TRAINING
    _training_file(tmp_path / "train-max.h5", {1: "softmax", 2: "ssmax:s=learn", 3: "softmax",
                                               4: "ssmax:s=learn"})
    with pytest.raises(common.ResultFileError, match="different remedies, not seeds"):
        mr.load_eval_max(str(path))
    groups = mr.load_eval_max_groups(str(path))
    assert list(groups) == ["softmax", "ssmax:s=learn"]
    assert groups["softmax"].train_seeds == [1, 3]
    assert groups["ssmax:s=learn"].train_seeds == [2, 4]
    assert all(g.models(16) == 2 for g in groups.values())
    only = mr.load_eval_max(str(path), train_normaliser="softmax")
    assert only.train_normaliser == "softmax" and only.train_seeds == [1, 3]
    with pytest.raises(common.ResultFileError, match="no model trained with 'sparsemax'"):
        mr.load_eval_max(str(path), train_normaliser="sparsemax")
    # One kind of model: read without naming it.
    _training_file(tmp_path / "train-max.h5", {s: "entmax15" for s in (1, 2, 3, 4)})
    assert mr.load_eval_max(str(path)).train_normaliser == "entmax15"


def test_training_normaliser_column_groups_models_without_the_training_file(tmp_path):
    # sharp-eval-max writes each model's training normaliser as a parameter of every point: the
    # file alone says which models are seeds of one remedy; the column wins over a training file.
    path = tmp_path / "eval-max.h5"
    kinds = {1: "softmax", 2: "entmax:alpha=learn", 3: "softmax", 4: "entmax:alpha=learn"}
    synthetic.write_eval_max(path, ns=(16, 64), train_seeds=(1, 2, 3, 4), samples=8,
                             train_normaliser=kinds)
    _training_file(tmp_path / "train-max.h5", {s: "sparsemax" for s in kinds})  # stale: ignored
    with pytest.raises(common.ResultFileError, match="mixes models trained with normalisers "
                                                     "entmax:alpha=learn, softmax"):
        mr.load_eval_max(str(path))
    groups = mr.load_eval_max_groups(str(path))
    assert list(groups) == ["entmax:alpha=learn", "softmax"]
    assert groups["softmax"].train_seeds == [1, 3]
    assert groups["entmax:alpha=learn"].train_seeds == [2, 4]
    # Accuracies of one group are the per-model means of its own models only.
    softmax = groups["softmax"]
    assert softmax.models(64) == 2
    assert [c.train_seed for c in softmax.cells[64]] == [1, 3]
    one = tmp_path / "one.h5"
    synthetic.write_eval_max(one, ns=(16,), train_seeds=(1, 2), samples=8,
                             train_normaliser={1: "stieltjes:q=2", 2: "stieltjes:q=2"})
    assert mr.load_eval_max(str(one)).train_normaliser == "stieltjes:q=2"


def test_remedies_figure_groups_models_and_needs_trained(tmp_path):
    import fig_remedies
    path = tmp_path / "eval-remedies.h5"
    synthetic.write_eval_max(path, ns=(16, 64, 256), train_seeds=(1, 2, 3, 4), samples=8,
                             normalisers=("trained",))
    with synthetic.edited(path) as f:
        f["points/ranking_rate"][...] = 0.5
    _training_file(tmp_path / "train-max.h5", {1: "softmax", 2: "entmax15", 3: "softmax", 4: "entmax15"})
    groups = mr.load_eval_max_groups(str(path))
    s = fig_remedies.series(groups["softmax"])
    # The ratio is accuracy over the ranking rate, model by model.
    acc = groups["softmax"].per_model("correct", "trained", 16)
    assert s["ratio"][0][0] == pytest.approx(float(np.mean(acc / 0.5)))
    assert s["ranking"][0][0] == pytest.approx(50.0)
    written = fig_remedies.make(str(path), str(tmp_path / "fig"))
    assert any(p.endswith("remedies.png") for p in written)
    other = tmp_path / "other" / "eval-remedies.h5"
    other.parent.mkdir()
    synthetic.write_eval_max(other, ns=(16,), train_seeds=(1,), samples=4, normalisers=("softmax",))
    with pytest.raises(common.ResultFileError, match="lacks 'trained'"):
        fig_remedies.make(str(other), str(tmp_path / "fig2"))
