"""The theorem check's rules (analysis/transformer_theorem.py) on synthetic models whose certificate,
β, δ and k·α_max follow set laws in n: every verdict the check can give, the rate test's three
outcomes, the cases the issue quotes (δ growing 2.29× on a bounded model; δ ∝ ln n), the grid's
own n in the labels, and the table make_figures writes.

    /usr/bin/python3 -m pytest -q -p no:cacheprovider analysis/tests/test_transformer_theorem.py
"""
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import common
import synthetic
import transformer_theorem as tt

ANALYSIS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def wobble(n: int) -> float:
    """A deterministic ±3% scatter, so that fitted slopes have a finite interval."""
    return 1.0 + 0.03 * math.sin(3.0 * math.log2(n))


def checks_of(tmp_path, cases, **kwargs) -> list:
    path = tmp_path / "cases.h5"
    synthetic.write_theorem_cases(path, cases, **kwargs)
    checks = sorted(tt.check_models(common.load_result(path, tt.EXPERIMENT)), key=lambda c: c.key["seed"])
    assert len(checks) == len(cases)
    return checks


def test_bounded_ln_growing_and_linearly_growing_inputs(tmp_path):
    bounded, ln_certificate, ln_beta, linear = checks_of(tmp_path, [
        # bounded: a constant certificate, δ levelling off, k·α_max steady
        lambda n: {"delta": 4 - 2 / math.log2(n), "n_alpha": 2 * wobble(n)},
        # δ ∝ ln n under a certificate that grows like ln n too (R measured, growing)
        lambda n: {"delta": 0.8 * math.log(n), "certificate": 1 + math.log(n), "n_alpha": 2 * wobble(n)},
        # β = s·ln n (SSMax with fixed s) on a constant certificate: the boundary control
        lambda n: {"beta": math.log(n) / math.log(16), "n_alpha": n ** 0.4 * wobble(n)},
        # ALiBi: the certificate grows like slope·(n − 1)
        lambda n: {"delta": 0.25 * (n - 1), "certificate": 5 + 0.25 * (n - 1), "n_alpha": n * 0.9 * wobble(n)},
    ])
    assert bounded.outcome == tt.HOLDS and bounded.holds and bounded.levels_off
    assert bounded.verdict().startswith("holds: beta*certificate constant (1.00x over n 4096..16384")
    assert bounded.rate_outcome == tt.RATE_HOLDS
    for c in (ln_certificate, ln_beta, linear):
        assert c.outcome == tt.OUTSIDE and not c.levels_off and not c.holds, c.verdict()
    assert "the certificate grows" in ln_certificate.verdict()
    assert "beta grows" in ln_beta.verdict()
    # ln n over the last 4×: ln 16384 / ln 4096 = 14/12, printed with the tolerance
    assert f"rises {14 / 12:.2f}x over n 4096..16384 (tolerance 10%" in ln_beta.verdict()
    assert ln_beta.rate_outcome == tt.RATE_SLOWER and ln_beta.rate.low > tt.RATE_TOLERANCE
    assert linear.rate_outcome == tt.RATE_SLOWER and abs(linear.rate.value - 1) < 0.05
    # the illustration: δ ∝ ln n has a slope 0.8 per unit ln n, its interval clear of 0
    assert ln_certificate.delta_slope.low > 0.7 and ln_certificate.delta_slope.high < 0.9


def test_delta_growing_like_ln_n_is_not_called_bounded(tmp_path):
    """Today's δ rule (1.5× over the last 4×) accepted δ ∝ ln n: 14/12 = 1.17×. Any certificate
    consistent with such δ (δ <= C) that grows with it is outside the hypothesis."""
    (c,) = checks_of(tmp_path, [lambda n: {"delta": math.log(n), "certificate": 1.5 * math.log(n)}])
    assert not c.levels_off and c.outcome == tt.OUTSIDE
    assert c.verdict().startswith("outside the hypothesis")


def test_a_bounded_model_whose_delta_still_climbs_holds(tmp_path):
    """The case the issue quotes: index + LayerNorm on needle inputs, n <= 2048, sup δ 2.29× over the
    last 4× (the old rule said "hypothesis FAILS"); LayerNorm makes the certificate constant."""
    ns = tuple(2 ** k for k in range(4, 12))
    (c,) = checks_of(tmp_path, [lambda n: {"delta": 2.29 ** (math.log2(n / 512) / 2) if n > 512 else 1.0,
                                           "certificate": 71.0}], ns=ns)
    assert float(c.sup_delta[-1].max() / c.sup_delta[c.start].max()) == pytest.approx(2.29)
    assert c.holds, c.verdict()


