"""Max-retrieval accuracy table (docs/science.md#figures) from an "eval-max" result file (docs/science.md#max-retrieval), as Markdown
(max_accuracy.md) and LaTeX (max_accuracy.tex, booktabs).

Per n: each normaliser's accuracy, mean over trained models ± the half-width of the 95% t-interval
across them (one model: its Wilson interval in brackets); the paper's published accuracies; the
difference adaptive − softmax; McNemar's exact test on each model's paired samples (discordant pairs
summed over models, the largest p); the paired t-test across models; and the paper's reported p-value.
McNemar is per model because every model sees the same sets at a given n: pooling the models would
count correlated pairs as independent and overstate the significance.

    /usr/bin/python3 analysis/max_accuracy_table.py results/eval-max.h5 --out results/figures
"""
from __future__ import annotations

import dataclasses
import math
import sys

import common
import product
import max_retrieval as mr

EXPERIMENT = mr.EXPERIMENT
INPUT_FILE = mr.INPUT_FILE
PAIR = ("softmax", "adaptive")  # the comparison the paper tests


@dataclasses.dataclass
class Row:
    n: int
    models: int
    samples: int                 # paired samples, all models (models × samples per model)
    accuracy: dict               # normaliser -> Summary (fractions) or None when not evaluated
    difference: float            # mean over models of adaptive − softmax accuracy (fraction), nan
    mcnemar: list                # per model (empty when the pair was not evaluated)
    t_p: float                   # nan when undefined


def table_rows(data: mr.EvalMax) -> list:
    rows = []
    for n in data.ns:
        accuracy = {x: data.summary("correct", x, n) if data.has(x, n) else None
                    for x in data.normalisers}
        tested = all(accuracy.get(x) is not None for x in PAIR)
        rows.append(Row(
            n=n, models=data.models(n), samples=sum(c.samples for c in data.cells[n]),
            accuracy=accuracy,
            difference=(float((data.per_model("correct", PAIR[1], n)
                               - data.per_model("correct", PAIR[0], n)).mean())
                        if tested else math.nan),
            mcnemar=([mr.mcnemar_exact(c.correct[PAIR[0]], c.correct[PAIR[1]]) for c in data.cells[n]]
                     if tested else []),
            t_p=(mr.paired_t_p(data.per_model("correct", PAIR[1], n),
                               data.per_model("correct", PAIR[0], n)) if tested else math.nan)))
    return rows


def discordant_text(tests: list) -> str:
    """Sets only softmax / only adaptive got right, summed over models."""
    if not tests:
        return "n/a"
    return f"{sum(t.only_a for t in tests)} / {sum(t.only_b for t in tests)}"


def largest_p(tests: list) -> float:
    return max(t.p for t in tests) if tests else math.nan


def accuracy_text(s: mr.Summary | None, latex: bool = False) -> str:
    """'81.6 ± 2.1' (t half-width across models) or '81.6 [76.4, 85.9]' (one model: Wilson)."""
    if s is None:
        return "—" if not latex else "--"
    if s.models >= 2:
        return (f"{100 * s.mean:.1f} $\\pm$ {100 * s.half_width:.1f}" if latex
                else f"{100 * s.mean:.1f} ± {100 * s.half_width:.1f}")
    return f"{100 * s.mean:.1f} [{100 * s.low:.1f}, {100 * s.high:.1f}]"


def paper_text(x: str, n: int, latex: bool = False) -> str:
    value = mr.paper_value(x, n)
    return f"{value:.1f}" if value is not None else ("--" if latex else "—")


def paper_p_text(n: int, latex: bool = False) -> str:
    p = mr.PAPER_T_TEST_P.get(n)
    if p is None:
        return "--" if latex else "—"
    return latex_p(p) if latex else f"{p:g}"


def latex_p(p: float) -> str:
    text = mr.format_p(p)
    if "e" in text:
        mantissa, exponent = text.split("e")
        return f"${mantissa}\\times10^{{{int(exponent)}}}$"
    return text


def difference_text(d: float) -> str:
    return "n/a" if math.isnan(d) else f"{100 * d:+.1f}"


def plain_label(x: str) -> str:
    """The normaliser's label without mathtext, for Markdown ('adaptive θ')."""
    return mr.normaliser_label(x).replace("$\\theta$", "θ")


def tests_note(data: mr.EvalMax) -> str:
    a, b = (plain_label(x) for x in PAIR)
    return (f"McNemar: exact two-sided binomial test (scipy.stats.binomtest, p = 1/2) on the "
            f"discordant pairs of each model's paired samples (the same sets for both "
            f"normalisers), the largest p over models shown (the models see the same sets, so "
            f"their pairs are not independent and are not pooled); 'discordant' counts sets only "
            f"{a} got right / only {b} got right, summed over models. Paired t: two-sided scipy.stats.ttest_rel on the per-model "
            f"accuracies ({b} vs {a}); n/a with fewer than 2 models or identical differences. "
            f"Paper p: the paired t-test p-values the paper reports (docs/science.md#published-numbers). "
            f"Δ: mean over models of {b} − {a}, in points.")


