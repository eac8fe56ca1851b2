"""The text study's endpoint (analysis/text_study.py) on synthetic files whose per-sample outcomes
are known: the CMH statistic against hand computations and scipy, the restriction to answers with
an index below the training lengths changing the verdict, the sign rule over seeds, the counts of
restricted samples, the table, the figures and the refusals.

    /usr/bin/python3 -m pytest -q -p no:cacheprovider analysis/tests/test_text_study.py
"""
import math

import h5py
import numpy as np
import pytest
from scipy import stats

import common
import make_figures
import max_retrieval as mr
import synthetic
import text_study as ts


def study(tmp_path, **kw):
    synthetic.write_text_study(tmp_path, **kw)
    return ts.load(str(tmp_path / "eval-text.h5"))


def one(rows, remedy="adaptive"):
    found = [e for e in rows if e.remedy == remedy]
    assert len(found) == 1, [e.remedy for e in rows]
    return found[0]


# ---- the pooled test


def test_cmh_statistic_against_a_hand_computed_case():
    # Table 1: a=3 b=2 c=1 d=4: E[a] = 5*4/10 = 2, Var = 5*5*4*6/(10^2*9) = 600/900.
    # Table 2: a=5 b=1 c=2 d=2: E[a] = 6*7/10 = 4.2, Var = 6*4*7*3/(10^2*9) = 504/900.
    # sum(a - E) = 1.8; with the continuity correction (1.8 - 0.5)^2 / (1104/900).
    statistic, p = ts.cmh([[[3, 2], [1, 4]], [[5, 1], [2, 2]]])
    assert statistic == pytest.approx(1.3 ** 2 / (1104 / 900), rel=1e-12)
    assert p == pytest.approx(stats.chi2.sf(1.69 * 900 / 1104, 1), rel=1e-12)
    assert 0.24 < p < 0.241
    # A stratum of one observation adds nothing; no varying stratum: undefined.
    assert ts.cmh([[[3, 2], [1, 4]], [[5, 1], [2, 2]], [[1, 0], [0, 0]]])[0] == pytest.approx(statistic)
    assert all(math.isnan(x) for x in ts.cmh([[[4, 0], [3, 0]]]))


def test_cmh_of_one_table_is_scipys_yates_chi_square_times_n_minus_1_over_n():
    table = np.array([[30, 10], [12, 28]])
    n = table.sum()
    yates = stats.chi2_contingency(table, correction=True)[0]
    assert ts.cmh([table])[0] == pytest.approx(yates * (n - 1) / n, rel=1e-12)


def test_cmh_on_pair_strata_is_mcnemars_and_its_exact_form_the_pooled_binomial():
    # Two seeds: discordant (only softmax, only remedy) = (3, 7) and (2, 6): 5 against 13 in all.
    a = np.array([1] * 3 + [0] * 7 + [1] * 10 + [0] * 4 + [1] * 2 + [0] * 6 + [1] * 5, dtype=bool)
    b = np.array([0] * 3 + [1] * 7 + [1] * 10 + [0] * 4 + [0] * 2 + [1] * 6 + [1] * 5, dtype=bool)
    statistic, p = ts.cmh(ts.pair_strata(a, b))
    assert statistic == pytest.approx((abs(5 - 13) - 1) ** 2 / 18, rel=1e-12)   # McNemar, corrected
    tests = [mr.mcnemar_exact(a[:24], b[:24]), mr.mcnemar_exact(a[24:], b[24:])]
    assert [(t.only_a, t.only_b) for t in tests] == [(3, 7), (2, 6)]
    # Exact: 2 P(X <= 5), X ~ Binomial(18, 1/2) = 2 (1 + 18 + 153 + 816 + 3060 + 8568) / 2^18.
    assert ts.cmh_paired_exact(tests) == pytest.approx(2 * 12616 / 2 ** 18, rel=1e-12)
    assert ts.cmh_paired_exact(tests) == pytest.approx(stats.binomtest(13, 18, 0.5).pvalue, rel=1e-12)
    assert ts.cmh_paired_exact([mr.McNemar(0, 0, 1.0)]) == 1.0


# ---- the endpoint


