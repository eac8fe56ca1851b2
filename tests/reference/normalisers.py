"""numpy reference of the normaliser family (docs/science.md#reference-implementation).

Float64 numpy written from the formulas (docs/science.md#temperature, #adaptive-temperature, #ssmax,
#top-k, #sparsemax, #entmax, #asentmax, #stieltjes) with other algorithms than the C++ library, so
that the two do not share mistakes:

  C++ (lib/normalisers)                          here
  blocked one-pass base-2 exp sums, fused shift  exp of beta (z - max z), numpy pairwise sums
  entropy H = ln s - t/s from running sums       H = -sum p ln p with ln p = x - ln sum exp x
  top-k: sorted insertion list / nth_element     stable argsort of -z (ties: lower index first)
  sparsemax: Michelot's pivoting                 sort, cumulative sums, largest feasible support
  1.5-entmax: Newton + closed form on a set      sort, running closed forms, largest feasible support
  alpha-entmax, Stieltjes: safeguarded Newton    bisection until the bracket is two adjacent doubles
  backward from p (p^(2-alpha), q p^(1+1/q))     implicit differentiation of sum phi(w - tau) = 1,
                                                 phi' from the threshold itself; parameter
                                                 derivatives in terms of ln(w - tau), ln(mu + g)

Every function takes logits z of shape [rows, n] (a 1-D row is promoted to one row and the result
keeps the input's rank). Masked entries are -inf: they get p = 0 and gradient 0, and normalisers
that depend on n (ssmax, asentmax, the brackets) use n = the row's number of unmasked entries. A NaN
or +inf logit or a row with every entry masked raises ValueError naming the row.

    forward(spec, z)            -> p                              [rows, n]
    backward(spec, z, v)        -> (grad_z [rows, n], grad_params [rows, P])  vector-Jacobian product
    forward_and_backward(spec, z, v) -> both from one solve, with the gradients' error scales
    parameter_names(spec)       -> the P parameters grad_params differentiates, in the C++ order
    entropy(p), adaptive_beta(h), softmax_entropy(z)

Specs are the C++ ones: softmax[:beta=B|theta=T], adaptive, ssmax:s=S, topk:k=K, argmax, sparsemax,
entmax15, entmax:alpha=A, asentmax:b=B:gamma=G[:delta=D] (asentmax_query the same on rows),
stieltjes:q=Q.
"""
import numpy as np

# name -> [(parameter, default or None if required)], in the C++ declaration order.
PARAMETERS = {
    "softmax": [("beta", 1.0)],
    "adaptive": [],
    "ssmax": [("s", None)],
    "topk": [("k", None)],
    "argmax": [],
    "sparsemax": [],
    "entmax15": [],
    "entmax": [("alpha", None)],
    "asentmax": [("b", None), ("gamma", None), ("delta", 1.0)],
    "asentmax_query": [("b", None), ("gamma", None), ("delta", 1.0)],
    "stieltjes": [("q", None)],
}
# The parameters backward() differentiates (the C++ parameter_names()).
DIFFERENTIATED = {"softmax": ["beta"], "ssmax": ["s"], "entmax": ["alpha"],
                  "asentmax": ["b", "gamma", "delta"], "stieltjes": ["q"]}


def parse_spec(spec):
    """'asentmax:b=0.5:gamma=1' -> ('asentmax', {'b': 0.5, 'gamma': 1.0, 'delta': 1.0})."""
    if isinstance(spec, tuple):
        return spec
    name, *items = [s.strip() for s in spec.split(":")]
    if name not in PARAMETERS:
        raise ValueError(f"unknown normaliser '{name}'")
    given = {}
    for item in items:
        key, _, value = item.partition("=")
        key, value = key.strip(), float(value)
        if name == "softmax" and key == "theta":
            key, value = "beta", 1.0 / value
        if key not in dict(PARAMETERS[name]):
            raise ValueError(f"normaliser '{name}': unknown parameter '{key}'")
        given[key] = value
    params = {}
    for key, default in PARAMETERS[name]:
        value = given.get(key, default)
        if value is None:
            raise ValueError(f"normaliser '{name}': missing parameter {key}")
        params[key] = value
    if name == "asentmax_query":   # on rows alone (no hidden states: w = 0) the per-query form is asentmax
        name = "asentmax"
    return name, params


