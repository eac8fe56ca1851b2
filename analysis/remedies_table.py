"""The remedies leaderboard (docs/science.md#remedies, docs/science.md#figures) from an eval-max file
of models trained with several head normalisers (results/eval-remedies.h5), as Markdown
(remedies_leaderboard.md) and LaTeX (remedies_leaderboard.tex, booktabs).

Rows: every remedy trained into the head (each model evaluated with its own normaliser, `trained`),
then the inference-only variants applied to the softmax-trained models (every other normaliser of
the evaluation list: adaptive, argmax = top-1, top-k, log-n scaling with fixed s), then the paper's
numbers and the best public number at 16384 (27.9%, docs/science.md#published-numbers). Columns:
n = 64, 256, 1024, 4096, 16384, 2^20, those the file has. A cell is the accuracy in %, mean over
seeds (trained models) ± the half-width of the 95% t interval across them (one seed: its Wilson
interval in brackets).

Against softmax (the softmax-trained models evaluated with softmax): the paired t-test over seeds
(a remedy's model of seed s against the softmax model of seed s: same initial weights, same data)
and McNemar's exact test on the shared evaluation sets of each such pair (the sets depend on the
evaluation seed and n only), the largest p over pairs and the discordant counts summed over pairs.
Then each entry's distance to its ranking rate (accuracy − ranking rate, points: the ceiling of
any normaliser that keeps the argmax), and the declared equivalence check: log-n scaling with
s = 1/ln 16 trained in against the same normaliser applied to the softmax models at inference.

    /usr/bin/python3 analysis/remedies_table.py results/eval-remedies.h5 --out results/figures
"""
from __future__ import annotations

import dataclasses
import math
import sys

import numpy as np

import common
import product
import max_retrieval as mr

INPUT_FILE = "eval-remedies.h5"
TRAINED = "trained"
REFERENCE = "softmax"
# Models of a file without /points/params/train_normaliser whose training file is gone.
UNKNOWN_NAME = "unknown (training file not found)"
LEADERBOARD_N = (64, 256, 1024, 4096, 16384, 2 ** 20)
BEST_PUBLIC_N, BEST_PUBLIC = 16384, 27.9   # % (docs/science.md#published-numbers)
# Log-n scaling with s = 1/ln 16: beta = s ln n = 1 at the training size, so training with it is
# training softmax; it is trained once as a declared check and otherwise applied at inference.
EQUIVALENCE = f"ssmax:s={1 / math.log(16)!r}"


@dataclasses.dataclass(frozen=True)
class Entry:
    """One row: `normaliser` of the models of `data` (kind 'trained' or 'inference')."""
    name: str
    kind: str
    data: mr.EvalMax
    normaliser: str


@dataclasses.dataclass(frozen=True)
class Cell:
    accuracy: mr.Summary | None      # fractions; None when not evaluated at n
    t_p: float                       # paired t over seeds against the reference (nan: undefined)
    mcnemar: tuple                   # McNemar per seed pair
    to_ranking: mr.Summary | None    # accuracy − ranking rate (fractions), over seeds


@dataclasses.dataclass
class Board:
    path: str
    ns: list
    entries: list
    cells: dict                      # (entry name, n) -> Cell
    equivalence: list                # text lines ([] when the check was not run)
    source: str


def entries(groups: dict) -> list:
    """Trained remedies (softmax first), then the inference-only variants on the softmax models."""
    for name, data in groups.items():
        if TRAINED not in data.normalisers:
            raise common.ResultFileError(f"{data.path}: the normaliser list lacks 'trained'; "
                                         f"evaluate each model with its own normaliser "
                                         f"(--normaliser trained).")
    order = sorted(groups, key=lambda g: (g != REFERENCE, g))
    out = [Entry(UNKNOWN_NAME if g == mr.UNKNOWN_TRAINING else g, "trained", groups[g], TRAINED)
           for g in order]
    if REFERENCE in groups:
        base = groups[REFERENCE]
        out += [Entry(f"{REFERENCE} + {x}", "inference", base, x)
                for x in base.normalisers if x not in (TRAINED, REFERENCE)]
    return out


