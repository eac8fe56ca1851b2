"""The algorithmic-text paired table (analysis/text_paired_table.py) and the accuracy figure's
intervals on synthetic files whose per-sample correctness is known: buckets from the training
lengths, discordant counts and McNemar p per seed, the inference-only comparison, the Markdown and
LaTeX files, the refusals, and the figure's interval across seeds.

    /usr/bin/python3 -m pytest -q -p no:cacheprovider analysis/tests/test_text_analysis.py
"""
import h5py
import pytest
from scipy import stats

import common
import make_figures
import synthetic
import text_paired_table as tp


def rows_by(rows, bucket, remedy):
    found = [r for r in rows if r.bucket == bucket and r.remedy == remedy]
    assert len(found) == 1, [(r.bucket, r.remedy) for r in rows]
    return found[0]


def test_buckets_follow_the_training_lengths(tmp_path):
    synthetic.write_text_pairs(tmp_path)
    rows = tp.load(str(tmp_path / "eval-text.h5"))
    buckets = {r.bucket: r.lengths for r in rows if r.remedy == "adaptive"}
    # trained at 4, 5, 7: 6 interpolates, 8-32 and 33-64 extrapolate, 70 lies beyond 64
    assert buckets == {"training": [4, 5, 7], "interpolation": [6], "8-32": [8, 20], "33-64": [40],
                       "> 64": [70]}
    assert [r.bucket for r in rows if r.remedy == "adaptive"] == ["training", "interpolation", "8-32",
                                                                  "33-64", "> 64"]
    assert tp.bucket_of(15, False, 16) == "interpolation" and tp.bucket_of(17, False, 16) == "extrapolation to 32"
    assert tp.bucket_label("extrapolation to 32", 16) == "17-32"


def test_counts_and_mcnemar_per_seed_against_closed_forms(tmp_path):
    synthetic.write_text_pairs(tmp_path, seeds=(1, 2), samples=10)
    rows = tp.load(str(tmp_path / "eval-text.h5"))
    # 8-32 holds lengths 8 (softmax right on 8 of 10, adaptive 9) and 20 (6 and 7): per seed 2
    # samples only adaptive got right, none only softmax; two seeds.
    r = rows_by(rows, "8-32", "adaptive")
    assert (r.seeds, r.samples) == (2, 40)
    assert [(t.only_a, t.only_b) for t in r.tests] == [(0, 2), (0, 2)]
    assert r.baseline == pytest.approx(28 / 40) and r.accuracy == pytest.approx(32 / 40)
    assert r.largest_p == pytest.approx(stats.binomtest(0, 2, 0.5).pvalue)
    assert r.difference == pytest.approx(0.1)
    # adaptive applied at inference to the softmax models: one fewer right, only softmax wins
    inf = rows_by(rows, "8-32", "softmax + adaptive at inference")
    assert [(t.only_a, t.only_b) for t in inf.tests] == [(2, 0), (2, 0)]
    # equal models: no discordant pair, p = 1
    synthetic.write_text_pairs(tmp_path, right=lambda x, item, n, s: 5)
    flat = tp.load(str(tmp_path / "eval-text.h5"))
    assert all(t.p == 1.0 and t.only_a == t.only_b == 0 for c in flat for t in c.tests)


def test_seeds_pair_only_with_their_own_seed(tmp_path):
    # Seed 2's adaptive model is far better; seed 1's equal: the largest p is seed 1's (1.0), and the
    # discordant pairs are seed 2's alone — a pooled test would call the difference significant.
    synthetic.write_text_pairs(tmp_path, seeds=(1, 2), samples=40,
                               right=lambda x, item, n, s: 10 if (x == "softmax" or s == 1) else 40)
    r = rows_by(tp.load(str(tmp_path / "eval-text.h5")), "training", "adaptive")
    assert [(t.only_a, t.only_b) for t in r.tests] == [(0, 0), (0, 90)]
    assert r.largest_p == 1.0


def test_markdown_and_latex_tables(tmp_path):
    synthetic.write_text_pairs(tmp_path)
    written = tp.make(str(tmp_path / "eval-text.h5"), str(tmp_path / "figures"))
    assert [p.rsplit("/", 1)[1] for p in written] == ["text_paired.md", "text_paired.tex"]
    md = (tmp_path / "figures" / "text_paired.md").read_text()
    assert "## minimum\n" in md and "Training: positional rope, lengths 4+5+7." in md and "| 8-32 | 8, 20 | adaptive | 2 | 40 | 70.0 | 80.0 | +10.0 | 0 / 4 |" in md
    assert "softmax + adaptive at inference" in md and "not the released data" in md
    tex = (tmp_path / "figures" / "text_paired.tex").read_text()
    assert "\\begin{tabular}" in tex and "\\label{tab:text-paired}" in tex and "training: positional rope" in tex
    assert "minimum & 8-32 & 8, 20 & adaptive & 2 & 40 & 70.0 & 80.0 & +10.0 &" in tex
    assert "softmax + adaptive at inference" in tex and "$-$10.0" in tex