def parameter_names(spec):
    return list(DIFFERENTIATED.get(parse_spec(spec)[0], []))


# --- rows --------------------------------------------------------------------------------------

class Rows:
    """Validated logits [rows, n] with their mask, max and number of unmasked entries."""

    def __init__(self, z):
        z = np.asarray(z, dtype=np.float64)
        self.one_d = z.ndim == 1
        self.z = np.atleast_2d(z)
        if self.z.ndim != 2 or self.z.shape[1] == 0:
            raise ValueError("logits must be [rows, n] with n >= 1")
        bad = np.isnan(self.z) | (self.z == np.inf)
        self.mask = self.z > -np.inf                     # unmasked entries
        self.count = self.mask.sum(axis=1)               # unmasked per row
        empty = self.count == 0
        if bad.any() or empty.any():
            row = int(np.argmax(bad.any(axis=1) | empty))
            what = "every entry is masked" if empty[row] and not bad[row].any() else "NaN or +inf logit"
            raise ValueError(f"row {row}: {what}")
        self.max = self.z.max(axis=1, keepdims=True)
        # z - max z on unmasked entries, 0 on masked ones (so products with 0 weights stay 0).
        self.zm = np.where(self.mask, self.z - self.max, 0.0)

    def out(self, a):
        return a[0] if self.one_d else a


def _where(mask, a):
    return np.where(mask, a, 0.0)


# --- softmax family ------------------------------------------------------------------------------

def _softmax(r, beta):
    """softmax(beta z) per row; beta is a scalar or [rows, 1]. Returns p and ln p (masked: -inf)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        x = np.where(r.mask, beta * r.zm, -np.inf)   # <= 0, exactly 0 at the max
        e = np.exp(x)
        s = e.sum(axis=1, keepdims=True)             # >= 1 (the max term)
        return e / s, x - np.log(s)


def entropy(p):
    """Entropy in nats per row, 0 ln 0 = 0."""
    p = np.atleast_2d(np.asarray(p, dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.where(p > 0, p * np.log(p), 0.0).sum(axis=1)


def softmax_entropy(z):
    """Entropy of softmax(z) at beta = 1 per row, as -sum p ln p with ln p = x - ln sum exp x."""
    r = Rows(z)
    p, logp = _softmax(r, 1.0)
    with np.errstate(invalid="ignore"):
        return -_where(r.mask, p * logp).sum(axis=1)


def adaptive_beta_polynomial(h):
    h = np.asarray(h, dtype=np.float64)
    return -0.037 * h**4 + 0.481 * h**3 - 2.3 * h**2 + 4.917 * h - 1.791


def adaptive_beta(h):
    """beta(H) = max(poly(H), 1) if H > 0.5 else 1 (docs/science.md#adaptive-temperature)."""
    h = np.asarray(h, dtype=np.float64)
    return np.where(h > 0.5, np.maximum(adaptive_beta_polynomial(h), 1.0), 1.0)


def _adaptive_beta_slope(h):
    """d beta / d H: 0 where the gate or the clamp is active."""
    active = (h > 0.5) & (adaptive_beta_polynomial(h) > 1.0)
    return np.where(active, -4 * 0.037 * h**3 + 3 * 0.481 * h**2 - 2 * 2.3 * h + 4.917, 0.0)


def _ssmax_beta(r, s):
    return s * np.log(r.count.astype(np.float64))[:, None]


# --- top-k ---------------------------------------------------------------------------------------

def _topk_selected(r, k):
    """Mask of the min(k, unmasked) largest entries; ties go to the lower index (stable sort)."""
    order = np.argsort(-r.z, axis=1, kind="stable")   # -(-inf) = +inf sorts last
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(r.z.shape[1])[None, :].repeat(r.z.shape[0], 0), axis=1)
    return rank < np.minimum(k, r.count)[:, None]