def seed_pairs(a: Entry, b: Entry, n: int) -> list:
    """[(cell of a, cell of b)] of models with the same training seed evaluated on the same sets."""
    if n not in a.data.cells or n not in b.data.cells:
        return []
    by_seed = {c.train_seed: c for c in b.data.cells[n] if b.normaliser in c.correct}
    return [(c, by_seed[c.train_seed]) for c in a.data.cells[n]
            if a.normaliser in c.correct and c.train_seed in by_seed
            and c.samples == by_seed[c.train_seed].samples]


def _ranking(data: mr.EvalMax, n: int) -> dict:
    """{id(cell): ranking rate of that model at n}, pooled over evaluation seeds."""
    row = {pid: i for i, pid in enumerate(data.result.ids)}
    rates = data.result.metrics.get("ranking_rate")
    if rates is None:
        return {}
    return {id(c): float(np.mean(rates[[row[p] for p in c.point_ids]])) for c in data.cells[n]}


def _summary(values) -> mr.Summary | None:
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return None
    mean, low, high = mr.t_interval(values)
    return mr.Summary(mean, low, high, int(values.size))


def cell(entry: Entry, reference: Entry | None, n: int) -> Cell:
    data, x = entry.data, entry.normaliser
    if n not in data.cells or not data.has(x, n):
        return Cell(None, math.nan, (), None)
    accuracy = data.summary("correct", x, n)
    ranking = _ranking(data, n)
    to_ranking = (_summary([c.accuracy(x) - ranking[id(c)] for c in data.cells[n]])
                  if ranking else None)
    if reference is None or reference == entry:
        return Cell(accuracy, math.nan, (), to_ranking)
    pairs = seed_pairs(entry, reference, n)
    t_p = mr.paired_t_p([a.accuracy(x) for a, _ in pairs],
                        [b.accuracy(reference.normaliser) for _, b in pairs])
    tests = tuple(mr.mcnemar_exact(a.correct[x], b.correct[reference.normaliser]) for a, b in pairs)
    return Cell(accuracy, t_p, tests, to_ranking)


def equivalence_lines(groups: dict, ns: list) -> list:
    """The declared check: the models trained with log-n scaling at s = 1/ln 16 against the
    softmax models evaluated with it, paired by seed. Training with beta = 1 at n = 16 is training
    softmax, but the runs are not bit-identical (softmax trains through the short-row lane kernel,
    ssmax through the row kernel: the same beta, other summation orders, weights 1e-7 apart after
    a few hundred steps, which training amplifies). So the check is statistical: it holds at n when
    the per-sample outcomes are identical or the 95% t interval of the paired differences over
    seeds (trained − applied) contains 0 (the paired t-test does not reject at 5%)."""
    if EQUIVALENCE not in groups or REFERENCE not in groups \
            or EQUIVALENCE not in groups[REFERENCE].normalisers:
        return []
    trained = Entry(EQUIVALENCE, "trained", groups[EQUIVALENCE], TRAINED)
    applied = Entry(f"{REFERENCE} + {EQUIVALENCE}", "inference", groups[REFERENCE], EQUIVALENCE)
    lines, verdicts = [], []
    for n in ns:
        pairs = seed_pairs(trained, applied, n)
        if not pairs:
            continue
        a = np.array([p.accuracy(TRAINED) for p, _ in pairs])
        b = np.array([q.accuracy(EQUIVALENCE) for _, q in pairs])
        same = all(np.array_equal(p.correct[TRAINED], q.correct[EQUIVALENCE]) for p, q in pairs)
        mean, low, high = mr.t_interval(a - b)
        covered = len(pairs) >= 2 and low <= 0.0 <= high
        holds = bool(same or covered)
        verdicts.append(holds)
        detail = ("identical per sample" if same else
                  f"difference {100 * mean:+.1f} points, 95% interval "
                  f"[{100 * low:+.1f}, {100 * high:+.1f}]" if len(pairs) >= 2 else
                  f"difference {100 * mean:+.1f} points, one seed: no interval")
        lines.append(f"n = {n_text(n)}: trained {100 * a.mean():.1f}, applied {100 * b.mean():.1f} "
                     f"({len(pairs)} seed pairs; {detail}): {'holds' if holds else 'FAILS'}")
    if not lines:
        return []
    head = (f"Equivalence check (declared): log-n scaling with s = 1/ln 16 trained in "
            f"({EQUIVALENCE}) against the same normaliser applied at inference to the softmax "
            f"models, paired by seed. It {'holds at every n' if all(verdicts) else 'FAILS at some n'}"
            f" (holds: identical per sample, or the 95% interval of the paired differences "
            f"contains 0). It is not expected bit-exactly: softmax trains through the short-row "
            f"lane kernel, ssmax through the row kernel (the same beta = 1, other rounding).")
    return [head] + lines


