"""Small synthetic result files that follow the "sharp/1" schema exactly (variable-length UTF-8
strings as the C++ writer makes them, int64 / float64 columns, every root attribute), with
metrics computed from the closed forms of docs/science.md (from #dispersion-lemma to #entropy-falls-with-beta) so that figures drawn from them look like the
real ones. Used by the tests; also handy by hand:

    /usr/bin/python3 analysis/tests/synthetic.py OUTDIR   # writes every file into OUTDIR
"""
from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import sys

import h5py
import numpy as np

STR = h5py.string_dtype("utf-8")


@contextlib.contextmanager
def edited(path):
    """The file open for writing, its `checksum` stamped again afterwards (when it has one): a test
    that changes a file to see another refusal is not stopped at the checksum first."""
    with h5py.File(path, "a") as f:
        yield f
        if "checksum" in f.attrs:
            import common
            f.attrs["checksum"] = common.data_checksum(f)


def point_id(experiment: str, params: dict) -> str:
    """16 hex chars; stands in for the C++ hash (any stable function of the parameters will do)."""
    text = experiment + "|" + "|".join(f"{k}={params[k]!r}" for k in sorted(params))
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def root_attributes(experiment: str, command_line: str) -> dict:
    return {
        "schema": "sharp/1", "experiment": experiment, "complete": np.int64(1),
        "fingerprint": "0123456789abcdef", "git_sha": "synthetic", "git_dirty": np.int64(0),
        "command_line": command_line, "created": "2025-01-01T00:00:00Z",
        "finished": "2025-01-01T00:00:01Z", "host": "test", "mpi_size": np.int64(1),
        "threads": np.int64(1), "compiler": "none", "build_type": "Release",
        "isa": "x86-64-v3", "versions": "synthetic", "notes": "synthetic data for tests",
    }


def write_result(path, experiment: str, grid: list, metrics: dict, arrays: dict | None = None,
                 attrs: dict | None = None) -> list:
    """grid: [P] dicts of parameters (same keys); metrics: name -> [P] values; arrays: point index
    -> {name: array}. `attrs` overrides root attributes; a value of None drops the attribute
    (for files that must be refused). Returns the point ids."""
    ids = [point_id(experiment, p) for p in grid]
    root = root_attributes(experiment, f"sharp-{experiment} (synthetic)")
    root.update(attrs or {})
    with h5py.File(path, "w") as f:
        for key, value in root.items():
            if value is not None:
                f.attrs[key] = value
        f.create_dataset("config", data="\n".join(
            f"{k} = {','.join(sorted({str(p[k]) for p in grid}))}" for k in sorted(grid[0])),
            dtype=STR)
        f.create_dataset("points/id", data=ids, dtype=STR)
        for name in grid[0]:
            column = [p[name] for p in grid]
            if isinstance(column[0], str):
                f.create_dataset(f"points/params/{name}", data=column, dtype=STR)
            elif isinstance(column[0], (int, np.integer)):
                f.create_dataset(f"points/params/{name}", data=np.array(column, dtype=np.int64))
            else:
                f.create_dataset(f"points/params/{name}", data=np.array(column, dtype=np.float64))
        for name, values in metrics.items():
            values = np.asarray(values)
            dtype = np.int64 if values.dtype.kind in "iu" else np.float64
            f.create_dataset(f"points/{name}", data=values.astype(dtype))
        for index, named in (arrays or {}).items():
            for name, value in named.items():
                f.create_dataset(f"arrays/{ids[index]}/{name}", data=np.asarray(value))
        f.create_dataset("timing/wall_seconds", data=np.full(len(grid), 0.01))
        f.create_dataset("timing/peak_rss_bytes", data=np.full(len(grid), 1 << 24, dtype=np.int64))
        if "checksum" not in (attrs or {}):  # as the runner does (attrs={"checksum": None}: an older file)
            import common
            f.attrs["checksum"] = common.data_checksum(f)
    return ids


# ---- logits of the four laws (docs/science.md#dispersion-lemma), divided by θ and shifted so the minimum is 0: z ∈ [0, r]