# --- sparse family: thresholds -------------------------------------------------------------------

def _sorted_desc(w):
    return -np.sort(-w, axis=1)


def _sparsemax_tau(w):
    """tau with sum [w - tau]_+ = 1: sort, cumulative sums, the largest support k with
    u_k > (sum_{j<=k} u_j - 1) / k; then tau from that support's own sum."""
    u = _sorted_desc(w)
    k = np.arange(1, w.shape[1] + 1, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        cs = np.cumsum(u, axis=1)
        feasible = u > (cs - 1.0) / k
    size = w.shape[1] - np.argmax(feasible[:, ::-1], axis=1)        # largest feasible k
    support = np.arange(w.shape[1])[None, :] < size[:, None]
    return (_where(support, u).sum(axis=1, keepdims=True) - 1.0) / size[:, None]


def _entmax15_tau(w):
    """tau with sum [w - tau]_+^2 = 1: on the k largest entries tau_k = mean_k - sqrt((1 - M2_k)/k)
    (M2 = sum of squared deviations); the support is the largest k with tau_k <= u_k. tau is then
    recomputed on that support with a two-pass M2 (no cancellation of sum u^2 - k mean^2)."""
    u = _sorted_desc(w)
    k = np.arange(1, w.shape[1] + 1, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):   # rows of +-1e300: those k are infeasible
        mean = np.cumsum(u, axis=1) / k
        m2 = np.cumsum(u * u, axis=1) - k * mean * mean
        disc = (1.0 - m2) / k
        tau = mean - np.sqrt(np.maximum(disc, 0.0))
        feasible = (disc >= 0) & (tau <= u) & np.isfinite(u)
    size = w.shape[1] - np.argmax(feasible[:, ::-1], axis=1)
    support = np.arange(w.shape[1])[None, :] < size[:, None]
    cnt = size[:, None].astype(np.float64)
    mean = _where(support, u).sum(axis=1, keepdims=True) / cnt
    with np.errstate(over="ignore"):
        m2 = _where(support, (u - mean) ** 2).sum(axis=1, keepdims=True)
    return mean - np.sqrt(np.maximum(1.0 - m2, 0.0) / cnt)


def _bisect_decreasing(f, lo, hi, max_iterations=2100):
    """Per-row root of decreasing f on [lo, hi] (f(lo) >= 0 >= f(hi)), halving until lo and hi are
    adjacent doubles (machine precision). Returns the end with the smaller |f|."""
    lo, hi = lo.astype(np.float64).copy(), hi.astype(np.float64).copy()
    for _ in range(max_iterations):
        mid = lo + 0.5 * (hi - lo)
        open_ = (mid > lo) & (mid < hi)
        if not open_.any():
            break
        up = f(mid) >= 0
        lo = np.where(open_ & up, mid, lo)
        hi = np.where(open_ & ~up, mid, hi)
    flo, fhi = f(lo), f(hi)
    return np.where(np.abs(flo) <= np.abs(fhi), lo, hi)


def _entmax_tau(w, alpha, count):
    """alpha-entmax threshold by bisection on [-1, -n^(1-alpha)] (max w = 0)."""
    r = 1.0 / (alpha - 1.0)
    w = w[:, (w > -1.0).any(axis=0)]   # tau >= -1: entries <= -1 in every row never count

    def f(t):
        with np.errstate(invalid="ignore"):
            return (np.maximum(w - t, 0.0) ** r).sum(axis=1, keepdims=True) - 1.0

    lo = np.full((w.shape[0], 1), -1.0)
    hi = -(count.astype(np.float64)[:, None] ** (1.0 - alpha))
    return _bisect_decreasing(f, lo, hi)


def _stieltjes_mu(g, q, count):
    """mu >= 1 with sum (mu + g)^(-q) = 1 (g = max z - z >= 0, +inf masked), by bisection on
    [1, n^(1/q)]."""
    g = g[:, np.isfinite(g).any(axis=0)]   # columns masked in every row add 0

    def f(mu):
        return ((mu + g) ** -q).sum(axis=1, keepdims=True) - 1.0

    lo = np.ones((g.shape[0], 1))
    hi = count.astype(np.float64)[:, None] ** (1.0 / q)
    return _bisect_decreasing(f, lo, hi)


# --- the solved forward: p and what the backward needs -------------------------------------------

def _solve(spec, z):
    name, par = parse_spec(spec)
    r = Rows(z)
    s = {"name": name, "par": par, "rows": r}
    if name in ("softmax", "ssmax", "adaptive"):
        if name == "softmax":
            beta = par["beta"]
        elif name == "ssmax":
            beta = _ssmax_beta(r, par["s"])
        else:
            q, logq = _softmax(r, 1.0)
            with np.errstate(invalid="ignore"):
                h = -_where(r.mask, q * logq).sum(axis=1)
            beta = adaptive_beta(h)[:, None]
            s.update(q=q, logq=logq, h=h)
        s["beta"] = np.broadcast_to(np.asarray(beta, dtype=np.float64), (r.z.shape[0], 1))
        s["p"], _ = _softmax(r, s["beta"])
        s["support"] = r.mask
    elif name in ("topk", "argmax"):
        k = 1 if name == "argmax" else int(par["k"])
        sel = _topk_selected(r, k)
        zs = Rows(np.where(sel, r.z, -np.inf))
        s["p"], _ = _softmax(zs, 1.0)
        s["support"] = sel
        s["k"] = k
    elif name in ("sparsemax", "entmax15", "entmax", "asentmax"):
        alpha = {"sparsemax": 2.0, "entmax15": 1.5, "asentmax": 1.5}.get(name, par.get("alpha"))
        c = np.ones((r.z.shape[0], 1))
        if name == "asentmax":
            log_n = np.log(r.count.astype(np.float64))[:, None]
            with np.errstate(divide="ignore", invalid="ignore"):
                c = np.where(r.count[:, None] > 1, par["delta"] + par["b"] * log_n ** par["gamma"], 1.0)
            s["log_n"] = log_n
        w = np.where(r.mask, (alpha - 1.0) * (c * r.zm), -np.inf)   # max w = 0
        if name == "sparsemax":
            tau = _sparsemax_tau(w)
        elif name in ("entmax15", "asentmax"):
            tau = _entmax15_tau(w)
        else:
            tau = _entmax_tau(w, alpha, r.count)
        rexp = 1.0 / (alpha - 1.0)
        u = np.maximum(w - tau, 0.0)                                # -inf - tau -> 0
        p = u ** rexp
        if name == "entmax":
            p = p / p.sum(axis=1, keepdims=True)                    # absorbs the bracket's width
        s.update(p=p, alpha=alpha, c=c, w=w, tau=tau, u=u, support=u > 0)
    elif name == "stieltjes":
        qx = par["q"]
        g = np.where(r.mask, r.max - r.z, np.inf)
        mu = _stieltjes_mu(g, qx, r.count)
        x = mu + g
        t = x ** -qx
        s.update(p=t / t.sum(axis=1, keepdims=True), x=x, mu=mu, support=r.mask)
    else:
        raise ValueError(f"unknown normaliser '{name}'")
    return s


def forward(spec, z):
    """p = normaliser(z) per row, float64."""
    s = _solve(spec, z)
    return s["rows"].out(s["p"])


def _projection_vjp(phi_prime, v):
    """VJP of p = phi(w - tau(w)) with sum p = 1 w.r.t. w: implicit differentiation gives
    dtau/dw_j = phi'_j / sum phi', so grad_w = phi' (v - vbar), vbar = sum psi v, psi = phi'/sum phi'.
    v - vbar cancels when v_i is near the mean, so vbar is formed in long double (64-bit mantissa):
    the result is then accurate to a few ulp of itself, not of v. Returns grad_w, vbar (long double)
    and the magnitude of the terms, phi' (|v| + |vbar|), for error scales."""
    phi = phi_prime.astype(np.longdouble)
    psi = phi / phi.sum(axis=1, keepdims=True)
    vbar = (psi * v).sum(axis=1, keepdims=True)
    grad = (phi * (v - vbar)).astype(np.float64)
    return grad, vbar, phi_prime * (np.abs(v) + np.abs(vbar.astype(np.float64)))


def _dot(a, b):
    """Row sums of a * b in long double, returned as float64 [rows]."""
    return (np.asarray(a, dtype=np.longdouble) * b).sum(axis=1).astype(np.float64)


def forward_and_backward(spec, z, v):
    """forward() and backward(scales=True) from one solve: (p, grad_z, grad_params, grad_z_scale,
    grad_params_scale)."""
    s = _solve(spec, z)
    return (s["rows"].out(s["p"]),) + _backward(s, v, True)


def backward(spec, z, v, scales=False):
    """Vector-Jacobian product at z: grad_z = J^T v [rows, n] and grad_params [rows, P] (dL/dθ for
    L = <v, p>, θ = parameter_names(spec)). With scales=True also returns, for every entry, the sum
    of the magnitudes of the terms it is formed from (where the true value is much smaller than
    that, any double computation of it has an absolute error of a few ulp of the scale, not of itself):
    (grad_z, grad_params, grad_z_scale, grad_params_scale)."""
    return _backward(_solve(spec, z), v, scales)


def _backward(s, v, scales):
    r, name, par = s["rows"], s["name"], s["par"]
    v = np.atleast_2d(np.asarray(v, dtype=np.float64))
    v = _where(r.mask, v)
    rows = r.z.shape[0]
    gp = np.zeros((rows, len(DIFFERENTIATED.get(name, []))))
    gp_scale = np.zeros_like(gp)
    if name in ("softmax", "ssmax", "adaptive", "topk", "argmax"):
        # p = exp(w - lse(w)) on the support, w = beta z: phi = exp, phi' = p.
        gw, _, gw_scale = _projection_vjp(_where(s["support"], s["p"]), v)
        beta = s.get("beta", 1.0)
        gz, gz_scale = beta * gw, beta * gw_scale
        dbeta = _dot(gw, r.zm)                                   # dw/dbeta = z (shift-invariant)
        dbeta_scale = (gw_scale * np.abs(r.zm)).sum(axis=1)
        if name == "softmax":
            gp[:, 0], gp_scale[:, 0] = dbeta, dbeta_scale
        elif name == "ssmax":
            log_n = np.log(r.count.astype(np.float64))
            gp[:, 0], gp_scale[:, 0] = dbeta * log_n, dbeta_scale * log_n
        elif name == "adaptive":
            # beta = beta(H(z)), H = -sum q ln q, q = softmax(z): dH/dz_j = -q_j (ln q_j + H).
            q, logq, h = s["q"], s["logq"], s["h"]
            with np.errstate(invalid="ignore"):
                dh = -_where(r.mask, q * (logq.astype(np.longdouble) + h[:, None]))
                dh_scale = _where(r.mask, q * (np.abs(logq) + h[:, None]))
            slope = _adaptive_beta_slope(h)
            gz = gz + (dbeta * slope)[:, None] * dh.astype(np.float64)
            gz_scale = gz_scale + (np.abs(slope) * dbeta_scale)[:, None] * dh_scale
    elif name in ("sparsemax", "entmax15", "entmax", "asentmax"):
        alpha, u, c = s["alpha"], s["u"], s["c"]
        rexp = 1.0 / (alpha - 1.0)
        sup = s["support"]
        with np.errstate(divide="ignore", invalid="ignore"):
            phi = _where(sup, rexp * u ** (rexp - 1.0))         # d/du u^r
        gw, _, gw_scale = _projection_vjp(phi, v)
        gz, gz_scale = (alpha - 1.0) * c * gw, (alpha - 1.0) * c * gw_scale   # w = (alpha-1) c (z - max z)
        if name == "entmax":
            # p = u^r, u = (alpha - 1) zm - tau, r = 1/(alpha - 1), dr/dalpha = -r^2:
            # d ln p/dalpha = -r^2 ln u + r (zm - tau_a)/u, with sum dp/dalpha = 0 fixing tau_a.
            p = s["p"]
            with np.errstate(divide="ignore", invalid="ignore"):
                logu = _where(sup, np.log(u))
                inv_u = _where(sup, 1.0 / u)
            tau_a = (_dot(p, -rexp**2 * logu + rexp * r.zm * inv_u) / _dot(p, rexp * inv_u))[:, None]
            terms = p * (-rexp**2 * logu + rexp * (r.zm - tau_a) * inv_u)
            gp[:, 0] = _dot(_where(sup, v), terms)
            gp_scale[:, 0] = (np.abs(v) * p * (rexp**2 * np.abs(logu) + rexp * (np.abs(r.zm) + np.abs(tau_a)) * inv_u)).sum(axis=1)
        if name == "asentmax":
            # y = c z: dL/dc = sum_i (dL/dy_i) z_i; c = delta + b L^gamma, L = ln n.
            multi = r.count > 1
            dc = np.where(multi, (alpha - 1.0) * _dot(gw, r.zm), 0.0)
            dc_scale = np.where(multi, (alpha - 1.0) * (gw_scale * np.abs(r.zm)).sum(axis=1), 0.0)
            log_n = s["log_n"][:, 0]
            with np.errstate(divide="ignore", invalid="ignore"):
                lg = np.where(multi, log_n ** par["gamma"], 0.0)
                lnln = np.log(np.where(multi, log_n, 1.0))
            gp[:, 0], gp[:, 1], gp[:, 2] = dc * lg, dc * par["b"] * lg * lnln, dc
            gp_scale[:, 0], gp_scale[:, 1], gp_scale[:, 2] = dc_scale * lg, dc_scale * par["b"] * lg * np.abs(lnln), dc_scale
            gz = np.where(multi[:, None], gz, 0.0)
            gz_scale = np.where(multi[:, None], gz_scale, 0.0)
    elif name == "stieltjes":
        # p_i = (lambda - z_i)^(-q): phi'(z_i) = q (mu + g_i)^(-q-1), from mu itself.
        qx, x, p = par["q"], s["x"], s["p"]
        phi = _where(r.mask, qx * x ** (-qx - 1.0))
        gz, _, gz_scale = _projection_vjp(phi, v)
        # ln p = -q ln(mu + g): d ln p/dq = -ln(mu + g) - q mu_q/(mu + g), sum dp/dq = 0 fixes mu_q.
        with np.errstate(invalid="ignore"):
            logx = _where(r.mask, np.log(x))
            inv_x = _where(r.mask, 1.0 / x)
        mu_q = (-_dot(p, logx) / (qx * _dot(p, inv_x)))[:, None]
        gp[:, 0] = _dot(v * p, -logx - qx * mu_q * inv_x)
        gp_scale[:, 0] = (np.abs(v) * p * (np.abs(logx) + qx * np.abs(mu_q) * inv_x)).sum(axis=1)
    gz = _where(r.mask, gz) + 0.0   # no -0.0 (keeps the golden file's zeros compressible)
    gz_scale = _where(r.mask, gz_scale)
    if scales:
        return tuple(a[0] if r.one_d else a for a in (gz, gp, gz_scale, gp_scale))
    return r.out(gz), (gp[0] if r.one_d else gp)


__all__ = ["forward", "backward", "forward_and_backward", "parameter_names", "parse_spec", "entropy", "softmax_entropy",
           "adaptive_beta", "adaptive_beta_polynomial", "PARAMETERS"]