def board(path: str) -> Board:
    groups = mr.load_eval_max_groups(path)
    rows = entries(groups)
    present = sorted({n for e in rows for n in e.data.ns})
    ns = [n for n in LEADERBOARD_N if n in present]
    reference = next((e for e in rows if e.kind == "trained" and e.name == REFERENCE), None)
    cells = {(e.name, n): cell(e, reference, n) for e in rows for n in ns}
    any_data = next(iter(groups.values()))
    return Board(path, ns, rows, cells, equivalence_lines(groups, ns),
                 mr.source_line(any_data.result))


# ---- text


def n_text(n: int) -> str:
    return f"2^{int(math.log2(n))}" if n >= 2 ** 17 else str(n)


def accuracy_text(s: mr.Summary | None, latex: bool = False) -> str:
    if s is None:
        return "--" if latex else "—"
    if s.models >= 2:
        pm = " $\\pm$ " if latex else " ± "
        return f"{100 * s.mean:.1f}{pm}{100 * s.half_width:.1f}"
    return f"{100 * s.mean:.1f} [{100 * s.low:.1f}, {100 * s.high:.1f}]"


def moonshot(entry: Entry, n: int, c: Cell) -> bool:
    """A remedy trained in, above the best public number at 16384 (inference-only variants do not
    count: top-1 equals the ranking rate by construction)."""
    return (entry.kind == "trained" and n == BEST_PUBLIC_N and c.accuracy is not None
            and 100 * c.accuracy.mean > BEST_PUBLIC)


def tests_text(c: Cell, latex: bool = False) -> str:
    """'t 0.012 / M 3.1e-04 (12/40)': paired t p, largest McNemar p, discordant only-this /
    only-softmax summed over seed pairs."""
    if c.accuracy is None:
        return "--" if latex else "—"
    if not c.mcnemar:
        return "ref." if math.isnan(c.t_p) else f"t {mr.format_p(c.t_p)}"
    m = max(t.p for t in c.mcnemar)
    text = (f"t {mr.format_p(c.t_p)} / M {mr.format_p(m)} "
            f"({sum(t.only_a for t in c.mcnemar)}/{sum(t.only_b for t in c.mcnemar)})")
    return text


def distance_text(s: mr.Summary | None, latex: bool = False) -> str:
    if s is None:
        return "--" if latex else "—"
    text = f"{100 * s.mean:+.1f}"
    if s.models >= 2 and not math.isnan(s.low):
        text += (" $\\pm$ " if latex else " ± ") + f"{100 * s.half_width:.1f}"
    return text.replace("-", "$-$") if latex else text


def _seeds(e: Entry) -> str:
    return str(len(e.data.train_seeds))


def paper_rows(ns: list, latex: bool = False) -> list:
    dash = "--" if latex else "—"
    rows = []
    for x in mr.PAPER_ACCURACY:
        values = [mr.paper_value(x, n) for n in ns]
        rows.append([f"paper: {x}", "paper", dash]
                    + [f"{v:.1f}" if v is not None else dash for v in values])
    rows.append(["best public (docs/science.md#published-numbers)", "published", dash]
                + [f"{BEST_PUBLIC:.1f}" if n == BEST_PUBLIC_N else dash for n in ns])
    return rows


def table_rows(b: Board, what: str, latex: bool = False) -> list:
    """[[name, kind, seeds, cell per n]] for 'accuracy', 'tests' or 'ranking'."""
    rows = []
    for e in b.entries:
        cells = []
        for n in b.ns:
            c = b.cells[(e.name, n)]
            if what == "accuracy":
                text = accuracy_text(c.accuracy, latex)
                if moonshot(e, n, c):
                    text += " ★" if not latex else " $\\star$"
            elif what == "tests":
                text = tests_text(c, latex)
            else:
                text = distance_text(c.to_ranking, latex)
            cells.append(text)
        kind = e.kind + (" (equivalence check)" if e.name == EQUIVALENCE else "")
        rows.append([e.name, kind, _seeds(e)] + cells)
    if what == "accuracy":
        rows += paper_rows(b.ns, latex)
    return rows


