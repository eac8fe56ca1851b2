#!/usr/bin/env python3
"""PyTorch (CPU, float32) reference for sharp-bench-train-max's training step: the max-retrieval model
of docs/science.md#max-retrieval (item MLP psi 11 -> 128 -> ReLU -> 128, query MLP 1 -> 128 -> ReLU ->
128, one softmax attention head d = 128 without biases, logits scaled by 1/sqrt(d), output MLP
phi 128 -> 128 -> ReLU -> 10), softmax cross-entropy and AdamW (lr 1e-3, weight decay 1e-3), on
batches of 128 sets of 16 items (fresh random sets every step, as the suite's trainer), 1 and 2
threads. Prints samples/s, best of REPS timed runs of STEPS steps after a warm-up, under the
name of the C++ benchmark it is the reference for. Needs python3-torch (Debian), never run by
make test."""
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, N, WIDTH, CLASSES = 128, 16, 128, 10


def mlp(d_in, d_out):
    return nn.Sequential(nn.Linear(d_in, WIDTH), nn.ReLU(), nn.Linear(WIDTH, d_out))


class MaxRetrieval(nn.Module):
    def __init__(self):
        super().__init__()
        self.psi, self.query, self.phi = mlp(1 + CLASSES, WIDTH), mlp(1, WIDTH), mlp(WIDTH, CLASSES)
        self.W_Q, self.W_K, self.W_V = (nn.Linear(WIDTH, WIDTH, bias=False) for _ in range(3))

    def forward(self, items, query):
        h = self.psi(items)                                  # [B, n, W]
        q = self.W_Q(self.query(query))                      # [B, W]
        e = torch.einsum("bd,bnd->bn", q, self.W_K(h)) / math.sqrt(WIDTH)
        a = torch.softmax(e, dim=-1)
        return self.phi(torch.einsum("bn,bnd->bd", a, self.W_V(h)))


def batch(generator):
    priority = torch.rand(BATCH, N, 1, generator=generator)
    cls = torch.randint(0, CLASSES, (BATCH, N), generator=generator)
    items = torch.cat([priority, F.one_hot(cls, CLASSES).float()], dim=-1)
    labels = cls.gather(1, priority.squeeze(-1).argmax(1, keepdim=True)).squeeze(1)
    return items, torch.rand(BATCH, 1, generator=generator), labels


def samples_per_second(threads, reps=int(os.environ.get("REPS", "3")), steps=int(os.environ.get("STEPS", "50"))):
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    model = MaxRetrieval()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-3)
    g = torch.Generator().manual_seed(2)

    def step():
        items, query, labels = batch(g)
        loss = F.cross_entropy(model(items, query), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for _ in range(5):
        step()
    best = math.inf
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(steps):
            step()
        best = min(best, (time.perf_counter() - start) / steps)
    return best


def main():
    print(f"PyTorch {torch.__version__} max-retrieval training step (best of {os.environ.get('REPS', '3')} "
          f"runs of {os.environ.get('STEPS', '50')} steps, data generation included):")
    for threads in (1, 2):
        t = samples_per_second(threads)
        print(f"torch/train_step/max_retrieval/{BATCH}x{N}/float threads:{threads}  {t * 1e3:8.2f} ms  "
              f"{BATCH / t / 1e3:8.2f}k samples/s")


if __name__ == "__main__":
    main()
