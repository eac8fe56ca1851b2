"""The text study's endpoint as pre-registered (analysis/text_study_endpoint.py, analysis/paired_strata.py)
and its page (analysis/text_study.py) on synthetic files whose per-sample outcomes are known: the CMH
statistic against a hand computation and the textbook CMH, Holm's adjustment, the restriction to
answers with an index below the training lengths changing the verdict, the sign rule over seeds,
the gate, samples keyed on the training seed in a separate primary file, the table, the figures
(the learning curves too) and the refusals.

    /usr/bin/python3 -m pytest -q -p no:cacheprovider analysis/tests/test_text_study.py
"""
import math

import numpy as np
import pytest
from scipy import stats

import common
import fig_text_curves
import products
import paired_strata as ps
import synthetic
import text_study as ts
import text_study_endpoint as te

# (name, input file, make) of every product make_figures makes
MADE = [(p.name, p.input_file, p.make) for p in products.PRODUCTS]


def study(tmp_path, **kw):
    synthetic.write_text_study(tmp_path, **kw)
    return te.load(ts.study_files(str(tmp_path / "eval-text.h5")))


def one(rows, remedy="adaptive"):
    found = [e for e in rows if e.remedy == remedy]
    assert len(found) == 1, [e.remedy for e in rows]
    return found[0]


# ---- the pooled test and Holm


def textbook_cmh(tables) -> float:
    """The classical CMH statistic with its 1/2 continuity correction for 2x2xK tables
    [[a, b], [c, d]]: (|sum a - E[a]| - 1/2)^2 / sum Var(a); the reference for the paired form."""
    deviation = variance = 0.0
    for (a, b), (c, d) in np.asarray(tables, dtype=float).reshape(-1, 2, 2):
        n = a + b + c + d
        deviation += a - (a + b) * (a + c) / n
        variance += (a + b) * (c + d) * (a + c) * (b + d) / (n * n * (n - 1))
    return (abs(deviation) - 0.5) ** 2 / variance


def test_cmh_against_a_hand_computed_case():
    # Six (seed, length) strata, b = only the arm right, c = only softmax: sum b = 27, sum c = 9,
    # chi2 = (|27 - 9| - 1)^2 / 36 = 289 / 36; p = P(chi2_1 > x) = erfc(sqrt(x / 2)).
    b, c = [5, 4, 6, 3, 7, 2], [1, 2, 0, 3, 1, 2]
    statistic, p = ps.cmh_paired(b, c)
    assert statistic == pytest.approx(289 / 36, rel=1e-12)
    assert p == pytest.approx(math.erfc(math.sqrt(289 / 72)), rel=1e-12)
    assert 0.0045 < p < 0.0047
    # The stratification does not move the paired statistic: the pooled counts give the same.
    assert ps.cmh_paired([27], [9]) == (statistic, p)
    # No discordant pair: nothing to test.
    assert math.isnan(ps.cmh_paired([0, 0], [0, 0])[0]) and ps.cmh_paired([0], [0])[1] == 1.0
    # Exact binomial beside it: 2 P(X <= 9), X ~ Binomial(36, 1/2).
    assert ps.binomial_paired(b, c) == pytest.approx(2 * stats.binom.cdf(9, 36, 0.5), rel=1e-12)


def test_the_paired_form_is_the_textbook_cmh_on_pair_strata():
    # Every pair is a 2x2 stratum (model x right/wrong); concordant ones carry nothing.
    def pair_tables(a, b):
        return [[[x, 1 - x], [y, 1 - y]] for x, y in zip(a, b) if x != y]
    a = np.array([1] * 3 + [0] * 7 + [1] * 2 + [0] * 6)   # softmax
    b = np.array([0] * 3 + [1] * 7 + [0] * 2 + [1] * 6)   # the arm: 13 wins, 5 losses
    assert textbook_cmh(pair_tables(a, b)) == pytest.approx(ps.cmh_paired([13], [5])[0], rel=1e-12)
    assert ps.cmh_paired([13], [5])[0] == pytest.approx((13 - 5 - 1) ** 2 / 18, rel=1e-12)