def scaled_logits(law: str, n: int, r: float, rng: np.random.Generator | None = None) -> np.ndarray:
    """[n] logits e/θ of spread r = δ/θ. Deterministic quantile versions of the random laws when
    no rng is given (smooth curves for the dispersion figure)."""
    if law == "one-hot":
        z = np.zeros(n)
        z[0] = r
    elif law == "two-point":
        z = np.where(np.arange(n) < (n + 1) // 2, r, 0.0)
    elif law == "uniform":
        z = rng.uniform(0.0, r, n) if rng is not None else np.linspace(0.0, r, n)
    elif law == "gaussian":
        from scipy.stats import norm
        u = rng.standard_normal(n) if rng is not None else norm.ppf((np.arange(n) + 0.5) / n)
        z = np.clip(r / 2 + u * r / 6, 0.0, r)
    else:
        raise ValueError(law)
    z[np.argmax(z)], z[np.argmin(z)] = r, 0.0  # spread exactly r
    return z


def softmax(z: np.ndarray) -> np.ndarray:
    w = np.exp(z - z.max())
    return w / w.sum()


def entropy(p: np.ndarray) -> float:
    nz = p[p > 0]
    return float(-(nz * np.log(nz)).sum())


# ---- the three experiments

def bounds_grid(ns, spreads, thetas, laws):
    return [dict(n=int(n), spread=float(d), theta=float(t), logits=law, trials=1, seed=1)
            for law, d, t, n in itertools.product(laws, spreads, thetas, ns)]


def write_bounds(path, ns=tuple(2 ** k for k in range(1, 15)), spreads=(1.0, 5.69),
                 thetas=(0.5, 1.0), laws=("uniform", "one-hot", "two-point", "gaussian"),
                 attrs: dict | None = None, violate: int = 0):
    """A "bounds" file; `violate` > 0 marks that many points as violating (for warning tests)."""
    grid = bounds_grid(ns, spreads, thetas, laws)
    cols = {k: [] for k in ("alpha_max", "alpha_min", "bound_upper", "bound_lower",
                            "worst_case_alpha_max", "n_alpha_max", "entropy", "violations")}
    for p in grid:
        n, r = p["n"], p["spread"] / p["theta"]
        alpha = softmax(scaled_logits(p["logits"], n, r))
        cols["alpha_max"].append(alpha.max())
        cols["alpha_min"].append(alpha.min())
        cols["bound_upper"].append(np.exp(r) / n)
        cols["bound_lower"].append(np.exp(-r) / n)
        cols["worst_case_alpha_max"].append(1.0 / (1.0 + (n - 1) * np.exp(-r)))
        cols["n_alpha_max"].append(n * alpha.max())
        cols["entropy"].append(entropy(alpha))
        cols["violations"].append(0)
    cols["violations"] = np.array(cols["violations"], dtype=np.int64)
    cols["violations"][:violate] = 1
    return write_result(path, "bounds", grid, cols, attrs=attrs)


def write_weight_bound(path, ns=(16, 256), d_models=(16, 64), d_head=16, weight_scales=(1.0,),
                       input_scale=1.0, trials=100, seed=7):
    rng = np.random.default_rng(seed)
    grid = [dict(n=int(n), d_model=int(dm), d_head=int(d_head), weight_scale=float(ws),
                 input_scale=float(input_scale), trials=int(trials), seed=int(seed))
            for n, dm, ws in itertools.product(ns, d_models, weight_scales)]
    cols = {k: [] for k in ("delta", "bound", "ratio", "ratio_max", "violations")}
    arrays = {}
    for index, p in enumerate(grid):
        dm, dh = p["d_model"], p["d_head"]
        delta, bound = np.empty(trials), np.empty(trials)
        for t in range(trials):
            q = rng.normal(0, p["weight_scale"] / np.sqrt(dm), (dh, dm))
            k = rng.normal(0, p["weight_scale"] / np.sqrt(dm), (dh, dm))
            y = rng.normal(0, input_scale, dm)
            x = rng.normal(0, input_scale, (p["n"], dm))
            e = x @ k.T @ (q @ y)  # [n] logits (Q y)ᵀ(K x_i), docs/science.md#weight-norm-bound
            delta[t] = e.max() - e.min()
            bound[t] = (2 * np.linalg.norm(q, 2) * np.linalg.norm(k, 2) * np.linalg.norm(y)
                        * np.linalg.norm(x, axis=1).max())
        ratio = delta / bound
        arrays[index] = {"ratio": ratio, "delta": delta, "bound": bound}
        cols["delta"].append(delta.mean())
        cols["bound"].append(bound.mean())
        cols["ratio"].append(ratio.mean())
        cols["ratio_max"].append(ratio.max())
        cols["violations"].append(int((ratio > 1).sum()))
    cols["violations"] = np.array(cols["violations"], dtype=np.int64)
    return write_result(path, "weight-bound", grid, cols, arrays=arrays)


def entropy_and_slope(z: np.ndarray, beta: float):
    """H(softmax(βz)) and its closed-form derivative dH/dβ = −β·Var_p(z) (docs/science.md#entropy-falls-with-beta)."""
    p = softmax(beta * z)
    mean = (p * z).sum()
    return entropy(p), -beta * (p * (z - mean) ** 2).sum()


def write_entropy_temperature(path, ns=(16, 256, 4096), laws=("uniform", "gaussian", "two-point"),
                              spread=4.0, beta_min=0.01, beta_max=5.0, beta_steps=41, seed=3):
    grid = [dict(n=int(n), logits=law, spread=float(spread), beta_min=float(beta_min),
                 beta_max=float(beta_max), beta_steps=int(beta_steps), seed=int(seed))
            for law, n in itertools.product(laws, ns)]
    betas = np.geomspace(beta_min, beta_max, beta_steps)
    cols = {"monotone": [], "max_rel_error": []}
    arrays = {}
    for index, p in enumerate(grid):
        z = scaled_logits(p["logits"], p["n"], spread, np.random.default_rng(seed + index))
        h, slope, fd = np.empty(beta_steps), np.empty(beta_steps), np.empty(beta_steps)
        for s, b in enumerate(betas):
            h[s], slope[s] = entropy_and_slope(z, b)
            step = 1e-4 * b
            h_plus, h_minus = entropy_and_slope(z, b + step)[0], entropy_and_slope(z, b - step)[0]
            fd[s] = (h_plus - h_minus) / (2 * step)
        arrays[index] = {"beta": betas, "entropy": h, "dH_dbeta_fd": fd, "dH_dbeta": slope}
        cols["monotone"].append(int(np.all(np.diff(h) < 0)))
        cols["max_rel_error"].append(float(np.max(np.abs(fd - slope) / np.abs(slope))))
    cols["monotone"] = np.array(cols["monotone"], dtype=np.int64)
    return write_result(path, "entropy-temperature", grid, cols, arrays=arrays)


# ---- max retrieval (docs/science.md#max-retrieval): eval-max and fit-adaptive files

PAPER_N = (16, 64, 256, 512, 1024, 2048, 4096, 16384)  # the paper's accuracy table, docs/science.md#published-numbers
PAPER_COEFFICIENTS = (-0.037, 0.481, -2.3, 4.917, -1.791)  # docs/science.md#adaptive-temperature, highest degree first


def adaptive_beta(h: float) -> float:
    """docs/science.md#adaptive-temperature: max(β(H), 1) when H > 0.5, else 1."""
    return max(float(np.polyval(PAPER_COEFFICIENTS, h)), 1.0) if h > 0.5 else 1.0


def wilson(correct: int, total: int, z: float = 1.959963984540054):
    """Wilson score interval, written out independently of analysis/max_retrieval.py."""
    p = correct / total
    centre = (2 * correct + z * z) / (2 * (total + z * z))
    half = z * np.sqrt(total * p * (1 - p) + z * z / 4) / (total + z * z)
    return centre - half, centre + half


def eval_max_point(n: int, train_seed: int, seed: int, samples: int, normalisers, map_samples: int,
                   map_items: int):
    """Per-sample results of one (model, n, seed) point. Sets depend on (seed, n) only, as in
    sharp-eval-max; the model's logit scale (its sharpness) and its errors depend on train_seed.
    Logits e_i = scale·priority_i; adaptive applies the β of docs/science.md#adaptive-temperature to the same logits."""
    sets = np.random.default_rng([seed, n])
    luck = np.random.default_rng([train_seed, seed, n])
    scale = 50.0 + 5.0 * train_seed
    out = {f"{what}.{x}": [] for x in normalisers
           for what in ("correct", "entropy", "beta", "weight_on_max", "map")}
    out["labels"] = sets.integers(0, 10, samples)
    draws = luck.uniform(0, 1, samples)  # one draw per set, shared by the normalisers: paired
    for s in range(samples):
        priority = sets.uniform(0, 1, n)
        order = np.argsort(-priority, kind="stable")
        z = scale * priority
        h1 = entropy(softmax(z))
        for x in normalisers:
            beta = adaptive_beta(h1) if x == "adaptive" else 1.0
            p = softmax(beta * z)
            w = float(p[order[0]])
            out[f"correct.{x}"].append(int(draws[s] < 0.1 + 0.9 * w ** 0.3))
            out[f"entropy.{x}"].append(entropy(p))
            out[f"beta.{x}"].append(beta)
            out[f"weight_on_max.{x}"].append(w)
            if s < map_samples:
                out[f"map.{x}"].append(p[order[:map_items]])
    arrays = {}
    for name, values in out.items():
        if name.startswith("map.") and map_samples == 0:
            continue  # sharp-eval-max with --map-samples 0 stores no maps
        if name.startswith("map."):
            arrays[name] = np.array(values, dtype=np.float64).reshape(map_samples, -1)
        elif name.startswith("correct.") or name == "labels":
            arrays[name] = np.asarray(values, dtype=np.int64)
        else:
            arrays[name] = np.asarray(values, dtype=np.float64)
    return arrays


def write_eval_max(path, ns=(16, 64, 256, 1024), train_seeds=(1, 2, 3), seeds=(1,), samples=48,
                   normalisers=("softmax", "adaptive"), map_samples=8, map_items=16, train_n=16,
                   attrs: dict | None = None, train_normaliser: dict | None = None):
    """An "eval-max" file: one point per (checkpoint, n, seed), every normaliser inside each point
    on the same samples. Checkpoints are "train-max.h5#<id>" of made-up training points.
    train_normaliser {train seed: spec}: the /points/params/train_normaliser column sharp-eval-max
    derives from each checkpoint (absent when None, as in files of older versions)."""
    checkpoints = {s: "train-max.h5#" + point_id("train-max", {"seed": s}) for s in train_seeds}
    grid = [dict(checkpoint=checkpoints[t], n=int(n), normaliser="+".join(normalisers),
                 samples=int(samples), chunk=512, map_samples=int(map_samples),
                 map_items=int(map_items), seed=int(e))
            for t, n, e in itertools.product(train_seeds, ns, seeds)]
    models = [t for t, _, _ in itertools.product(train_seeds, ns, seeds)]
    if train_normaliser is not None:
        for p, t in zip(grid, models):
            p["train_normaliser"] = train_normaliser[t]
    cols: dict = {"train_n": [], "train_seed": []}
    arrays = {}
    for index, (p, t) in enumerate(zip(grid, models)):
        a = eval_max_point(p["n"], t, p["seed"], samples, normalisers, map_samples,
                           min(map_items, p["n"]))
        arrays[index] = a
        cols["train_n"].append(train_n)
        cols["train_seed"].append(t)
        # The error taken apart: the highest logit on the true maximum less often as n grows.
        cols.setdefault("ranking_rate", []).append(min(1.0, 4.0 / float(np.sqrt(p["n"]))))
        cols.setdefault("oracle_rate", []).append(1.0)
        for x in normalisers:
            k = int(a[f"correct.{x}"].sum())
            low, high = wilson(k, samples)
            for name, value in (("accuracy", k / samples), ("ci_low", low), ("ci_high", high),
                                ("correct", k), ("entropy", a[f"entropy.{x}"].mean()),
                                ("weight_on_max", a[f"weight_on_max.{x}"].mean()),
                                ("beta", a[f"beta.{x}"].mean())):
                cols.setdefault(f"{name}.{x}", []).append(value)
    cols = {k: np.asarray(v, dtype=np.int64 if k.startswith("correct.") or k.startswith("train_")
                          else np.float64) for k, v in cols.items()}
    return write_result(path, "eval-max", grid, cols, arrays=arrays, attrs=attrs)


def write_train_max(path, seeds=(1, 2, 3), steps=4000, attrs: dict | None = None) -> dict:
    """A "train-max" file of one softmax model per seed (its training parameters only):
    {seed: checkpoint reference "train-max.h5#<id>"}."""
    grid = [dict(normaliser="softmax", train_n=16, steps=int(steps), seed=int(t)) for t in seeds]
    ids = write_result(path, "train-max", grid, {"final_accuracy": np.full(len(grid), 0.99)},
                       attrs=attrs)
    return {t: f"{os.path.basename(str(path))}#{i}" for t, i in zip(seeds, ids)}


def write_eval_max_exact(path, accuracy: dict, samples=200, ns=PAPER_N, train_n=16, attrs=None,
                         checkpoints: dict | None = None):
    """An eval-max file whose models have exactly the given accuracies:
    accuracy[(normaliser, train_seed)] = fraction (the same at every n, or a dict n -> fraction).
    Per-sample 0/1 arrays are the first round(f·samples) sets right; softmax and adaptive are
    then paired so that adaptive's right sets include softmax's. `checkpoints` {seed: reference}
    (write_train_max) names real training points; made-up ones by default."""
    seeds = sorted({t for _, t in accuracy})
    normalisers = sorted({x for x, _ in accuracy}, key=["softmax", "adaptive"].index)
    grid, models = [], []
    for t in seeds:
        for n in ns:
            grid.append(dict(checkpoint=(checkpoints or {}).get(t, f"train-max.h5#{t:016x}"),
                             n=int(n),
                             normaliser="+".join(normalisers), samples=samples, chunk=512,
                             map_samples=0, map_items=16, seed=1))
            models.append(t)
    cols, arrays = {"train_n": [], "train_seed": []}, {}
    for index, (p, t) in enumerate(zip(grid, models)):
        arrays[index] = {"labels": np.zeros(samples, dtype=np.int64)}
        cols["train_n"].append(train_n)
        cols["train_seed"].append(t)
        for x in normalisers:
            f = accuracy[(x, t)]
            f = f[p["n"]] if isinstance(f, dict) else f
            k = int(round(f * samples))
            correct = (np.arange(samples) < k).astype(np.int64)
            arrays[index].update({f"correct.{x}": correct, f"entropy.{x}": np.ones(samples),
                                  f"weight_on_max.{x}": np.full(samples, 0.5),
                                  f"beta.{x}": np.ones(samples)})
            for name, value in (("accuracy", k / samples), ("correct", k), ("entropy", 1.0),
                                ("weight_on_max", 0.5), ("beta", 1.0), ("ci_low", 0.0),
                                ("ci_high", 1.0)):
                cols.setdefault(f"{name}.{x}", []).append(value)
    cols = {k: np.asarray(v, dtype=np.int64 if k.startswith(("correct.", "train_")) else float)
            for k, v in cols.items()}
    write_result(path, "eval-max", grid, cols, arrays=arrays, attrs=attrs)


def write_fit_adaptive(path, train_seeds=(1, 2, 3), ns=(16, 64, 256, 1024), samples=24,
                       beta_max=20.0, binned=False, bins=10):
    """A "fit-adaptive" file: per model, (H, β*) pairs from a smooth rising law with noise,
    clipped to [1, β_max] like the real search, our degree-4 least-squares fit, the paper's
    polynomial, and with `binned` the second protocol's per-bin β and its fit."""
    grid = [dict(checkpoint="train-max.h5#" + point_id("train-max", {"seed": t}),
                 n_min=int(min(ns)), n_max=int(max(ns)), samples=int(samples),
                 beta_max=float(beta_max), seed=1) for t in train_seeds]
    cols = {k: [] for k in ("c0", "c1", "c2", "c3", "c4", "rms_fit", "rms_paper", "pairs")}
    if binned:  # the binary writes these with the binned protocol
        cols.update({f"mean_log_p.{k}": [] for k in ("one", "paper", "fit", "binned")})
    arrays = {}
    for index, t in enumerate(train_seeds):
        rng = np.random.default_rng([t, 99])
        n_of = np.repeat(np.asarray(ns, dtype=np.float64), samples)
        h = rng.uniform(0, 1, n_of.size) * 0.45 * np.log(n_of)
        beta_star = np.clip(1 + 9 * h - 1.6 * h * h + rng.normal(0, 1.5, h.size), 1, beta_max)
        coefficients = np.polyfit(h, beta_star, 4)
        fit, paper = np.polyval(coefficients, h), np.polyval(PAPER_COEFFICIENTS, h)
        p_one = rng.uniform(0.2, 0.9, h.size)
        arrays[index] = {"n": n_of, "entropy": h, "beta_star": beta_star,
                         "p_star": np.minimum(1.0, p_one + 0.05), "p_one": p_one,
                         "fit_beta": fit, "paper_beta": paper, "coefficients": coefficients}
        if binned:
            edges = np.linspace(0, h.max() * (1 + 1e-9), bins + 1)
            which = np.digitize(h, edges) - 1
            used = [b for b in range(bins) if np.any(which == b)]
            bin_h = np.array([h[which == b].mean() for b in used])
            bin_beta = np.array([np.median(beta_star[which == b]) for b in used])
            count = np.array([int(np.sum(which == b)) for b in used], dtype=np.int64)
            arrays[index].update(bin_entropy=bin_h, bin_beta=bin_beta, bin_count=count,
                                 coefficients_binned=np.polyfit(bin_h, bin_beta, 4))
            for k, gain in (("one", 0.0), ("paper", 0.1), ("fit", 0.05), ("binned", 0.2)):
                cols[f"mean_log_p.{k}"].append(float(np.log(p_one).mean() + gain))
        for k, c in zip(("c4", "c3", "c2", "c1", "c0"), coefficients):
            cols[k].append(c)
        cols["rms_fit"].append(float(np.sqrt(np.mean((fit - beta_star) ** 2))))
        cols["rms_paper"].append(float(np.sqrt(np.mean((paper - beta_star) ** 2))))
        cols["pairs"].append(h.size)
    cols["pairs"] = np.asarray(cols["pairs"], dtype=np.int64)
    return write_result(path, "fit-adaptive", grid, cols, arrays=arrays)


TRANSFORMER_ARRAYS = ("delta_max", "beta_max", "alpha_max_last", "alpha_max_half_mean", "entropy_all_mean")


def write_transformer_dispersion(path, ns=(16, 64, 256, 1024), layers=2, heads=2,
                                 models=(("none", 1), ("alibi", 1), ("index", 0))):
    """A "transformer-dispersion" file: per model (positional, layer_norm) and n, per-head arrays
    [layers, heads] from closed forms: bounded heads keep δ = 2 + head index under a certificate
    2δ + 1 (constant); ALiBi adds its slope times n − 1 to both, index without LayerNorm n/64 per
    head to δ and twice that to the certificate; α_max of the last row = min(1, e^(δ/2)/n) (inside the
    lemma's e^δ/n), k·α_max over the half rows 3/4 of n·α_max, the mean entropy ln(n!)/n − δ/10 and
    the last row's ln n − δ/10 (never below 0)."""
    import math
    grid, cols, arrays = [], {k: [] for k in ("lemma_violations", "delta_max", "uniform_baseline",
                                                 "entropy_all_mean", "tokens", "ln_n")}, {}
    for positional, layer_norm in models:
        for n in ns:
            grid.append(dict(checkpoint="none", layers=layers, heads=heads, d_model=16, vocab=16, causal=1,
                             positional=positional, layer_norm=layer_norm, init_scale=1.0, max_length=1024,
                             normaliser="softmax", n=int(n), input="uniform", samples=1, row_arrays=0, seed=1))
            h = np.arange(layers * heads, dtype=float).reshape(layers, heads) % heads
            delta = 2.0 + h
            certificate = 2 * delta + 1
            if positional == "alibi":
                delta = delta + 2.0 ** (-8.0 * (h + 1) / heads) * (n - 1)
                certificate = certificate + 2.0 ** (-8.0 * (h + 1) / heads) * (n - 1)
            if positional == "index" and not layer_norm:
                delta = delta + (h + 1) * n / 64.0
                certificate = certificate + 2 * (h + 1) * n / 64.0
            baseline = math.lgamma(n + 1) / n
            entropy = np.maximum(0.0, baseline - delta / 10)
            alpha = np.minimum(1.0, np.exp(delta / 2) / n)
            arrays[len(grid) - 1] = {"delta_max": delta, "beta_max": np.ones_like(delta), "certificate": certificate,
                                     "alpha_max_last": alpha, "n_alpha_max_last": n * alpha,
                                     "alpha_max_half_mean": alpha, "n_alpha_max_half_mean": 0.75 * n * alpha,
                                     "entropy_all_mean": entropy,
                                     "entropy_last": np.maximum(0.0, math.log(n) - delta / 10)}
            cols["lemma_violations"].append(0)
            cols["delta_max"].append(float(delta.max()))
            cols["uniform_baseline"].append(baseline)
            cols["entropy_all_mean"].append(float(entropy.mean()))
            cols["tokens"].append(float(n))
            cols["ln_n"].append(math.log(n))
    cols["lemma_violations"] = np.asarray(cols["lemma_violations"], dtype=np.int64)
    return write_result(path, "transformer-dispersion", grid, cols, arrays=arrays)


def write_theorem_cases(path, cases, ns=tuple(2 ** k for k in range(4, 15)), heads=2):
    """A "transformer-dispersion" file of one random model per case, told apart by its seed (the
    case's index), for the theorem check's rules (analysis/transformer_theorem.py). `cases`: a list
    of functions n -> dict with any of delta, certificate, beta, n_alpha (k·α_max, of the last row and
    mean over the half rows; scalars or [1, heads] arrays) and lemma_violations; defaults δ = 3,
    certificate 10, β = 1, k·α_max = 2, 0 violations. Returns the point ids."""
    grid, arrays, violations, tokens = [], {}, [], []
    for seed, case in enumerate(cases):
        for n in ns:
            v = {"delta": 3.0, "certificate": 10.0, "beta": 1.0, "n_alpha": 2.0, "lemma_violations": 0}
            v.update(case(n))
            grid.append(dict(checkpoint="none", layers=1, heads=heads, d_model=8, vocab=8, causal=1,
                             positional="none", layer_norm=1, init_scale=1.0, max_length=1 << 16,
                             normaliser="softmax", input="uniform", samples=1, seed=seed, n=int(n)))
            per_head = {k: np.broadcast_to(np.asarray(v[k], dtype=float), (1, heads)).copy()
                        for k in ("delta", "certificate", "beta", "n_alpha")}
            arrays[len(grid) - 1] = {
                "delta_max": per_head["delta"], "certificate": per_head["certificate"], "beta_max": per_head["beta"],
                "n_alpha_max_last": per_head["n_alpha"], "n_alpha_max_half_mean": per_head["n_alpha"],
                "alpha_max_last": per_head["n_alpha"] / n, "alpha_max_half_mean": per_head["n_alpha"] / n}
            violations.append(int(v["lemma_violations"]))
            tokens.append(float(n))
    return write_result(path, "transformer-dispersion", grid,
                        {"lemma_violations": np.array(violations, dtype=np.int64), "tokens": np.array(tokens)},
                        arrays=arrays)


def write_transformer_dispersion_trained(path, train_path, ns=(64, 256, 1024), layers=2, heads=2,
                                         recipes=(("minimum", "softmax"), ("minimum", "adaptive"))):
    """A "transformer-dispersion" file of trained text models on task prompts, and the "train-text"
    file they come from (train_path): per model and budget n, prompts of about n − 3 tokens and
    (n − 14)/6 keys, δ per head 10 + head index (bounded), the answer position's entropy ln k − 2 −
    head index (never below 0), the mean row entropy 0.6·ln(n!)/n."""
    import math
    train_grid = [dict(algorithms=a, normaliser=norm, positional="rope", lengths="4+5+7+9+12+16", trace="off",
                       layers=layers, heads=heads, d_model=16, seed=1) for a, norm in recipes]
    train_ids = write_result(train_path, "train-text", train_grid, {"final_loss": np.full(len(train_grid), 0.1)})
    grid, cols, arrays = [], {k: [] for k in ("lemma_violations", "tokens", "ln_n", "uniform_baseline",
                                                 "entropy_all_mean", "task_length")}, {}
    for model in train_ids:
        for n in ns:
            grid.append(dict(checkpoint=f"{os.path.basename(train_path)}#{model}", layers=4, heads=4, d_model=128,
                             vocab=64, causal=1, positional="none", layer_norm=1, init_scale=1.0, max_length=1024,
                             normaliser="softmax", n=int(n), input="task", samples=2, row_arrays=0, seed=1))
            k = n - 3
            keys = (n - 14) // 6
            h = np.arange(layers * heads, dtype=float).reshape(layers, heads) % heads
            delta = 10.0 + h
            baseline = math.lgamma(k + 1) / k
            arrays[len(grid) - 1] = {"delta_max": delta, "beta_max": np.ones_like(delta), "certificate": 3 * delta,
                                     "alpha_max_last": np.minimum(1.0, np.exp(delta / 4) / k),
                                     "n_alpha_max_last": k * np.minimum(1.0, np.exp(delta / 4) / k),
                                     "alpha_max_half_mean": np.minimum(1.0, np.exp(delta / 4) / k),
                                     "n_alpha_max_half_mean": 0.75 * k * np.minimum(1.0, np.exp(delta / 4) / k),
                                     "entropy_last": np.maximum(0.0, math.log(k) - 2.0 - h),
                                     "entropy_all_mean": np.full_like(delta, 0.6 * baseline),
                                     "tokens": np.array([k - 1, k + 1]), "task_length": np.array([keys, keys])}
            for name, value in (("lemma_violations", 0), ("tokens", float(k)), ("ln_n", math.log(k)),
                                ("uniform_baseline", baseline), ("entropy_all_mean", 0.6 * baseline),
                                ("task_length", float(keys))):
                cols[name].append(value)
    cols["lemma_violations"] = np.asarray(cols["lemma_violations"], dtype=np.int64)
    return write_result(path, "transformer-dispersion", grid, cols, arrays=arrays)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    write_bounds(os.path.join(out, "bounds.h5"), ns=tuple(2 ** k for k in range(1, 21)))
    write_weight_bound(os.path.join(out, "weight-bound.h5"), trials=300)
    write_entropy_temperature(os.path.join(out, "entropy-temperature.h5"))
    write_eval_max(os.path.join(out, "eval-max.h5"), ns=tuple(2 ** k for k in range(4, 13)),
                   samples=128, map_samples=32)
    write_fit_adaptive(os.path.join(out, "fit-adaptive.h5"), binned=True)
    write_transformer_dispersion(os.path.join(out, "transformer-dispersion.h5"))
    print(f"wrote bounds.h5, weight-bound.h5, entropy-temperature.h5, eval-max.h5, "
          f"fit-adaptive.h5, transformer-dispersion.h5 into {out}")


def write_eval_text(path, lengths=(4, 5, 8, 16, 32), algorithms=("minimum", "binary_search"), samples=20):
    """An eval-text file: one softmax-trained model per algorithm (model ids only, no training
    file), exact match falling with length, adaptive at inference a little lower; heapsort rows not
    evaluated (the model was not trained on it)."""
    grid, metrics = [], {}
    names = ["evaluated", "trace", "in_training_lengths"] + [
        f"{m}{s}.{x}" for m in ("exact_final", "exact_answer", "element_accuracy") for s in ("", "_low", "_high")
        for x in ("trained", "adaptive")] + ["terminated.trained", "terminated.adaptive"]
    for name in names:
        metrics[name] = []
    for k, algo in enumerate(list(algorithms) + ["heapsort"]):
        for n in lengths:
            grid.append({"checkpoint": f"train-text.h5#{k:016x}", "algorithm": algo, "length": n,
                         "samples": samples, "normaliser": "trained+adaptive", "seed": 1})
            evaluated = algo != "heapsort"
            acc = {"trained": 1.0 / (1.0 + n / 8.0), "adaptive": 0.8 / (1.0 + n / 8.0)}
            for name in names:
                if name == "evaluated":
                    value = int(evaluated)
                elif name == "trace":
                    value = 0
                elif name == "in_training_lengths":
                    value = int(n <= 5)
                elif not evaluated:
                    value = float("nan")
                else:
                    value = acc[name.rsplit(".", 1)[1]]
                metrics[name].append(value)
    write_result(path, "eval-text", grid, metrics)


def write_text_files(directory, exact: dict, lengths=(4, 8, 16, 32), train_lengths=(4, 8),
                     samples=100, seen_exact: float = 1.0, trace: bool = False,
                     attrs: dict | None = None):
    """train-text.h5 with one model per trained normaliser (500 steps) and eval-text.h5
    evaluating each on its algorithms: exact[(algorithm, trained)] = (trained fraction,
    adaptive-at-inference fraction) beyond training; inside training every model's exact match
    is `seen_exact` (the competence gate's figure). `attrs`: root attributes of both files."""
    normalisers = sorted({t for _, t in exact})
    grid = [{"normaliser": t, "seed": 1, "steps": 500, "trace": "on" if trace else "off"}
            for t in normalisers]
    ids = write_result(directory / "train-text.h5", "train-text", grid,
                       {"loss": np.zeros(len(grid))}, attrs=attrs)
    model = dict(zip(normalisers, ids))
    points, metrics = [], {k: [] for k in ("evaluated", "trace", "in_training_lengths",
                                           "exact_final.trained", "exact_final.adaptive")}
    for (algo, t), (f_trained, f_adaptive) in exact.items():
        for n in lengths:
            points.append({"checkpoint": f"results/train-text.h5#{model[t]}", "algorithm": algo,
                           "length": n, "samples": samples, "normaliser": "trained+adaptive",
                           "seed": 1})
            seen = n in train_lengths
            metrics["evaluated"].append(1)
            metrics["trace"].append(int(trace))
            metrics["in_training_lengths"].append(int(seen))
            metrics["exact_final.trained"].append(seen_exact if seen else f_trained)
            metrics["exact_final.adaptive"].append(
                float("nan") if t == "adaptive" else seen_exact if seen else f_adaptive)
    write_result(directory / "eval-text.h5", "eval-text", points, metrics, attrs=attrs)


def write_text_pairs(directory, lengths=(4, 5, 6, 7, 8, 20, 40, 70), train_lengths=(4, 5, 7),
                     seeds=(1, 2), samples=10, right=None):
    """train-text.h5 with a softmax and an adaptive model per seed (same other parameters) and
    eval-text.h5 evaluating each on minimum with per-sample correctness in /arrays: sample j is right
    when j < right(normaliser, item, n, seed) (default: softmax 8 − n/10, adaptive one more, adaptive
    at inference on the softmax model one fewer, clipped to [0, samples]). Returns the grid."""
    right = right or (lambda x, item, n, seed: {"softmax": 8, "adaptive": 9, "inference": 7}[
        x if item == "trained" else "inference"] - n // 10)
    return write_text_study(directory, lengths, train_lengths, seeds, samples, steps=None, head_measures=False,
                            right=lambda x, item, n, seed, index: np.arange(samples) < min(
                                samples, max(0, right(x, item, n, seed))))


def study_answer_index(n: int, samples: int) -> np.ndarray:
    """The synthetic study's answer_index at length n: sample j names index 7j mod n."""
    return (7 * np.arange(samples)) % n


def write_text_study(directory, lengths=(4, 8, 16, 24, 32), train_lengths=(4, 8, 16), seeds=(1, 2, 3),
                     samples=40, right=None, steps=3000, head_measures=True):
    """The text study's files: train-text.h5 with a softmax and an adaptive model per seed, and
    eval-text.h5 evaluating each on minimum (items trained and adaptive at inference) with per-sample
    correctness, answer_index (study_answer_index) and the answer rows' head measures. right(normaliser,
    item, n, seed, index) -> [samples] bool; by default every arm is right on the samples whose index
    is below 16 and j mod 3 != 0 and never above, except the adaptive-trained models, which are also
    right on every second sample with index >= 16 (a difference the restriction removes). steps=None:
    no steps column; head_measures=False: no answer_* metrics. Returns the training grid."""
    def default(normaliser, item, n, seed, index):
        j = np.arange(index.size)
        ok = (index < 16) & (j % 3 != 0)
        if normaliser == "adaptive":
            ok |= (index >= 16) & (j % 2 == 0)
        return ok
    right = right or default
    grid = [{"normaliser": x, "seed": s, "positional": "rope", "lengths": "+".join(map(str, train_lengths)),
             **({"steps": steps} if steps is not None else {})} for x in ("softmax", "adaptive") for s in seeds]
    ids = write_result(os.path.join(directory, "train-text.h5"), "train-text", grid, {"loss": np.zeros(len(grid))})
    heads = (("answer_entropy", "answer_entropy_before_beta", "answer_delta", "answer_entropy_uniform")
             if head_measures else ())
    items = ("trained", "adaptive")
    points, arrays = [], {}
    metrics = {k: [] for k in ["evaluated", "in_training_lengths"] +
               [f"{m}.{i}" for m in ("exact_final",) + heads for i in items]}
    for model, point in zip(grid, ids):
        for n in lengths:
            points.append({"checkpoint": f"results/train-text.h5#{point}", "algorithm": "minimum",
                           "length": n, "samples": samples, "normaliser": "trained+adaptive", "seed": 1})
            metrics["evaluated"].append(1)
            metrics["in_training_lengths"].append(int(n in train_lengths))
            index = study_answer_index(n, samples)
            arrays[len(points) - 1] = {"answer_index": index.astype(np.int64)}
            for item in items:
                if item == "adaptive" and model["normaliser"] == "adaptive":
                    for m in ("exact_final",) + heads:
                        metrics[f"{m}.{item}"].append(float("nan"))
                    continue
                correct = np.asarray(right(model["normaliser"], item, n, model["seed"], index), dtype=bool)
                metrics[f"exact_final.{item}"].append(float(correct.mean()))
                arrays[len(points) - 1][f"correct_final.{item}"] = correct.astype(np.int64)
                if not head_measures:
                    continue
                # Entropy after beta falls below the one before it for adaptive (trained or at inference).
                sharpened = model["normaliser"] == "adaptive" or item == "adaptive"
                before = 0.5 + 0.04 * n + 0.01 * model["seed"]
                metrics[f"answer_entropy_before_beta.{item}"].append(before)
                metrics[f"answer_entropy.{item}"].append(before - (0.3 if sharpened else 0.0))
                metrics[f"answer_delta.{item}"].append(10.0 + 0.1 * n)
                metrics[f"answer_entropy_uniform.{item}"].append(float(np.log(n + 30)))
    write_result(os.path.join(directory, "eval-text.h5"), "eval-text", points, metrics, arrays)
    return grid
