#!/usr/bin/env python3
"""PyTorch (CPU, float32) reference for sharp-bench-transformer's training step: the same default model
(4 layers x 4 heads, d_model 128, vocab 64, causal, NoPE, pre-LayerNorm, 4d erf-GELU MLP, tied
unembedding, logits scaled by 1/sqrt(d_head)), next-token cross-entropy, global-norm clipping 1.0 and
AdamW (lr 1e-3, weight decay 0.01), on 32x256 and 8x64 tokens with 1 and 2 threads; and the text
study's model (2 layers x 4 heads, d_model 64, rotate-half RoPE base 1e4 on q and k, vocab 48) on 64
sequences of STUDY_LENGTH tokens (the padded length sharp-bench-transformer's train_step/study prints
in its name; scripts/bench_transformer.sh passes it).
Prints tokens/s, best of REPS timed steps after a warm-up. Needs python3-torch (Debian), never run
by make test."""
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def rotate(t, cos, sin):
    """Rotate-half RoPE of [B, heads, n, dh] with tables [n, dh/2]."""
    c = t.shape[-1] // 2
    a, b = t[..., :c], t[..., c:]
    return torch.cat((a * cos - b * sin, b * cos + a * sin), dim=-1)


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d, eps=1e-5)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d, eps=1e-5)
        self.mlp_in = nn.Linear(d, 4 * d)
        self.mlp_out = nn.Linear(4 * d, d)

    def forward(self, x, mask, rope=None):
        B, n, d = x.shape
        dh = d // self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (t.view(B, n, self.heads, dh).transpose(1, 2) for t in (q, k, v))
        if rope is not None:
            q, k = rotate(q, *rope), rotate(k, *rope)
        e = (q @ k.transpose(-1, -2)) / math.sqrt(dh)
        a = torch.softmax(e.masked_fill(mask, float("-inf")), dim=-1)
        o = (a @ v).transpose(1, 2).reshape(B, n, d)
        x = x + self.out(o)
        return x + self.mlp_out(F.gelu(self.mlp_in(self.ln2(x))))


class Model(nn.Module):
    def __init__(self, layers=4, heads=4, d=128, vocab=64, rope=False):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.final = nn.LayerNorm(d, eps=1e-5)
        self.rope_half = d // heads // 2 if rope else 0

    def forward(self, tokens):
        n = tokens.shape[1]
        mask = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        rope = None
        if self.rope_half:   # the tables, as a PyTorch model computes them once per length
            c = self.rope_half
            angle = torch.arange(n, dtype=torch.float32)[:, None] * torch.pow(1e4, -torch.arange(c) / c)[None, :]
            rope = (torch.cos(angle), torch.sin(angle))
        x = self.embedding(tokens)
        for b in self.blocks:
            x = b(x, mask, rope)
        return self.final(x) @ self.embedding.weight.T


def tokens_per_second(batch, n, threads, reps=int(os.environ.get("REPS", "3")), **model_args):
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    model = Model(**model_args)
    vocab = model.embedding.num_embeddings
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    x = torch.randint(0, vocab, (batch, n))
    y = torch.randint(0, vocab, (batch, n))

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x).reshape(-1, vocab), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    step()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - t0)
    return batch * n / best, best


if __name__ == "__main__":
    print(f"PyTorch {torch.__version__} training step, default model (best of {os.environ.get('REPS', '3')}):")
    for batch, n in ((32, 256), (8, 64)):
        for threads in (1, 2):
            tps, t = tokens_per_second(batch, n, threads)
            print(f"torch/train_step/default/{batch}x{n}/float threads:{threads}  {t * 1e3:9.1f} ms  {tps / 1e3:8.2f}k tokens/s")
    n = int(os.environ.get("STUDY_LENGTH", "110"))
    for threads in (1, 2):
        tps, t = tokens_per_second(64, n, threads, layers=2, heads=4, d=64, vocab=48, rope=True)
        print(f"torch/train_step/study/64x{n}/float threads:{threads}  {t * 1e3:9.1f} ms  {tps / 1e3:8.2f}k tokens/s")