def test_holm_against_a_hand_computed_family():
    # Sorted 0.005, 0.01, 0.03, 0.04: x4 = 0.02, x3 = 0.03, x2 = 0.06, x1 = 0.04 -> running max 0.06.
    assert ps.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02], rel=1e-12)
    # Capped at 1; a comparison not measured counts as p = 1, keeping the family's size.
    assert ps.holm([0.3, 0.5]) == pytest.approx([0.6, 0.6])
    assert ps.holm([0.01, math.nan]) == pytest.approx([0.02, 1.0])
    assert ps.holm([]) == []


# ---- the endpoint


def test_the_restriction_changes_the_verdict(tmp_path):
    # Adaptive is right on half the answers with index >= 16 (that softmax never writes) and equal
    # below: every sample says "adaptive better"; the restricted samples say no difference.
    s = study(tmp_path)
    full = one(te.endpoints(s, restrict=False))
    kept = one(te.endpoints(s))
    assert full.verdict == "adaptive better" and full.pooled_p < 1e-6
    assert all(t.sign == 1 for t in full.seeds)
    assert kept.verdict == te.NO_DIFFERENCE
    assert all(t.mcnemar.only_a == t.mcnemar.only_b == 0 for t in kept.seeds)
    assert kept.pooled_p == 1.0 and kept.primary
    assert kept.index_below == 16 and full.index_below is None
    # Restricted counts per seed and length: indices 7j mod n below 16, 40 samples each.
    for n, stratum in zip((24, 32), kept.seeds[0].strata):
        assert (stratum.length, stratum.total) == (n, 40)
        assert stratum.kept == int((synthetic.study_answer_index(n, 40) < 16).sum())
    assert [t.restricted for t in kept.seeds] == [kept.seeds[0].restricted] * 3
    assert 0 < kept.seeds[0].restricted < 80
    assert len(kept.strata) == 6   # (seed, length)
    # The inference-only arm runs on the softmax models: no difference either way.
    assert one(te.endpoints(s), "softmax + adaptive at inference").verdict == te.NO_DIFFERENCE


def test_a_direction_needs_every_seed_and_the_pooled_p(tmp_path):
    def right(normaliser, item, n, seed, index):
        j = np.arange(index.size)
        if n < 24:
            return np.ones(index.size, bool)
        base = j % 2 == 0
        if normaliser == "adaptive":   # seeds 1, 2: 12 more right; seed 3: 1 fewer
            return base | (j % 2 == 1) & (j < 24) & (index < 16) if seed < 3 else base & (j != 0)
        return base
    e = one(te.endpoints(study(tmp_path, right=right, samples=40)))
    assert [t.sign for t in e.seeds] == [1, 1, -1]
    assert e.pooled_p < te.ALPHA   # pooled, the two strong seeds dominate ...
    assert e.verdict == te.NO_DIFFERENCE   # ... but the seeds disagree in sign

    def worse(normaliser, item, n, seed, index):
        j = np.arange(index.size)
        if n < 24:
            return np.ones(index.size, bool)
        return (j % 2 == 0) & ~((normaliser == "adaptive") & (j % 4 == 0) & (index < 16))
    e = one(te.endpoints(study(tmp_path, right=worse)))
    assert [t.sign for t in e.seeds] == [-1, -1, -1] and e.verdict == "softmax better"


def test_holm_decides_the_other_arms_raw_p_the_primary(tmp_path):
    # Every arm trained in wins two samples at length 24 in every seed (indices 7 and 11), loses none:
    # chi2 = 25/6, p = 0.041. Adaptive (primary, raw p) is claimed; ssmax with the same raw p is
    # not, once Holm multiplies it by the family's size (3 here).
    def right(normaliser, item, n, seed, index):
        j = np.arange(index.size)
        if n < 24:
            return np.ones(index.size, bool)
        wins = normaliser != "softmax" and item == "trained" and n == 24
        return (j % 2 == 0) | (wins & np.isin(j, [1, 5]))
    rows = te.endpoints(study(tmp_path, right=right, normalisers=("softmax", "adaptive", "ssmax:s=learn")))
    adaptive, ssmax = one(rows), one(rows, "ssmax:s=learn")
    inference = one(rows, "softmax + adaptive at inference")
    assert [e.remedy for e in rows][0] == "adaptive"   # the primary comparison first
    assert adaptive.pooled_p == pytest.approx(ssmax.pooled_p) == pytest.approx(math.erfc(math.sqrt(25 / 12)))
    assert adaptive.pooled_p < te.ALPHA
    assert adaptive.verdict == "adaptive better"
    expected = ps.holm([adaptive.pooled_p, ssmax.pooled_p, inference.pooled_p])
    assert ssmax.holm_p == pytest.approx(expected[1]) and ssmax.holm_p >= te.ALPHA
    assert ssmax.verdict == te.NO_DIFFERENCE


