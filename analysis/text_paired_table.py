"""Algorithmic text: paired tests of each remedy against softmax (docs/science.md#algorithmic-text,
docs/science.md#figures), per algorithm and length bucket, from an "eval-text" result file, as
Markdown (text_paired.md) and LaTeX (text_paired.tex, booktabs).

Buckets (per training configuration, from its training lengths, 4-16 by default): the training
lengths; interpolation (the other lengths up to the largest training length, 6-15 by default);
extrapolation up to 32 (17-32); 33-64; beyond 64. A comparison is a remedy trained into every head
(its models' own heads, `trained`) or a normaliser applied at inference only to the softmax-trained
models (`softmax + adaptive at inference`), always against the softmax-trained models' own heads.

Pairs: models that differ only in the trained normaliser (same seed and every other training
parameter) see the same samples at each (algorithm, length), because eval-text draws them from
(algorithm, length) only; per-sample correctness of the final output (/arrays correct_final.<item>)
is paired sample by sample. McNemar's exact test runs per seed over the pooled lengths of the bucket
(different lengths are different samples), and the largest p over seeds is shown: every seed sees
the same samples, so pooling seeds would count correlated pairs as independent.

    /usr/bin/python3 analysis/text_paired_table.py results/eval-text.h5 --out results/figures
"""
from __future__ import annotations

import dataclasses
import math
import sys

import numpy as np

import common
import product
import max_retrieval as mr
from text_results import read_points, training_params

EXPERIMENT = "eval-text"
INPUT_FILE = "eval-text.h5"
BASELINE = "softmax"
BUCKET_ORDER = ("training", "interpolation", "extrapolation to 32", "33-64", "beyond 64")


@dataclasses.dataclass
class Comparison:
    """One row: a remedy against softmax on one algorithm and bucket."""
    group: str            # training parameters that differ between configurations ("" if none)
    setting: str          # training parameters every configuration shares, e.g. "layers 2, d_model 64"
    algorithm: str
    bucket: str
    lengths: list         # lengths present in the bucket
    remedy: str           # label: "adaptive" or "softmax + adaptive at inference"
    seeds: int            # seed pairs tested
    samples: int          # paired samples, summed over seed pairs
    baseline: float       # softmax accuracy, fraction, pooled
    accuracy: float       # the remedy's, fraction, pooled
    tests: list           # per seed pair: mr.McNemar (only_a = only softmax right)

    @property
    def difference(self) -> float:
        return self.accuracy - self.baseline

    @property
    def largest_p(self) -> float:
        return max(t.p for t in self.tests) if self.tests else math.nan


def bucket_of(length: int, in_training: bool, largest: int) -> str:
    if in_training:
        return "training"
    if length <= largest:
        return "interpolation"
    if length <= 32:
        return "extrapolation to 32"
    return "33-64" if length <= 64 else "beyond 64"


def bucket_label(bucket: str, largest: int) -> str:
    """The bucket with its range for a configuration whose largest training length is `largest`."""
    return {"extrapolation to 32": f"{largest + 1}-32", "beyond 64": "> 64"}.get(bucket, bucket)


def model_configurations(path: str, refs: list) -> dict:
    """checkpoint -> (trained normaliser, seed, configuration label); unknown training: None."""
    params = training_params(path, refs)
    out = {}
    for ref in refs:
        p = params.get(ref)
        if p is None or "normaliser" not in p:
            out[ref] = None
            continue
        rest = {k: v for k, v in sorted(p.items()) if k not in ("normaliser", "seed")}
        out[ref] = (str(p["normaliser"]), p.get("seed"), tuple(rest.items()))
    return out


SHOWN = ("positional", "lengths", "algorithms", "trace", "layers", "heads", "d_model", "steps")


def configuration_labels(configs: list) -> tuple:
    """({configuration: the shown parameters that differ between configurations}, the shown
    parameters they share), e.g. ({c1: {"positional": "rope"}, ...}, "layers 2, d_model 64")."""
    keys = [k for k in SHOWN if any(k in dict(c) for c in configs)]
    varying = [k for k in keys if len({dict(c).get(k) for c in configs}) > 1]
    first = dict(configs[0]) if configs else {}
    shared = ", ".join(f"{k} {first[k]}" for k in keys if k not in varying and k in first)
    return {c: {k: dict(c).get(k) for k in varying} for c in configs}, shared


def group_text(varying: dict, algorithm: str) -> str:
    """The differing parameters, without an algorithm mix that is just the row's algorithm."""
    return ", ".join(f"{k} {v}" for k, v in varying.items() if not (k == "algorithms" and v == algorithm))


@dataclasses.dataclass
class PairedOutcomes:
    """Per-sample correctness of an eval-text file, keyed for pairing models of one seed."""
    # (config, algorithm, length, eval seed, trained normaliser, item, training seed) -> correct [samples]
    correct: dict
    trained_lengths: dict   # configuration -> the training lengths among the evaluated rows
    points: dict            # the same keys -> the point's id (to read its other arrays)


