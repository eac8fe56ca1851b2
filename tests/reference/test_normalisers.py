"""The numpy reference (normalisers.py) against closed forms, against itself by other routes
(alpha-entmax by bisection against the sort-based sparsemax and 1.5-entmax; masked rows against
their unmasked sub-rows) and its backward against central finite differences. Run by ctest
(reference_pytest)."""
import math
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import normalisers as R  # noqa: E402

NORMALISERS = ["softmax", "softmax:beta=0.25", "softmax:theta=0.5", "adaptive", "ssmax:s=1", "ssmax:s=0.43",
         "topk:k=1", "topk:k=3", "argmax", "sparsemax", "entmax15", "entmax:alpha=1.25",
         "entmax:alpha=1.5", "entmax:alpha=1.7", "entmax:alpha=2", "asentmax:b=0.5:gamma=1",
         "asentmax:b=1:gamma=0.5:delta=0.5", "stieltjes:q=1", "stieltjes:q=2.5", "stieltjes:q=4",
         "stieltjes:q=16"]


def close(a, b, rel=1e-13, abs_=1e-15):
    return np.allclose(a, b, rtol=rel, atol=abs_)


# --- forward: closed forms ------------------------------------------------------------------------

@pytest.mark.parametrize("beta", [0.25, 1.0, 4.0])
@pytest.mark.parametrize("d", [0.0, 0.3, 2.0, 30.0, 700.0])
def test_softmax_two_entries_is_a_sigmoid(beta, d):
    p = R.forward(f"softmax:beta={beta}", [d, 0.0])
    e = math.exp(-beta * d)
    assert close(p, [1.0 / (1.0 + e), e / (1.0 + e)], rel=1e-14, abs_=0)


def test_theta_is_one_over_beta_and_ssmax_is_log_n_scaling():
    z = np.random.default_rng(1).normal(0, 2, (3, 7))
    assert close(R.forward("softmax:theta=4", z), R.forward("softmax:beta=0.25", z))
    assert close(R.forward("ssmax:s=0.5", z), R.forward(f"softmax:beta={0.5 * math.log(7)}", z))


def test_extreme_softmax_logits():
    z = np.array([[1e300, -1e300, 0.0, 1e300], [-1e300, -1e300, -1e300 * (1 - 2**-50), -np.inf]])
    for spec in ["softmax", "softmax:beta=4", "adaptive", "ssmax:s=0.43", "topk:k=3"]:
        p = R.forward(spec, z)
        assert np.array_equal(p[0], [0.5, 0.0, 0.0, 0.5]), spec
        assert np.array_equal(p[1], [0.0, 0.0, 1.0, 0.0]), spec


def test_entropy_and_adaptive_beta_closed_form():
    # Two entries at distance d: H = ln(1 + e^-d) + d e^-d / (1 + e^-d).
    for d in [0.0, 0.5, 1.0, 3.0]:
        h = math.log1p(math.exp(-d)) + d * math.exp(-d) / (1 + math.exp(-d))
        assert abs(R.softmax_entropy([0.0, -d])[0] - h) < 1e-15
    # Uniform rows: H = ln n; the polynomial's published coefficients, its gate and its clamp.
    for n in [1, 2, 3, 8, 100, 1000]:
        h = math.log(n)
        assert abs(R.softmax_entropy(np.zeros(n))[0] - h) < 1e-13
        poly = -0.037 * h**4 + 0.481 * h**3 - 2.3 * h**2 + 4.917 * h - 1.791
        assert abs(R.adaptive_beta(h) - (max(poly, 1.0) if h > 0.5 else 1.0)) < 1e-14
    assert R.adaptive_beta(0.5) == 1.0 and R.adaptive_beta(0.4) == 1.0   # gated (poly(0.4) < 1 anyway)
    assert R.adaptive_beta(2.0) > 1.0 and R.adaptive_beta(8.0) == 1.0    # corrected; clamped
    # The forward uses beta(H(z)) exactly.
    z = np.array([0.0, -0.3, -1.1, -2.0, -0.7])
    b = float(R.adaptive_beta(R.softmax_entropy(z))[0])
    assert b > 1.0
    assert close(R.forward("adaptive", z), R.forward(f"softmax:beta={b!r}", z))


