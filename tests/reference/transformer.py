#!/usr/bin/env python3
"""Independent numpy (float64) forward pass of the suite's transformer (docs/science.md#reference-implementation).

Written from the model's definition, not from the C++: whole masked attention matrices (masked keys get
probability exactly 0 through exp(-inf)); the normalisers are the suite's numpy reference
(normalisers.py). `--out FILE.h5` writes one group per test case: the config as attributes, the weights as
`param.<tensor>` (random, including LayerNorm gains and every bias, so each is exercised), the tokens, the
logits and every head's row statistics [layers, batch, heads, length]. The C++ test
(tests/unit/test_transformer_reference.cpp) loads the weights into its model and must agree to 1e-9.
"""
import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import normalisers  # noqa: E402

POSITIONAL = ("none", "sinusoidal", "learned", "rope", "alibi", "index")


def tensor_shapes(cfg):
    """Tensor names and shapes in the C++ layout's order (lib/transformer/layout.hpp)."""
    d, V, F = cfg["d_model"], cfg["vocab"], 4 * cfg["d_model"]
    out = [("embedding", (V, d))]
    if cfg["positional"] == "learned":
        out.append(("position", (cfg["max_length"], d)))
    for l in range(cfg["layers"]):
        p = f"layers.{l}."
        if cfg["layer_norm"]:
            out += [(p + "ln1.gain", (d,)), (p + "ln1.bias", (d,))]
        out += [(p + "attn.qkv.weight", (3 * d, d)), (p + "attn.qkv.bias", (3 * d,)),
                (p + "attn.out.weight", (d, d)), (p + "attn.out.bias", (d,))]
        if cfg["layer_norm"]:
            out += [(p + "ln2.gain", (d,)), (p + "ln2.bias", (d,))]
        out += [(p + "mlp.in.weight", (F, d)), (p + "mlp.in.bias", (F,)),
                (p + "mlp.out.weight", (d, F)), (p + "mlp.out.bias", (d,))]
    if cfg["layer_norm"]:
        out += [("final_ln.gain", (d,)), ("final_ln.bias", (d,))]
    if not cfg["tied"]:
        out.append(("unembedding", (V, d)))
    return out


def random_params(cfg, rng):
    """Random weights: LeCun-normal × init_scale for matrices, N(0,1) embeddings, and (unlike a fresh
    model) random LayerNorm gains around 1 and small random biases, so that every tensor matters."""
    params = {}
    for name, shape in tensor_shapes(cfg):
        if name in ("embedding", "position"):
            v = rng.standard_normal(shape)
        elif name.endswith(".gain"):
            v = 1.0 + 0.2 * rng.standard_normal(shape)
        elif len(shape) == 1:
            v = 0.1 * rng.standard_normal(shape)
        else:
            v = cfg["init_scale"] * rng.standard_normal(shape) / math.sqrt(shape[1])
        params[name] = v
    return params


# ---- normalisers: the suite's one numpy reference (normalisers.py, beside this file) -------------

def entropy(p):
    return float(normalisers.entropy(p)[0])


def normalise(spec, z):
    """(probabilities, effective beta or nan) of one row of unmasked logits."""
    name, params = normalisers.parse_spec(spec)
    if name == "softmax":
        beta = params["beta"]
    elif name == "adaptive":
        beta = float(normalisers.adaptive_beta(normalisers.softmax_entropy(z))[0])
    elif name == "ssmax":
        beta = params["s"] * math.log(len(z))
    else:
        beta = math.nan
    return normalisers.forward(spec, z), beta


# ---- the model ------------------------------------------------------------------------------------