def header_lines(data: mr.EvalMax) -> list:
    per_model = sorted({c.samples for cells in data.cells.values() for c in cells})
    seeds = data.train_seeds
    return [
        f"{len(seeds)} model(s) trained at n = {data.train_n} (training seeds "
        f"{', '.join(map(str, seeds))}); evaluation seed(s) "
        f"{', '.join(map(str, data.eval_seeds))}; samples per model and size: "
        f"{', '.join(map(str, per_model))}.",
        "Accuracy in %: mean over models ± half-width of the 95% t-interval across models "
        "(with one model: [95% Wilson interval of its samples]). '—': not evaluated or not "
        "published at that n.",
    ]


def markdown(data: mr.EvalMax, rows: list) -> str:
    xs = data.normalisers
    head = (["n", "models"] + [plain_label(x) for x in xs]
            + [f"paper {plain_label(x)}" for x in mr.PAPER_ACCURACY]
            + ["Δ", "discordant", "McNemar p (largest)", "paired t p", "paper p"])
    lines = ["# Max-retrieval accuracy (docs/science.md#max-retrieval, docs/science.md#figures)", "", mr.source_line(data.result),
             *header_lines(data), "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [str(r.n), str(r.models)] + [accuracy_text(r.accuracy[x]) for x in xs]
        cells += [paper_text(x, r.n) for x in mr.PAPER_ACCURACY]
        cells += [difference_text(r.difference),
                  discordant_text(r.mcnemar),
                  mr.format_p(largest_p(r.mcnemar)) if r.mcnemar else "n/a",
                  mr.format_p(r.t_p), paper_p_text(r.n)]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"Tests. {tests_note(data)}", ""]
    return "\n".join(lines)


def _tex_escape(text: str) -> str:
    """Escape TeX specials in a plain label; labels holding math ($…$) are TeX already."""
    if "$" in text:
        return text
    for a, b in (("\\", r"\textbackslash{}"), ("_", r"\_"), ("%", r"\%"), ("&", r"\&"),
                 ("#", r"\#")):
        text = text.replace(a, b)
    return text


def latex(data: mr.EvalMax, rows: list) -> str:
    xs = data.normalisers
    labels = [_tex_escape(mr.normaliser_label(x)) for x in xs]
    paper_labels = [_tex_escape(mr.normaliser_label(x)) for x in mr.PAPER_ACCURACY]
    columns = "rr" + "c" * len(xs) + "c" * len(paper_labels) + "rcccc"
    note = tests_note(data)
    for plain, tex in (("%", r"\%"), ("_", r"\_"), ("θ", r"$\theta$"), ("−", "$-$"),
                       ("§", r"\S"), ("Δ", r"$\Delta$"), ("p = 1/2", "$p = 1/2$")):
        note = note.replace(plain, tex)
    caption = (f"Max-retrieval accuracy (\\%) of models trained at $n = {data.train_n}$: mean over "
               f"models $\\pm$ half-width of the 95\\% $t$-interval across models (one model: "
               f"95\\% Wilson interval in brackets), beside the paper's numbers. {note}")
    out = [
        "% Generated by analysis/max_accuracy_table.py; do not edit. Needs \\usepackage{booktabs}.",
        f"% {mr.source_line(data.result)}",
        "\\begin{table}[t]",
        "\\centering",
        "\\small",
        f"\\caption{{{caption}}}",
        "\\label{tab:max-accuracy}",
        f"\\begin{{tabular}}{{{columns}}}",
        "\\toprule",
        " & & \\multicolumn{" + str(len(xs)) + "}{c}{this suite} & \\multicolumn{"
        + str(len(paper_labels)) + "}{c}{paper} & & & \\multicolumn{2}{c}{$p$ (ours)} & \\\\",
        f"\\cmidrule(lr){{3-{2 + len(xs)}}}\\cmidrule(lr){{{3 + len(xs)}-"
        f"{2 + len(xs) + len(paper_labels)}}}"
        f"\\cmidrule(lr){{{5 + len(xs) + len(paper_labels)}-{6 + len(xs) + len(paper_labels)}}}",
        "$n$ & models & " + " & ".join(labels + paper_labels)
        + " & $\\Delta$ & discordant & McNemar & paired $t$ & paper $p$ \\\\",
        "\\midrule",
    ]
    for r in rows:
        cells = [str(r.n), str(r.models)] + [accuracy_text(r.accuracy[x], latex=True) for x in xs]
        cells += [paper_text(x, r.n, latex=True) for x in mr.PAPER_ACCURACY]
        cells += [difference_text(r.difference).replace("-", "$-$"),
                  discordant_text(r.mcnemar),
                  latex_p(largest_p(r.mcnemar)) if r.mcnemar else "n/a", latex_p(r.t_p),
                  paper_p_text(r.n, latex=True)]
        out.append(" & ".join(cells) + " \\\\")
    out += ["\\bottomrule", "\\end{tabular}", "\\end{table}", ""]
    return "\n".join(out)


def make(path: str, outdir: str) -> list:
    """Tables max_accuracy.md and max_accuracy.tex; returns the paths."""
    data = mr.load_eval_max(path)
    rows = table_rows(data)
    return [common.save_text(markdown(data, rows), outdir, "max_accuracy.md"),
            common.save_text(latex(data, rows), outdir, "max_accuracy.tex")]


# What this module makes (analysis/products.py collects it for make_figures and the page).
PRODUCTS = (
    product.Product("max_accuracy_table", INPUT_FILE, make),
)


if __name__ == "__main__":
    sys.exit(common.run_standalone(make, __doc__.splitlines()[0]))