CAPTIONS = {
    "accuracy": "Accuracy (%): mean over seeds ± half-width of the 95% t interval across seeds "
                "(one seed: its 95% Wilson interval in brackets). ★: a remedy trained in above the "
                "best public 27.9% at n = 16384 (inference-only variants do not count).",
    "tests": "Against softmax (softmax-trained models evaluated with softmax): t = two-sided "
             "paired t-test over seeds (scipy.stats.ttest_rel; n/a with fewer than 2 seed pairs "
             "or constant differences); M = exact McNemar test on the shared sets of each seed "
             "pair, the largest p over pairs; (a/b) = sets only this entry / only softmax got "
             "right, summed over pairs.",
    "ranking": "Distance to the ranking rate (points): accuracy − the rate at which the highest "
               "logit is on the true maximum (the ceiling of any normaliser that keeps the argmax; "
               "soft mixing can exceed it), mean over seeds ± 95% t half-width.",
}
TITLES = {"accuracy": "Accuracy", "tests": "Tests against softmax", "ranking": "Distance to the ranking rate"}


def markdown(b: Board) -> str:
    head = ["entry", "kind", "seeds"] + [f"n = {n_text(n)}" for n in b.ns]
    lines = ["# Remedies leaderboard (docs/science.md#remedies, docs/science.md#figures)", "",
             b.source, "",
             f"Every remedy trained into the max-retrieval head at n = {b.entries[0].data.train_n} "
             "(same data, steps, schedule and seeds) and evaluated with its own normaliser; `softmax + X`: X applied "
             "at inference to the softmax-trained models.", ""]
    for what in ("accuracy", "tests", "ranking"):
        lines += [f"## {TITLES[what]}", "", CAPTIONS[what], "",
                  "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(row) + " |" for row in table_rows(b, what)]
        lines.append("")
    if b.equivalence:
        lines += ["## Equivalence check", ""] + [f"- {x}" for x in b.equivalence] + [""]
    return "\n".join(lines)


def _tex(text: str) -> str:
    for a, c in (("\\", r"\textbackslash{}"), ("_", r"\_"), ("%", r"\%"), ("&", r"\&"),
                 ("#", r"\#"), ("^", r"\^{}"), ("±", r"$\pm$"), ("−", "$-$"), ("★", r"$\star$"),
                 ("—", "--")):
        text = text.replace(a, c)
    return text


def latex(b: Board) -> str:
    out = ["% Generated by analysis/remedies_table.py; do not edit. Needs \\usepackage{booktabs}.",
           f"% {b.source}"]
    cols = "llr" + "c" * len(b.ns)
    head = "entry & kind & seeds & " + " & ".join(f"$n = {n_text(n)}$" for n in b.ns) + " \\\\"
    for what in ("accuracy", "tests", "ranking"):
        out += ["\\begin{table}[t]", "\\centering", "\\small",
                f"\\caption{{Remedies leaderboard, {TITLES[what].lower()}. {_tex(CAPTIONS[what])}}}",
                f"\\label{{tab:remedies-{what}}}", f"\\begin{{tabular}}{{{cols}}}", "\\toprule",
                head, "\\midrule"]
        for row in table_rows(b, what, latex=True):
            cells = [_tex(row[0]) if row[1] in ("paper", "published")
                     else f"\\texttt{{{_tex(row[0])}}}"]
            cells += [_tex(row[1]), row[2]]
            cells += [c if "$" in c else _tex(c) for c in row[3:]]
            out.append(" & ".join(cells) + " \\\\")
        out += ["\\bottomrule", "\\end{tabular}", "\\end{table}", ""]
    if b.equivalence:
        out += ["% " + line for line in b.equivalence] + [""]
    return "\n".join(out)


def make(path: str, outdir: str) -> list:
    """Tables remedies_leaderboard.md and remedies_leaderboard.tex; returns the paths."""
    b = board(path)
    return [common.save_text(markdown(b), outdir, "remedies_leaderboard.md"),
            common.save_text(latex(b), outdir, "remedies_leaderboard.tex")]


# What this module makes (analysis/products.py collects it for make_figures and the page).
PRODUCTS = (
    product.Product("remedies_leaderboard", INPUT_FILE, make),
)


if __name__ == "__main__":
    sys.exit(common.run_standalone(make, __doc__.splitlines()[0]))