def paired_outcomes(path: str) -> PairedOutcomes:
    """Every evaluated point's per-sample correctness of the final output (/arrays correct_final.<item>)
    for models whose training file is found; an inference-only item on softmax-trained models only."""
    r, refs, algos, lengths, evaluated, in_training = read_points(path)
    eval_seed = (np.asarray(r.params["seed"]) if "seed" in r.params else np.zeros(len(r), dtype=int))
    items = sorted({name.split(".", 1)[1] for name in r.metrics if name.startswith("exact_final.")
                    and not name.endswith(("_low", "_high"))})
    models = model_configurations(path, sorted(set(refs)))

    out = PairedOutcomes({}, {}, {})
    for i in range(len(r)):
        m = models[refs[i]]
        if m is not None and in_training[i]:
            out.trained_lengths.setdefault(m[2], set()).add(int(lengths[i]))

    for i in range(len(r)):
        m = models[refs[i]]
        if m is None or not evaluated[i]:
            continue
        normaliser, seed, config = m
        wanted = [item for item in items if item == "trained" or normaliser == BASELINE]
        # (inference-only variants are compared on softmax models only)
        names = [f"correct_final.{item}" for item in wanted]
        try:
            arrays = r.arrays(r.ids[i], names) if names else {}
        except common.ResultFileError:
            arrays = {}   # no arrays at all for that point: named below
        for item, name in zip(wanted, names):
            if name not in arrays:
                raise common.ResultFileError(f"{path}: point {r.ids[i]} lacks /arrays/{r.ids[i]}/{name}; the "
                                             "file was written by an older eval-text. Re-run it.")
            key = (config, algos[i], int(lengths[i]), eval_seed[i].item(), normaliser, item, seed)
            out.correct[key] = np.asarray(arrays[name]).astype(bool)
            out.points[key] = r.ids[i]
    return out


def remedies_of(correct: dict, config) -> list:
    """(trained normaliser, item) of every comparison against softmax's own heads in a configuration:
    a remedy trained in, or an item applied at inference to the softmax-trained models."""
    return sorted({(k[4], k[5]) for k in correct if k[0] == config and (k[4], k[5]) != (BASELINE, "trained")
                   and (k[5] == "trained" or k[4] == BASELINE)})


def remedy_label(normaliser: str, item: str) -> str:
    return normaliser if item == "trained" else f"{BASELINE} + {item} at inference"


def load(path: str) -> list:
    """Every Comparison of the file, ordered by configuration, algorithm, bucket, remedy."""
    outcomes = paired_outcomes(path)
    correct, trained_lengths = outcomes.correct, outcomes.trained_lengths
    comparisons = []
    configs = sorted({k[0] for k in correct})
    varying, shared = configuration_labels(configs)
    for config in configs:
        seen = trained_lengths.get(config, set())
        top = max(seen, default=0)
        remedies = remedies_of(correct, config)
        for algo in sorted({k[1] for k in correct if k[0] == config}):
            for bucket in BUCKET_ORDER:
                cells = sorted({(k[2], k[3]) for k in correct if k[0] == config and k[1] == algo
                                and bucket_of(k[2], k[2] in seen, top) == bucket})
                if not cells:
                    continue
                for normaliser, item in remedies:
                    per_seed = {}
                    for n, es in cells:
                        for k, base in correct.items():
                            if k[:6] != (config, algo, n, es, BASELINE, "trained"):
                                continue
                            other = correct.get((config, algo, n, es, normaliser, item, k[6]))
                            if other is None or other.shape != base.shape:
                                continue
                            a, b = per_seed.setdefault(k[6], ([], []))
                            a.append(base)
                            b.append(other)
                    if not per_seed:
                        continue
                    tests, right_a, right_b, total = [], 0, 0, 0
                    for seed in sorted(per_seed, key=str):
                        a, b = (np.concatenate(x) for x in per_seed[seed])
                        tests.append(mr.mcnemar_exact(a, b))
                        right_a += int(a.sum())
                        right_b += int(b.sum())
                        total += a.size
                    label = remedy_label(normaliser, item)
                    comparisons.append(Comparison(
                        group=group_text(varying[config], algo), setting=shared, algorithm=algo,
                        bucket=bucket_label(bucket, top),
                        lengths=sorted({n for n, _ in cells}), remedy=label, seeds=len(tests),
                        samples=total, baseline=right_a / total, accuracy=right_b / total, tests=tests))
    return comparisons


def lengths_text(lengths: list) -> str:
    """'6, 8, 10-11, 13-15' (runs of consecutive lengths joined)."""
    runs, start, prev = [], None, None
    for n in lengths:
        if start is None:
            start = prev = n
        elif n == prev + 1:
            prev = n
        else:
            runs.append((start, prev))
            start = prev = n
    if start is not None:
        runs.append((start, prev))
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