def test_the_restriction_changes_the_verdict(tmp_path):
    # Adaptive is right on half the answers with index >= 16 (that softmax never writes) and equal
    # below: every sample says "adaptive better"; the restricted samples say no difference.
    s = study(tmp_path)
    full = one(ts.endpoints(s, restrict=False))
    kept = one(ts.endpoints(s))
    assert full.verdict == "adaptive better" and full.pooled_p < 1e-6
    assert all(t.sign == 1 for t in full.seeds)
    assert kept.verdict == ts.NO_DIFFERENCE
    assert kept.pooled_p == 1.0 and all(t.mcnemar.only_a == t.mcnemar.only_b == 0 for t in kept.seeds)
    assert kept.index_below == 16 and full.index_below is None
    # Restricted counts per seed: indices 7j mod n below 16 at n = 24 and 32, 40 samples each.
    expected = int(sum((synthetic.study_answer_index(n, 40) < 16).sum() for n in (24, 32)))
    assert [(t.restricted, t.total) for t in kept.seeds] == [(expected, 80)] * 3
    assert 0 < expected < 80
    # The inference-only arm runs on the softmax models: no difference either way.
    assert one(ts.endpoints(s), "softmax + adaptive at inference").verdict == ts.NO_DIFFERENCE


def test_a_direction_needs_every_seed_and_the_pooled_p(tmp_path):
    def right(normaliser, item, n, seed, index):
        j = np.arange(index.size)
        base = j % 2 == 0
        if normaliser == "adaptive":   # seeds 1, 2: 12 more right; seed 3: 1 fewer
            return base | (j % 2 == 1) & (j < 13) if seed < 3 else base & (j != 0)
        return base
    rows = ts.endpoints(study(tmp_path, right=right, samples=40))
    e = one(rows)
    assert [t.sign for t in e.seeds] == [1, 1, -1]
    assert e.pooled_p < ts.ALPHA   # pooled, the two strong seeds dominate ...
    assert e.verdict == ts.NO_DIFFERENCE   # ... but the seeds disagree in sign

    def worse(normaliser, item, n, seed, index):
        j = np.arange(index.size)
        return (j % 2 == 0) & ~((normaliser == "adaptive") & (j % 4 == 0) & (index < 16))
    e = one(ts.endpoints(study(tmp_path, right=worse)))
    assert [t.sign for t in e.seeds] == [-1, -1, -1] and e.verdict == "softmax better"


def test_a_seed_lacking_a_primary_length_is_not_counted(tmp_path):
    s = study(tmp_path, lengths=(4, 8, 16, 24), seeds=(1,))
    e = one(ts.endpoints(s))
    assert e.seeds == [] and e.missing == [1] and e.verdict == "not measured"
    assert math.isnan(e.pooled_p)


# ---- the page's files


def test_make_writes_the_table_and_both_figures_and_is_registered(tmp_path):
    synthetic.write_text_study(tmp_path)
    written = ts.make(str(tmp_path / "eval-text.h5"), str(tmp_path / "figures"))
    names = sorted(p.rsplit("/", 1)[1] for p in written)
    assert names == ["text_study.md", "text_study_accuracy.pdf", "text_study_accuracy.png",
                     "text_study_entropy.pdf", "text_study_entropy.png"]
    md = (tmp_path / "figures" / "text_study.md").read_text()
    assert "## Primary endpoint (answer index < 16)" in md
    kept = int(sum((synthetic.study_answer_index(n, 40) < 16).sum() for n in (24, 32)))
    assert f"seed 1: {kept} of 80 samples, 34 / 34 right, discordant 0 / 0, p 1;" in md
    assert "| minimum | adaptive |" in md and ts.NO_DIFFERENCE in md and "adaptive better" in md
    assert "exact conditional" in md and "Cochran-Mantel-Haenszel" in md
    # The heads' table: the training lengths (the models' own, 4, 8, 16) and each longer length.
    assert "| minimum | adaptive | training | " in md and "| minimum | softmax | 32 | " in md
    row = next(l for l in md.splitlines() if l.startswith("| minimum | adaptive | 32 |"))
    after, before = (float(x) for x in row.split("|")[4:6])
    assert before - after == pytest.approx(0.3, abs=1e-3)
    assert ("text_study", ts.INPUT_FILE, ts.make) in make_figures.FIGURES


def test_a_file_without_answer_index_is_refused(tmp_path):
    synthetic.write_text_study(tmp_path)
    path = tmp_path / "eval-text.h5"
    with synthetic.edited(path) as f:
        first = f["points/id"].asstr()[0]
        del f[f"arrays/{first}/answer_index"]
    with pytest.raises(common.ResultFileError, match="answer_index"):
        ts.load(str(path))


def test_models_that_saw_different_samples_are_refused(tmp_path):
    synthetic.write_text_study(tmp_path)
    path = tmp_path / "eval-text.h5"
    with synthetic.edited(path) as f:
        last = f["points/id"].asstr()[-1]
        f[f"arrays/{last}/answer_index"][0] += 1
    with pytest.raises(common.ResultFileError, match="different"):
        ts.load(str(path))