def test_topk_keeps_k_largest_and_breaks_ties_by_lower_index():
    z = np.array([1.0, 3.0, 2.0, 3.0, 2.0, -np.inf])
    p = R.forward("topk:k=3", z)
    e = np.exp([3.0 - 3, 3.0 - 3, 2.0 - 3])
    assert close(p, [0, e[0] / e.sum(), e[2] / e.sum(), e[1] / e.sum(), 0, 0])
    assert np.array_equal(R.forward("argmax", z), [0, 1, 0, 0, 0, 0])
    assert np.array_equal(R.forward("topk:k=1", z), [0, 1, 0, 0, 0, 0])
    assert close(R.forward("topk:k=9", z), R.forward("softmax", z))   # k >= unmasked: softmax


@pytest.mark.parametrize("d", [0.0, 0.25, 0.999, 1.0, 1.5, 40.0])
def test_sparse_two_entries(d):
    # sparsemax: p1 = clip((1 + d)/2, 0, 1).  1.5-entmax on w = (0, -d/2): p1 = ((1 + t)/2)^2 with
    # t = sqrt(2 - (d/2)^2) - ... ; directly: tau solves tau^2 + (-d/2 - tau)^2 = 1 on a 2-support.
    p = R.forward("sparsemax", [0.0, -d])
    top = min(max((1 + d) / 2, 0.0), 1.0)
    assert close(p, [top, 1 - top])
    w2 = -d / 2
    if w2 > -1:
        tau = (w2 - math.sqrt(w2 * w2 - 2 * (w2 * w2 - 1))) / 2
        want = [tau * tau, (w2 - tau) ** 2] if tau < w2 else [1.0, 0.0]
    else:
        want = [1.0, 0.0]
    assert close(R.forward("entmax15", [0.0, -d]), want)


def test_sort_based_and_bisection_agree():
    rng = np.random.default_rng(7)
    z = np.concatenate([rng.normal(0, s, (4, 50)) for s in (0.1, 1, 10)])
    assert close(R.forward("entmax:alpha=2", z), R.forward("sparsemax", z), rel=1e-12, abs_=1e-15)
    assert close(R.forward("entmax:alpha=1.5", z), R.forward("entmax15", z), rel=1e-12, abs_=1e-15)


def test_entmax_threshold_equation_and_asentmax_scale():
    rng = np.random.default_rng(3)
    z = rng.normal(0, 2, (5, 40))
    for alpha in [1.1, 1.25, 1.7]:
        p = R.forward(f"entmax:alpha={alpha}", z)
        # p^(alpha-1) = (alpha-1) z - tau on the support: the same tau for every support entry.
        with np.errstate(divide="ignore"):
            tau = np.where(p > 0, (alpha - 1) * z - p ** (alpha - 1), np.nan)
        spread = np.nanmax(tau, 1) - np.nanmin(tau, 1)
        assert np.all(spread < 1e-13 * np.maximum(1, np.nanmax(np.abs(tau), 1)))
        assert close(p.sum(1), 1.0)
    c = 1.0 + 0.5 * math.log(40) ** 1.0
    assert close(R.forward("asentmax:b=0.5:gamma=1", z), R.forward("entmax15", c * z))
    c = 0.5 + 1.0 * math.log(40) ** 0.5
    assert close(R.forward("asentmax:b=1:gamma=0.5:delta=0.5", z), R.forward("entmax15", c * z))


@pytest.mark.parametrize("g", [0.0, 0.5, 3.0, 1e5])
def test_stieltjes_closed_forms(g):
    # q = 1, two entries at distance g: 1/mu + 1/(mu + g) = 1 -> mu = ((2 - g) + sqrt(g^2 + 4))/2,
    # rationalised for g > 2 (no cancellation): mu = 2g / (sqrt(g^2 + 4) + g - 2).
    mu = ((2 - g) + math.sqrt(g * g + 4)) / 2 if g <= 2 else 2 * g / (math.sqrt(g * g + 4) + g - 2)
    assert close(R.forward("stieltjes:q=1", [g, 0.0]), [1 / mu, 1 / (mu + g)], rel=1e-14)
    # Uniform rows: mu = n^(1/q), p = 1/n.
    for q, n in [(1, 5), (4, 16), (2.5, 1000)]:
        assert close(R.forward(f"stieltjes:q={q}", np.full(n, g)), np.full(n, 1 / n))


