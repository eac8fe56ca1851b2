"""Small synthetic result files that follow the "sharp/1" schema exactly (variable-length UTF-8
strings as the C++ writer makes them, int64 / float64 columns, every root attribute), with
metrics computed from the closed forms of SPEC §2 so that figures drawn from them look like the
real ones. Used by the tests; also handy by hand:

    /usr/bin/python3 analysis/tests/synthetic.py OUTDIR   # writes the three files into OUTDIR
"""
from __future__ import annotations

import hashlib
import itertools
import os
import sys

import h5py
import numpy as np

STR = h5py.string_dtype("utf-8")


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
    return ids


# ---- logits of the four laws (SPEC §2.1), divided by θ and shifted so the minimum is 0: z ∈ [0, r]

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
            e = x @ k.T @ (q @ y)  # [n] logits (Q y)ᵀ(K x_i), SPEC §2.3
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
    """H(softmax(βz)) and its closed-form derivative dH/dβ = −β·Var_p(z) (SPEC §2.4)."""
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


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    write_bounds(os.path.join(out, "bounds.h5"), ns=tuple(2 ** k for k in range(1, 21)))
    write_weight_bound(os.path.join(out, "weight-bound.h5"), trials=300)
    write_entropy_temperature(os.path.join(out, "entropy-temperature.h5"))
    print(f"wrote bounds.h5, weight-bound.h5, entropy-temperature.h5 into {out}")