def layer_norm(x, gain, bias, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gain + bias


def gelu(x):
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def sinusoidal_table(n, d):
    pos = np.arange(n)[:, None]
    i = np.arange(0, d, 2)[None, :]
    angle = pos / (10000.0 ** (i / d))
    pe = np.zeros((n, d))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe


def rope(x):
    """Rotate-half rotary embedding of x [n, d_head], base 10^4, position = row."""
    n, dh = x.shape
    c = dh // 2
    theta = np.arange(n)[:, None] * (10000.0 ** (-np.arange(c) / c))[None, :]
    a, b = x[:, :c], x[:, c:]
    return np.concatenate([a * np.cos(theta) - b * np.sin(theta), b * np.cos(theta) + a * np.sin(theta)], axis=1)


def forward(cfg, params, tokens):
    """logits [B, n, V] and stats: dict name -> [layers, B, heads, n]."""
    B, n = tokens.shape
    L, H, d = cfg["layers"], cfg["heads"], cfg["d_model"]
    dh = d // H
    pos = cfg["positional"]
    names = ("logit_max", "logit_min", "alpha_max", "alpha_min", "entropy", "beta", "keys", "support")
    stats = {k: np.zeros((L, B, H, n)) for k in names}
    logits = np.zeros((B, n, cfg["vocab"]))
    slopes = [2.0 ** (-8.0 * (h + 1) / H) for h in range(H)]
    ident = lambda x, *a: x
    ln = layer_norm if cfg["layer_norm"] else ident
    for b in range(B):
        x = params["embedding"][tokens[b]].copy()
        if pos == "learned":
            x += params["position"][:n]
        elif pos == "sinusoidal":
            x += sinusoidal_table(n, d)
        elif pos == "index":
            x[:, 0] += np.arange(n) / 64.0
        for l in range(L):
            p = f"layers.{l}."
            g = lambda k: params.get(p + k)
            a = ln(x, g("ln1.gain"), g("ln1.bias"))
            qkv = a @ g("attn.qkv.weight").T + g("attn.qkv.bias")
            out = np.zeros((n, d))
            for h in range(H):
                q = qkv[:, h * dh:(h + 1) * dh]
                k = qkv[:, d + h * dh:d + (h + 1) * dh]
                v = qkv[:, 2 * d + h * dh:2 * d + (h + 1) * dh]
                if pos == "rope":
                    q, k = rope(q), rope(k)
                e = q @ k.T / math.sqrt(dh)
                i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
                if pos == "alibi":
                    e = e - slopes[h] * np.abs(i - j)
                mask = (j <= i) if cfg["causal"] else np.ones((n, n), dtype=bool)
                P = np.zeros((n, n))
                for r in range(n):
                    z = e[r][mask[r]]
                    pr, beta = normalise(cfg["normaliser"], z)
                    P[r][mask[r]] = pr
                    for key, val in (("logit_max", z.max()), ("logit_min", z.min()), ("alpha_max", pr.max()),
                                     ("alpha_min", pr.min()), ("entropy", entropy(pr)), ("beta", beta),
                                     ("keys", len(z)), ("support", int((pr > 0).sum()))):
                        stats[key][l, b, h, r] = val
                out[:, h * dh:(h + 1) * dh] = P @ v
            x = x + out @ g("attn.out.weight").T + g("attn.out.bias")
            m = ln(x, g("ln2.gain"), g("ln2.bias"))
            x = x + gelu(m @ g("mlp.in.weight").T + g("mlp.in.bias")) @ g("mlp.out.weight").T + g("mlp.out.bias")
        f = ln(x, params.get("final_ln.gain"), params.get("final_ln.bias"))
        U = params["embedding"] if cfg["tied"] else params["unembedding"]
        logits[b] = f @ U.T
    return logits, stats


def base_config(**kw):
    cfg = dict(layers=2, heads=2, d_model=16, vocab=11, causal=True, positional="none", layer_norm=True, tied=True,
               init_scale=1.0, max_length=80, normaliser="softmax")
    cfg.update(kw)
    return cfg


# Every positional scheme, causal and encoder, with and without LayerNorm, tied and untied, several
# normalisers. 67 tokens: more than one 64-row tile and chunk, so tile and chunk edges are crossed.
CASES = [
    base_config(positional="none"),
    base_config(positional="sinusoidal", tied=False, init_scale=2.0),
    base_config(positional="learned", normaliser="adaptive"),
    base_config(positional="rope", layer_norm=False, init_scale=0.5),
    base_config(positional="alibi", normaliser="ssmax:s=0.7"),
    base_config(positional="index", layer_norm=False, tied=False),
    base_config(positional="rope", causal=False, normaliser="adaptive"),
    base_config(positional="alibi", causal=False, layer_norm=False),
    base_config(positional="index", causal=False, normaliser="entmax15"),
    base_config(positional="sinusoidal", causal=False, heads=4, normaliser="entmax15"),
]
BATCH, LENGTH = 2, 67


def write_cases(path, cases=None, seed=12):
    import h5py
    with h5py.File(path, "w") as f:
        for c, cfg in enumerate(CASES):
            if cases is not None and c not in cases:
                continue
            rng = np.random.default_rng([seed, c])
            grp = f.create_group(f"case{c}")
            for k, v in cfg.items():
                grp.attrs[k] = int(v) if isinstance(v, bool) else v
            params = random_params(cfg, rng)
            for name, v in params.items():
                grp.create_dataset("param." + name, data=v)
            tokens = rng.integers(0, cfg["vocab"], size=(BATCH, LENGTH)).astype(np.int32)
            logits, stats = forward(cfg, params, tokens)
            grp.create_dataset("tokens", data=tokens)
            grp.create_dataset("logits", data=logits)
            for k, v in stats.items():
                grp.create_dataset("stats/" + k, data=v)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="HDF5 file to write the test cases to")
    parser.add_argument("--case", type=int, action="append", help="only this case (repeatable; default all)")
    args = parser.parse_args()
    write_cases(args.out, args.case)