def test_uniform_rows_and_one_entry():
    for spec in NORMALISERS:
        name = R.parse_spec(spec)[0]
        assert np.array_equal(R.forward(spec, [2.5]), [1.0]), spec
        p = R.forward(spec, np.full(6, -3.0))
        k = {"argmax": 1, "topk": int(R.parse_spec(spec)[1].get("k", 6))}.get(name, 6)
        assert close(p, [1 / k] * k + [0] * (6 - k)), spec


@pytest.mark.parametrize("spec", NORMALISERS)
def test_masked_row_equals_unmasked_sub_row(spec):
    rng = np.random.default_rng(11)
    z = rng.normal(0, 3, 30)
    keep = rng.random(30) < 0.6
    zm = np.where(keep, z, -np.inf)
    p = R.forward(spec, zm)
    assert np.all(p[~keep] == 0)
    assert close(p[keep], R.forward(spec, z[keep]), rel=1e-12)
    v = rng.normal(0, 1, 30)
    g, gp = R.backward(spec, zm, v)
    g2, gp2 = R.backward(spec, z[keep], v[keep])
    assert np.all(g[~keep] == 0)
    assert close(g[keep], g2, rel=1e-10, abs_=1e-14) and close(gp, gp2, rel=1e-10, abs_=1e-14)


def test_bad_rows_raise():
    for z in ([1.0, np.nan], [np.inf, 0.0], [-np.inf, -np.inf]):
        with pytest.raises(ValueError, match="row 0"):
            R.forward("softmax", z)
    with pytest.raises(ValueError, match="unknown"):
        R.forward("softmix", [1.0])


# --- backward: closed form and finite differences -------------------------------------------------

def test_softmax_backward_closed_form():
    # Two entries: dp1/dd = beta p1 p2 for d = z1 - z2; dp1/dbeta = d p1 p2.
    beta, d = 1.7, 0.4
    p1 = 1 / (1 + math.exp(-beta * d))
    g, gp = R.backward(f"softmax:beta={beta}", [d, 0.0], [1.0, 0.0])
    assert close(g, [beta * p1 * (1 - p1), -beta * p1 * (1 - p1)], rel=1e-14)
    assert close(gp, [d * p1 * (1 - p1)], rel=1e-14)


def with_param(spec, key, value):
    name, par = R.parse_spec(spec)
    par = dict(par, **{key: value})
    return name + "".join(f":{k}={v!r}" for k, v in par.items())


@pytest.mark.parametrize("spec", NORMALISERS)
def test_backward_against_finite_differences(spec):
    rng = np.random.default_rng(5)
    z = np.round(rng.normal(0, 1.5, (3, 9)), 3)
    z[1, 4] = -np.inf
    v = rng.normal(0, 1, z.shape)
    g, gp = R.backward(spec, z, v)
    h = 1e-6
    fd = np.zeros_like(z)
    for r in range(z.shape[0]):
        for i in range(z.shape[1]):
            if not np.isfinite(z[r, i]):
                continue
            zp, zn = z.copy(), z.copy()
            zp[r, i] += h
            zn[r, i] -= h
            fd[r, i] = v[r] @ (R.forward(spec, zp[r]) - R.forward(spec, zn[r])) / (2 * h)
    assert np.allclose(g, fd, rtol=1e-6, atol=1e-7), (g, fd)
    name, par = R.parse_spec(spec)
    for j, key in enumerate(R.parameter_names(spec)):
        x = par[key]
        fdp = [v[r] @ (R.forward(with_param(spec, key, x + h), z[r])
                       - R.forward(with_param(spec, key, x - h), z[r])) / (2 * h) for r in range(3)]
        assert np.allclose(gp[:, j], fdp, rtol=1e-6, atol=1e-7), (key, gp[:, j], fdp)


def test_adaptive_backward_includes_the_temperature_path():
    # A row whose beta(H) > 1: the gradient differs from softmax's at that fixed beta.
    z = np.array([0.0, -0.3, -1.1, -2.0, -0.7])
    v = np.array([1.0, -2.0, 0.5, 0.0, 3.0])
    b = float(R.adaptive_beta(R.softmax_entropy(z))[0])
    g_fixed, _ = R.backward(f"softmax:beta={b!r}", z, v)
    g, _ = R.backward("adaptive", z, v)
    assert np.max(np.abs(g - g_fixed)) > 1e-3