def test_no_pairs_is_said_and_missing_arrays_are_refused(tmp_path):
    synthetic.write_eval_text(tmp_path / "eval-text.h5")   # no training file: models unknown
    tp.make(str(tmp_path / "eval-text.h5"), str(tmp_path / "out"))
    assert "No comparison" in (tmp_path / "out" / "text_paired.md").read_text()
    synthetic.write_text_pairs(tmp_path)
    with synthetic.edited(tmp_path / "eval-text.h5") as f:
        first = f["points/id"].asstr()[0]
        del f[f"arrays/{first}/correct_final.trained"]
    with pytest.raises(common.ResultFileError, match="correct_final.trained"):
        tp.load(str(tmp_path / "eval-text.h5"))


def test_make_figures_writes_the_paired_table(tmp_path, capsys):
    synthetic.write_text_pairs(tmp_path)
    assert make_figures.main([str(tmp_path)]) == 0
    assert (tmp_path / "figures" / "text_paired.md").exists()
    assert "wrote text_paired" in capsys.readouterr().out


def test_report_page_shows_the_paired_table_or_why_not(tmp_path):
    from page import report
    synthetic.write_text_pairs(tmp_path)
    path, inputs, _ = report.write_report(str(tmp_path), None, now="test")
    page = open(path, encoding="utf-8").read()
    section = page.split('<section id="algorithmic-text">', 1)[1].split("</section>", 1)[0]
    assert "McNemar p (largest)" in section and "softmax + adaptive at inference" in section
    assert "8-32" in section and "0 / 4" in section
    # without per-sample arrays the figure's file is still read; only the table says why not
    with synthetic.edited(tmp_path / "eval-text.h5") as f:
        del f["arrays"]
    path, inputs, _ = report.write_report(str(tmp_path), None, now="test")
    section = open(path, encoding="utf-8").read().split('<section id="algorithmic-text">', 1)[1]
    assert inputs.sources["eval-text.h5"].ok
    assert "Table refused:" in section.split("</section>", 1)[0] and "correct_final" in section


def test_accuracy_figure_interval_is_across_seeds_or_wilson_for_one():
    import fig_text_accuracy as fig
    from max_retrieval import t_interval, wilson_interval
    # two models at 0.5 and 0.7 on 10 samples each: the t-interval of {0.5, 0.7}, not Wilson of 12/20
    mean, low, high = fig.seed_interval([0.5, 0.7], [10, 10], ["a", "b"])
    expected = t_interval([0.5, 0.7])
    assert mean == pytest.approx(0.6) and low == pytest.approx(max(0.0, expected[1]))
    assert high == pytest.approx(min(1.0, expected[2])) and high - low > 0.5
    # one model evaluated under two evaluation seeds: pooled, Wilson
    mean, low, high = fig.seed_interval([0.5, 0.7], [10, 10], ["a", "a"])
    assert (mean, low, high) == pytest.approx((0.6, *wilson_interval(12, 20)))


def test_accuracy_figure_draws_the_paired_files(tmp_path):
    import fig_text_accuracy as fig
    synthetic.write_text_pairs(tmp_path)
    written = fig.make(str(tmp_path / "eval-text.h5"), str(tmp_path / "figures"))
    assert any(p.endswith(".png") for p in written)


def test_configurations_are_told_apart_by_what_differs(tmp_path):
    synthetic.write_text_pairs(tmp_path)
    with synthetic.edited(tmp_path / "train-text.h5") as f:   # seed 2's models trained without positions
        seeds = f["points/params/seed"][()]
        del f["points/params/positional"]
        f.create_dataset("points/params/positional", data=["none" if s == 2 else "rope" for s in seeds],
                         dtype=h5py.string_dtype("utf-8"))
    rows = tp.load(str(tmp_path / "eval-text.h5"))
    assert {r.group for r in rows} == {"positional none", "positional rope"}
    assert {r.setting for r in rows} == {"lengths 4+5+7"} and all(r.seeds == 1 for r in rows)
