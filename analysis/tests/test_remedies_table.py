"""Tests of the remedies leaderboard (analysis/remedies_table.py, docs/science.md#remedies) on a
synthetic eval-max file whose per-sample outcomes are set by hand: the numbers against a direct
computation, pairing by training seed, the moonshot mark, the equivalence check both ways, and the
files refused.

    /usr/bin/python3 -m pytest -q -p no:cacheprovider analysis/tests/test_remedies_table.py
"""
import math
import re

import numpy as np
import pytest
from scipy import stats

import common
import max_retrieval as mr
import remedies_table as rt
import synthetic

EQ = rt.EQUIVALENCE
SAMPLES = 40


def write(path, models: dict, ns=(16, 64, 256, 16384), normalisers=("trained",), ranking=0.5):
    """models {(remedy, train seed): rate(n, x) -> accuracy}: one point per (model, n); per sample
    correct = the first round(rate·SAMPLES) sets right in a seed-shuffled order (so models differ
    sample by sample) — every remedy of one seed sees the same sets, as sharp-eval-max does."""
    grid, metrics, arrays = [], {}, {}
    for (remedy, seed), rate in models.items():
        for n in ns:
            index = len(grid)
            grid.append(dict(checkpoint=f"train-remedies.h5#{remedy}-{seed}", train_normaliser=remedy,
                             n=int(n), normaliser="+".join(normalisers), samples=SAMPLES, chunk=512,
                             map_samples=0, map_items=16, seed=1))
            a = {}
            for x in normalisers:
                k = int(round(rate(n, x) * SAMPLES))
                order = np.random.default_rng([seed, n, len(x), len(remedy)]).permutation(SAMPLES)
                correct = np.zeros(SAMPLES, dtype=np.int64)
                correct[order[:k]] = 1
                a[f"correct.{x}"] = correct
                a[f"entropy.{x}"] = np.ones(SAMPLES)
                a[f"weight_on_max.{x}"] = np.full(SAMPLES, 0.5)
                metrics.setdefault(f"accuracy.{x}", []).append(k / SAMPLES)
                metrics.setdefault(f"correct.{x}", []).append(k)
            arrays[index] = a
            metrics.setdefault("train_n", []).append(16)
            metrics.setdefault("train_seed", []).append(seed)
            metrics.setdefault("ranking_rate", []).append(ranking)
            metrics.setdefault("oracle_rate", []).append(1.0)
    synthetic.write_result(path, "eval-max", grid, metrics, arrays=arrays)
    return path


def steady(value):
    return lambda n, x: value


def test_numbers_against_a_direct_computation(tmp_path):
    rates = {1: 0.5, 2: 0.6, 3: 0.55}
    models = {("softmax", s): (lambda v: lambda n, x: v + (0.2 if x == "argmax" else 0.0))(r)
              for s, r in rates.items()}
    models.update({("entmax15", s): steady(r + 0.1 + 0.025 * s) for s, r in rates.items()})
    path = write(tmp_path / "e.h5", models, normalisers=("trained", "argmax"))
    b = rt.board(str(path))
    # Leaderboard sizes present in the file only; softmax first; the inference variant on softmax.
    assert b.ns == [64, 256, 16384]
    assert [(e.name, e.kind) for e in b.entries] == [
        ("softmax", "trained"), ("entmax15", "trained"), ("softmax + argmax", "inference")]
    data = mr.load_eval_max_groups(str(path))
    for n in b.ns:
        ent = b.cells[("entmax15", n)]
        soft = [c.correct["trained"] for c in data["softmax"].cells[n]]
        mine = [c.correct["trained"] for c in data["entmax15"].cells[n]]
        acc = np.array([m.mean() for m in mine])
        mean, low, high = mr.t_interval(acc)
        assert ent.accuracy.mean == pytest.approx(mean) and ent.accuracy.low == pytest.approx(low)
        assert ent.t_p == pytest.approx(stats.ttest_rel(acc, [s.mean() for s in soft]).pvalue)
        for test, a, s in zip(ent.mcnemar, mine, soft):
            assert test.only_a == int(np.sum((a == 1) & (s == 0)))
            assert test.only_b == int(np.sum((a == 0) & (s == 1)))
        # The distance to the ranking rate: accuracy − 0.5 per model.
        assert ent.to_ranking.mean == pytest.approx(mean - 0.5)
        assert b.cells[("softmax", n)].mcnemar == () and math.isnan(b.cells[("softmax", n)].t_p)
        variant = b.cells[("softmax + argmax", n)]
        assert variant.accuracy.mean == pytest.approx(np.mean(list(rates.values())) + 0.2)
    text = rt.markdown(b)
    assert "| softmax | trained | 3 | ref. | ref. | ref. |" in text
    assert "paper: softmax" in text and "| 27.9 |" in text