def test_a_model_failing_the_gate_makes_its_rows_not_measured(tmp_path):
    # Seed 2's adaptive model is right on 90% at its training lengths: below the 95% gate.
    def right(normaliser, item, n, seed, index):
        j = np.arange(index.size)
        if n in (4, 8, 16):
            return (j % 10 != 0) if (normaliser, item, seed) == ("adaptive", "trained", 2) else np.ones(index.size, bool)
        return (j % 2 == 0) | ((normaliser == "adaptive") & (index < 16))
    s = study(tmp_path, right=right)
    rows = te.endpoints(s)
    adaptive = one(rows)
    assert [t.sign for t in adaptive.seeds] == [1, 1, 1] and adaptive.pooled_p < 1e-6   # would be claimed
    assert adaptive.verdict == te.NOT_MEASURED
    assert adaptive.gate_failures == ["minimum, adaptive, seed 2: 90.0%"]
    # The inference-only arm needs the softmax models only, which pass.
    assert one(rows, "softmax + adaptive at inference").verdict == te.NO_DIFFERENCE
    md = ts.markdown(s, rows, rows, {})
    assert "| adaptive, seed 2 | 90.0% | not learned |" in md and "| softmax, seed 1 | 100.0% | passes |" in md
    assert "not measured (gate: minimum, adaptive, seed 2: 90.0%)" in md
    # A softmax model failing fails every comparison of its configuration.
    s = study(tmp_path, right=lambda x, item, n, seed, index: np.full(index.size, n > 16 or x != "softmax"))
    assert all(e.verdict == te.NOT_MEASURED for e in te.endpoints(s))


def test_a_seed_lacking_a_primary_length_is_not_counted(tmp_path):
    s = study(tmp_path, lengths=(4, 8, 16, 24), seeds=(1,))
    e = one(te.endpoints(s))
    assert e.seeds == [] and e.missing == [1] and e.verdict == te.NOT_MEASURED
    assert math.isnan(e.pooled_p)


def test_samples_keyed_on_the_training_seed_in_a_primary_file(tmp_path):
    # Lengths 24 and 32 in eval-text-primary.h5 with sample_seed = training: each seed's samples are
    # shifted by the seed, so its restricted counts differ; both arms of a seed share them.
    s = study(tmp_path, primary=(24, 32))
    assert s.paths == [str(tmp_path / "eval-text.h5"), str(tmp_path / "eval-text-primary.h5")]
    assert te.independent_samples(s) is True
    kept = one(te.endpoints(s))
    for t in kept.seeds:
        assert t.restricted == sum(int((synthetic.study_answer_index(n, 40, t.seed) < 16).sum()) for n in (24, 32))
    assert len({t.restricted for t in kept.seeds}) > 1
    assert kept.verdict == te.NO_DIFFERENCE and one(te.endpoints(s, restrict=False)).verdict == "adaptive better"
    # The gate comes from eval-text.h5 (the training lengths), the endpoint from the primary file.
    assert all(c.passes for c in s.gate.values()) and len(s.gate) == 6
    assert "drawn independently for each training seed" in ts.markdown(s, te.endpoints(s), [], {})
    # Shared samples are named as such.
    (tmp_path / "shared").mkdir()
    shared = study(tmp_path / "shared")
    assert te.independent_samples(shared) is False
    assert "not independent strata" in ts.markdown(shared, te.endpoints(shared), [], {})


def test_a_copied_value_answer_keeps_every_sample(tmp_path):
    # max_value: answer_index is -1 everywhere, so the endpoint is unrestricted (and says so).
    s = study(tmp_path, algorithm="max_value")
    e = one(te.endpoints(s))
    assert e.algorithm == "max_value" and e.index_below is None
    assert all(x.kept == x.total == 40 for x in e.strata)