TESTS_NOTE = ("Exact match of the final output in %, pooled over the bucket's lengths and the seeds. "
              "Discordant: samples only softmax got right / only the remedy got right, summed over "
              "seeds. McNemar: exact two-sided binomial test (p = 1/2) on the discordant pairs of each "
              "seed's paired samples (models of one seed differing only in the normaliser, on the same "
              "samples), the largest p over seeds shown; seeds are not pooled because they see the same "
              "samples. Δ: remedy − softmax, in points.")


def setting_text(rows: list) -> str:
    """'; training: layers 2, d_model 64' (what every compared model shares), or ''."""
    return f"; training: {rows[0].setting}" if rows and rows[0].setting else ""


def markdown(path: str, rows: list) -> str:
    lines = ["# Algorithmic text: each remedy against softmax, paired (docs/science.md#algorithmic-text)", "",
             f"From {path}. Samples generated in the CLRS-Text format, not the released data.", ""]
    if not rows:
        lines += ["No comparison: the file holds no softmax-trained model with a matching remedy "
                  "model (same seed and training parameters), or its training file was not found.", ""]
        return "\n".join(lines)
    head = ["bucket", "lengths", "remedy", "seeds", "paired samples", "softmax %", "remedy %", "Δ",
            "discordant", "McNemar p (largest)"]
    lines[-1:-1] = [f"Training: {rows[0].setting}." if rows[0].setting else ""]
    for group in dict.fromkeys(r.group for r in rows):
        for algo in dict.fromkeys(r.algorithm for r in rows if r.group == group):
            lines += [f"## {algo} ({group})" if group else f"## {algo}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            for c in (r for r in rows if r.group == group and r.algorithm == algo):
                lines.append("| " + " | ".join([
                    c.bucket, lengths_text(c.lengths), c.remedy, str(c.seeds), str(c.samples),
                    f"{100 * c.baseline:.1f}", f"{100 * c.accuracy:.1f}", f"{100 * c.difference:+.1f}",
                    f"{sum(t.only_a for t in c.tests)} / {sum(t.only_b for t in c.tests)}",
                    mr.format_p(c.largest_p)]) + " |")
            lines.append("")
    lines += [f"Tests. {TESTS_NOTE}", ""]
    return "\n".join(lines)


def _tex(text: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("_", r"\_"), ("%", r"\%"), ("&", r"\&"), ("#", r"\#"),
                 ("Δ", r"$\Delta$"), ("−", "$-$"), ("p = 1/2", "$p = 1/2$")):
        text = text.replace(a, b)
    return text


def latex(path: str, rows: list) -> str:
    out = ["% Generated by analysis/text_paired_table.py; do not edit. Needs \\usepackage{booktabs}.",
           f"% From {path}.",
           "\\begin{table}[t]", "\\centering", "\\small",
           f"\\caption{{Algorithmic text (generated in the CLRS-Text format): each remedy against "
           f"softmax on the same samples{_tex(setting_text(rows))}. {_tex(TESTS_NOTE)}}}",
           "\\label{tab:text-paired}",
           "\\begin{tabular}{llllrrrrrc}", "\\toprule",
           "algorithm & bucket & lengths & remedy & seeds & samples & softmax & remedy & $\\Delta$ & McNemar $p$ \\\\",
           "\\midrule"]
    for c in rows:
        p = mr.format_p(c.largest_p)
        algorithm = f"{c.algorithm} ({c.group})" if c.group else c.algorithm
        if "e" in p:
            mantissa, exponent = p.split("e")
            p = f"${mantissa}\\times10^{{{int(exponent)}}}$"
        out.append(" & ".join([
            _tex(algorithm), _tex(c.bucket), lengths_text(c.lengths), _tex(c.remedy), str(c.seeds),
            str(c.samples), f"{100 * c.baseline:.1f}", f"{100 * c.accuracy:.1f}",
            f"{100 * c.difference:+.1f}".replace("-", "$-$"), p]) + " \\\\")
    out += ["\\bottomrule", "\\end{tabular}", "\\end{table}", ""]
    return "\n".join(out)


def make(path: str, outdir: str) -> list:
    """Tables text_paired.md and text_paired.tex; returns the paths."""
    rows = load(path)
    return [common.save_text(markdown(path, rows), outdir, "text_paired.md"),
            common.save_text(latex(path, rows), outdir, "text_paired.tex")]


# What this module makes (analysis/products.py collects it for make_figures and the page).
PRODUCTS = (
    product.Product("text_paired", INPUT_FILE, make),
)


if __name__ == "__main__":
    sys.exit(common.run_standalone(make, __doc__.splitlines()[0]))