def test_pairs_are_matched_by_training_seed(tmp_path):
    models = {("softmax", s): steady(0.5) for s in (1, 2, 3)}
    models.update({("sparsemax", s): steady(0.6) for s in (2, 3, 4)})
    b = rt.board(str(write(tmp_path / "e.h5", models)))
    assert len(b.cells[("sparsemax", 64)].mcnemar) == 2          # seeds 2 and 3 only
    assert b.cells[("sparsemax", 64)].accuracy.models == 3       # the mean uses every model


def test_moonshot_marks_only_remedies_trained_in(tmp_path):
    high = lambda n, x: 0.3 if n == 16384 else 0.9   # 30% > 27.9% at 16384
    models = {("softmax", s): (lambda n, x: 0.3 if x == "argmax" and n == 16384 else 0.2)
              for s in (1, 2)}
    models.update({("ssmax:s=learn", s): high for s in (1, 2)})
    b = rt.board(str(write(tmp_path / "e.h5", models, normalisers=("trained", "argmax"))))
    rows = {r[0]: r for r in rt.table_rows(b, "accuracy")}
    column = 3 + b.ns.index(16384)
    assert rows["ssmax:s=learn"][column].endswith("★")
    assert "★" not in rows["softmax + argmax"][column]        # 30% too, but inference-only
    assert "★" not in rows["softmax"][column]
    assert "★" not in rows["ssmax:s=learn"][3]                # only at 16384


def test_equivalence_check_holds_and_fails(tmp_path):
    # The trained run has the variant's accuracy on every seed (other samples right: the order
    # depends on the normaliser's name): the paired differences are 0.
    same = {("softmax", s): steady(0.5 + 0.05 * s) for s in (1, 2, 3)}
    same.update({(EQ, s): (lambda v: lambda n, x: v)(0.5 + 0.05 * s) for s in (1, 2, 3)})
    b = rt.board(str(write(tmp_path / "same.h5", same, normalisers=("trained", EQ))))
    assert b.equivalence and "holds at every n" in b.equivalence[0]
    assert any(r[1] == "trained (equivalence check)" for r in rt.table_rows(b, "accuracy"))
    # A systematic gap of 20 points on every seed: the paired interval excludes 0.
    apart = {("softmax", s): steady(0.5 + 0.05 * s) for s in (1, 2, 3)}
    apart.update({(EQ, s): (lambda v: lambda n, x: v)(0.7 + 0.05 * s + 0.0125 * (s == 2))
                  for s in (1, 2, 3)})
    b = rt.board(str(write(tmp_path / "apart.h5", apart, normalisers=("trained", EQ))))
    assert "FAILS at some n" in b.equivalence[0]
    assert all(line.endswith("FAILS") for line in b.equivalence[1:])
    # Without the trained run, no check (and no claim).
    b = rt.board(str(write(tmp_path / "none.h5", {("softmax", 1): steady(0.5)},
                           normalisers=("trained", EQ))))
    assert b.equivalence == [] and "Equivalence" not in rt.markdown(b)


def test_refuses_files_it_cannot_name_or_read(tmp_path):
    path = write(tmp_path / "no-trained.h5", {("softmax", 1): steady(0.5)}, normalisers=("softmax",))
    with pytest.raises(common.ResultFileError, match="lacks 'trained'"):
        rt.board(str(path))


def test_make_writes_markdown_and_latex(tmp_path):
    models = {("softmax", s): steady(0.5) for s in (1, 2)}
    models.update({("entmax15", s): steady(0.6) for s in (1, 2)})
    written = rt.make(str(write(tmp_path / "e.h5", models, ns=(16, 1024, 2 ** 20))), tmp_path / "out")
    assert [p.rsplit("/", 1)[1] for p in written] == ["remedies_leaderboard.md",
                                                     "remedies_leaderboard.tex"]
    md, tex = (open(p, encoding="utf-8").read() for p in written)
    assert "n = 2^20" in md and "n = 1024" in md and "| n = 16 |" not in md
    assert "\\begin{tabular}" in tex and "$n = 2^20$" in tex and "\\texttt{entmax15}" in tex
    body = [line for line in tex.splitlines() if not line.startswith("%")]
    assert "±" not in tex and not any(re.search(r"(?<!\\)%", line) for line in body)