def test_a_length_in_two_files_is_refused(tmp_path):
    synthetic.write_text_study(tmp_path, primary=(24, 32))
    with pytest.raises(common.ResultFileError, match="also in another file"):
        te.load([str(tmp_path / "eval-text-primary.h5"), str(tmp_path / "eval-text-primary.h5")])


# ---- the page's files


def test_make_writes_the_table_and_both_figures_and_is_registered(tmp_path):
    synthetic.write_text_study(tmp_path)
    written = ts.make(str(tmp_path / "eval-text.h5"), str(tmp_path / "figures"))
    names = sorted(p.rsplit("/", 1)[1] for p in written)
    assert names == ["text_study.md", "text_study_accuracy.pdf", "text_study_accuracy.png",
                     "text_study_entropy.pdf", "text_study_entropy.png"]
    md = (tmp_path / "figures" / "text_study.md").read_text()
    assert "## Primary endpoint (answer index < 16 where it is an index)" in md
    k24, k32 = (int((synthetic.study_answer_index(n, 40) < 16).sum()) for n in (24, 32))
    assert f"seed 1: {k24} of 40 at 24, {k32} of 40 at 32; softmax / arm right 34 / 34, discordant 0 / 0" in md
    assert "| minimum | adaptive (primary) |" in md and te.NO_DIFFERENCE in md and "adaptive better" in md
    assert "Cochran-Mantel-Haenszel" in md and "Holm" in md and "(primary: raw p)" in md
    assert "## Competence gate" in md
    # The heads' table: the training lengths (the models' own, 4, 8, 16) and each longer length.
    assert "| minimum | adaptive | training | " in md and "| minimum | softmax | 32 | " in md
    row = next(line for line in md.splitlines() if line.startswith("| minimum | adaptive | 32 |"))
    after, before = (float(x) for x in row.split("|")[4:6])
    assert before - after == pytest.approx(0.3, abs=1e-3)
    assert ("text_study", ts.INPUT_FILE, ts.make) in MADE


def test_a_file_without_answer_index_is_refused(tmp_path):
    synthetic.write_text_study(tmp_path)
    path = tmp_path / "eval-text.h5"
    with synthetic.edited(path) as f:
        first = f["points/id"].asstr()[0]
        del f[f"arrays/{first}/answer_index"]
    with pytest.raises(common.ResultFileError, match="answer_index"):
        te.load(str(path))


def test_models_that_saw_different_samples_are_refused(tmp_path):
    synthetic.write_text_study(tmp_path)
    path = tmp_path / "eval-text.h5"
    with synthetic.edited(path) as f:
        last = f["points/id"].asstr()[-1]
        f[f"arrays/{last}/answer_index"][0] += 1
    with pytest.raises(common.ResultFileError, match="different"):
        te.load(str(path))


def test_learning_curves_per_arm_and_seed_are_drawn_and_registered(tmp_path):
    synthetic.write_text_study(tmp_path, normalisers=("softmax", "adaptive", "ssmax:s=learn"))
    models = fig_text_curves.curves(str(tmp_path / "train-text.h5"))
    assert sorted({(m[1], m[2]) for m in models}) == sorted(
        (x, s) for x in ("softmax", "adaptive", "ssmax:s=learn") for s in (1, 2, 3))
    pilot = next(m for m in models if m[1:3] == ("adaptive", 1))[3]
    assert list(pilot["curve_step"]) == [500, 1000, 1500, 2000]
    assert pilot["curve_eval_exact_match"][-1] == pytest.approx(0.93)
    written = fig_text_curves.make(str(tmp_path / "train-text.h5"), str(tmp_path / "figures"))
    assert sorted(p.rsplit("/", 1)[1] for p in written) == ["text_study_curves.pdf", "text_study_curves.png"]
    assert ("text_study_curves", "train-text.h5", fig_text_curves.make) in MADE
    assert ("text_study_curves_pilot", "train-text-pilot.h5", fig_text_curves.make_pilot) in MADE
    # A file without the curve is refused with the reason.
    with synthetic.edited(tmp_path / "train-text.h5") as f:
        first = f["points/id"].asstr()[0]
        del f[f"arrays/{first}/curve_eval_loss"]
    with pytest.raises(common.ResultFileError, match="curve_eval_loss"):
        fig_text_curves.curves(str(tmp_path / "train-text.h5"))