def test_tolerance_boundary_and_the_grid_s_own_n(tmp_path):
    """A rise of exactly 10% holds, 11% does not; the last 4× starts at the largest n on the grid at
    most n_max/4 (256 here: 512 is not on the grid) and the label says so."""
    ns = (16, 64, 256, 2048)
    at, over = checks_of(tmp_path, [lambda n: {"certificate": 10.0 * (1.10 if n == 2048 else 1.0)},
                                    lambda n: {"certificate": 10.0 * (1.11 if n == 2048 else 1.0)}], ns=ns)
    assert at.holds and not over.levels_off
    assert "over n 256..2048" in at.verdict() and "over n 256..2048" in over.verdict()
    assert "[n 16..2048]" in at.verdict()


def test_falling_certificate_and_the_supremum_over_shorter_n(tmp_path):
    """A measured certificate that jumps about (R taken on each input) is taken as its supremum over
    n' <= n, so an early maximum does not make it 'grow' later, and a later one does."""
    early, late = checks_of(tmp_path, [lambda n: {"certificate": 30.0 if n == 64 else 10.0 + (n % 3)},
                                       lambda n: {"certificate": 30.0 if n == 16384 else 10.0}])
    assert early.holds and not late.levels_off


def test_bug_checks_and_lemma_violations_are_inconsistent(tmp_path):
    lemma, over_certificate, over_bound, no_beta = checks_of(tmp_path, [
        lambda n: {"lemma_violations": 1 if n == 256 else 0},
        lambda n: {"delta": 12.0},                                  # δ > certificate 10
        lambda n: {"certificate": 1.0, "delta": 1.0, "n_alpha": 5.0},   # k·α_max > e^1
        lambda n: {"beta": math.nan},                               # a sparse normaliser
    ])
    for c in (lemma, over_certificate, over_bound):
        assert c.outcome == tt.INCONSISTENT and not c.holds, c.verdict()
    assert "1 lemma violation" in lemma.verdict()
    assert "delta EXCEEDS the certificate" in over_certificate.verdict()
    assert "EXCEEDS exp(beta*certificate)" in over_bound.verdict()
    assert no_beta.outcome == tt.NOT_CHECKED and not no_beta.holds and not no_beta.levels_off


def test_rate_outcomes_and_the_bound_not_forcing_it_yet(tmp_path):
    noisy, sharp = checks_of(tmp_path, [
        lambda n: {"n_alpha": 2.0 if int(math.log2(n)) % 2 else 10.0},    # steady but scattered: a wide interval
        lambda n: {"delta": 30.0, "certificate": 40.0, "n_alpha": n ** 0.5 * wobble(n)},   # e^30 > n
    ])
    assert noisy.holds and noisy.rate_outcome == tt.RATE_INCONCLUSIVE, noisy.verdict()
    assert sharp.holds and sharp.rate_outcome == tt.RATE_SLOWER
    assert "not forced yet" in sharp.verdict() and not sharp.bound_forces_rate


def test_files_without_the_certificate_are_refused_and_the_table(tmp_path):
    old = tmp_path / "old.h5"
    synthetic.write_result(old, "transformer-dispersion", [
        dict(checkpoint="none", layers=1, heads=1, d_model=8, vocab=8, causal=1, positional="none", layer_norm=1,
             init_scale=1.0, max_length=1024, normaliser="softmax", input="uniform", samples=1, seed=1, n=n)
        for n in (16, 64)], {"lemma_violations": np.zeros(2, dtype=np.int64), "tokens": np.array([16.0, 64.0])},
        arrays={i: {"delta_max": np.ones((1, 1)), "beta_max": np.ones((1, 1))} for i in range(2)})
    with pytest.raises(common.ResultFileError, match="predates the theorem's certificate"):
        tt.check_models(common.load_result(old, tt.EXPERIMENT))
    p = subprocess.run([sys.executable, os.path.join(ANALYSIS_DIR, "transformer_theorem.py"), str(old)],
                       capture_output=True, text=True)
    assert p.returncode == 1 and "rerun sharp-transformer-dispersion" in p.stderr
    # the table: the random file and the boundary control beside it, one row per model
    synthetic.write_transformer_dispersion(tmp_path / tt.INPUT_FILE)
    synthetic.write_theorem_cases(tmp_path / tt.BESIDE[0], [lambda n: {"beta": math.log(n) / math.log(16)}])
    (written,) = tt.make(str(tmp_path / tt.INPUT_FILE), str(tmp_path / "out"))
    text = open(written, encoding="utf-8").read()
    assert text.count("| transformer-dispersion.h5 |") == 3 and text.count("| transformer-dispersion-boundary.h5 |") == 1
    assert text.count(f"| {tt.OUTSIDE} |") == 3 and text.count(f"| {tt.HOLDS} |") == 1
