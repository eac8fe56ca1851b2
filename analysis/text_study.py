"""The text study (docs/science.md#the-text-study-pre-registered) from its eval-text files: text_study.md
(the competence gate of every model, the primary endpoint table, the same on every sample, the
per-arm entropies), text_study_accuracy.png/pdf and text_study_entropy.png/pdf.

The input is eval-text.h5; the study's other evaluation files beside it (STUDY_FILES: the primary
lengths at 2000 samples in eval-text-primary.h5, the NoPE model, the second task `max_value`) are
joined when present. The primary endpoint, its tests, the gate and the verdict rule are in
analysis/text_study_endpoint.py.

Secondary (unrestricted): exact match at SECONDARY_LENGTHS per arm (mean over seeds, 95% t-interval
across seeds; one seed: its Wilson interval) with the chance line 1/L of a uniform guess among the L
items, the models' own training lengths shaded; the answer rows' attention entropy after and before
the normaliser's beta and their logit spread per arm, at the training lengths (the models' own) and
at each longer length.

    /usr/bin/python3 analysis/text_study.py results/eval-text.h5 --out results/figures
"""
from __future__ import annotations

import dataclasses
import os
import sys

import numpy as np
from matplotlib.lines import Line2D

import common
import product
import competence_gate
import max_retrieval as mr
import text_paired_table as tp
from fig_text_accuracy import seed_interval
from text_results import read_points
from text_study_endpoint import (ALPHA, NO_DIFFERENCE, NOT_MEASURED, PRIMARY_LENGTHS, Study, endpoints,
                                 independent_samples, load)

EXPERIMENT = "eval-text"
INPUT_FILE = "eval-text.h5"
# The study's evaluation files, read together when they lie beside INPUT_FILE (sweeps/paper/eval-text*.cfg).
STUDY_FILES = ("eval-text.h5", "eval-text-primary.h5", "eval-text-nope.h5", "eval-text-max-value.h5",
               "eval-text-max-value-primary.h5")
SECONDARY_LENGTHS = tuple(range(4, 17)) + (20, 24, 32, 48, 64)


def study_files(path: str) -> list:
    """`path` and the other STUDY_FILES present beside it."""
    here = os.path.dirname(os.path.abspath(path))
    others = [os.path.join(here, name) for name in STUDY_FILES if name != os.path.basename(path)]
    return [path] + [p for p in others if os.path.exists(p)]


# ---- secondary views


@dataclasses.dataclass
class Arm:
    """One curve: models trained with `normaliser`, their heads (`item` = trained) or another
    normaliser applied at inference."""
    config: object
    algorithm: str
    normaliser: str
    item: str

    @property
    def label(self) -> str:
        return tp.remedy_label(self.normaliser, self.item)


def arms(study: Study) -> list:
    keys = {(k[0], k[1], k[4], k[5]) for k in study.outcomes.correct}
    return [Arm(*k) for k in sorted(keys, key=lambda k: (str(k[0]), k[1], k[2] != tp.BASELINE, k[2], k[3] != "trained", k[3]))]


def accuracy(study: Study, arm: Arm, n: int) -> tuple | None:
    """(mean, low, high) exact match of an arm at length n over its seeds, or None."""
    cells = [(k, v) for k, v in study.outcomes.correct.items()
             if (k[0], k[1], k[2], k[4], k[5]) == (arm.config, arm.algorithm, n, arm.normaliser, arm.item)]
    if not cells:
        return None
    return seed_interval([v.mean() for _, v in cells], [v.size for _, v in cells], [k[6] for k, _ in cells])


HEAD_METRICS = ("answer_entropy", "answer_entropy_before_beta", "answer_delta", "answer_entropy_uniform")


def head_measures(study: Study) -> dict:
    """(config, algorithm, length, normaliser, item) -> {metric: mean over seeds} of HEAD_METRICS,
    over every file of the study."""
    sums: dict = {}
    items = {k[5] for k in study.outcomes.correct}
    for path in study.paths:
        r, refs, algos, lengths, evaluated, _ = read_points(path)
        models = tp.model_configurations(path, sorted(set(refs)))
        for i in range(len(r)):
            m = models[refs[i]]
            if m is None or not evaluated[i]:
                continue
            normaliser, _, config = m
            for item in items:
                names = [f"{x}.{item}" for x in HEAD_METRICS]
                if not all(name in r.metrics for name in names) or not np.isfinite(r.metrics[names[0]][i]):
                    continue
                if item != "trained" and normaliser != tp.BASELINE:
                    continue
                cell = sums.setdefault((config, algos[i], int(lengths[i]), normaliser, item), [])
                cell.append([float(r.metrics[name][i]) for name in names])
    return {k: dict(zip(HEAD_METRICS, np.mean(v, axis=0))) for k, v in sums.items()}


def _chance(n: int) -> float:
    return 100.0 / n


def arm_colours(study: Study) -> dict:
    """Arm label -> colour: softmax blue and adaptive orange as in every figure, an inference-only
    arm a colour of its own."""
    return mr.normaliser_colours(list(dict.fromkeys(a.label for a in arms(study))))


def mark_training_lengths(ax, lengths) -> None:
    for n in lengths:
        ax.axvline(n, color="0.8", lw=0.8, zorder=0)


def accuracy_figure(study: Study, outdir: str, scale: str) -> list:
    panels = sorted({(a.config, a.algorithm) for a in arms(study)}, key=str)
    fig, axes, legend_ax = common.new_figure(ncols=len(panels), width=3.0 * len(panels) + 2.6,
                                             height=2.8, legend_width=0.8 / len(panels))
    axes = [axes] if len(panels) == 1 else axes
    colours = arm_colours(study)
    handles = {}
    for ax, (config, algo) in zip(axes, panels):
        ns = sorted({k[2] for k in study.outcomes.correct if k[:2] == (config, algo)} & set(SECONDARY_LENGTHS))
        mark_training_lengths(ax, study.training_lengths[config])
        ax.plot(ns, [_chance(n) for n in ns], color="0.3", ls=":", lw=1.0)
        for arm in (a for a in arms(study) if (a.config, a.algorithm) == (config, algo)):
            points = [(n, accuracy(study, arm, n)) for n in ns]
            points = [(n, v) for n, v in points if v is not None]
            if not points:
                continue
            xs = [n for n, _ in points]
            mean = [100 * v[0] for _, v in points]
            low = [100 * v[1] if np.isfinite(v[1]) else 100 * v[0] for _, v in points]
            high = [100 * v[2] if np.isfinite(v[2]) else 100 * v[0] for _, v in points]
            ls = "-" if arm.item == "trained" else "--"
            ax.fill_between(xs, low, high, color=colours[arm.label], alpha=0.18, lw=0)
            ax.plot(xs, mean, color=colours[arm.label], ls=ls, marker="o" if arm.item == "trained" else "s",
                    ms=3, lw=1.3)
            handles[arm.label] = Line2D([], [], color=colours[arm.label], ls=ls, ms=3, lw=1.3,
                                        marker="o" if arm.item == "trained" else "s", label=arm.label)
        ax.set_xscale("log", base=2)
        ax.set_xticks([n for n in (4, 8, 16, 32, 64) if ns and ns[0] <= n <= ns[-1]])
        ax.get_xaxis().set_major_formatter(lambda v, _: f"{int(v)}")
        ax.set_ylim(-2, 102)
        group = tp.group_text(study.groups[config], algo)
        ax.set_title(algo.replace("_", " ") + (f" ({group})" if group else ""))
        ax.set_xlabel("length L (items)")
    axes[0].set_ylabel("exact match of the final output [%]")
    extra = [Line2D([], [], color="0.3", ls=":", lw=1.0, label="chance 1/L"),
             Line2D([], [], color="0.8", lw=0.8, label="training lengths")]
    legend_ax.legend(handles=list(handles.values()) + extra, loc="upper left", title=f"{scale} scale",
                     borderaxespad=0.0)
    fig.suptitle("Text study: exact match, every sample (mean over seeds)", fontsize=9)
    return common.save_figure(fig, outdir, "text_study_accuracy")


def entropy_figure(study: Study, measures: dict, outdir: str, scale: str) -> list:
    panels = sorted({(k[0], k[1]) for k in measures}, key=str)
    fig, axes, legend_ax = common.new_figure(ncols=2 * len(panels), width=5.6 * len(panels) + 2.6,
                                             height=2.8, legend_width=0.8 / len(panels))
    colours = arm_colours(study)
    handles = {}
    for p, (config, algo) in enumerate(panels):
        ax_h, ax_d = axes[2 * p], axes[2 * p + 1]
        for arm in (a for a in arms(study) if (a.config, a.algorithm) == (config, algo)):
            ns = sorted(k[2] for k in measures if (k[0], k[1], k[3], k[4]) == (config, algo, arm.normaliser, arm.item))
            if not ns:
                continue
            cell = [measures[(config, algo, n, arm.normaliser, arm.item)] for n in ns]
            colour, marker = colours[arm.label], "o" if arm.item == "trained" else "s"
            ax_h.plot(ns, [c["answer_entropy"] for c in cell], color=colour, marker=marker, ms=3, lw=1.3)
            ax_h.plot(ns, [c["answer_entropy_before_beta"] for c in cell], color=colour, marker=marker, ms=3,
                      lw=1.0, ls="--", mfc="none")
            ax_d.plot(ns, [c["answer_delta"] for c in cell], color=colour, marker=marker, ms=3, lw=1.3)
            handles[arm.label] = Line2D([], [], color=colour, marker=marker, ms=3, lw=1.3, label=arm.label)
        ns = sorted({k[2] for k in measures if k[:2] == (config, algo)})
        uniform = [np.mean([v["answer_entropy_uniform"] for k, v in measures.items() if k[:3] == (config, algo, n)])
                   for n in ns]
        ax_h.plot(ns, uniform, color="0.5", lw=0.8, ls=":")
        for ax in (ax_h, ax_d):
            mark_training_lengths(ax, study.training_lengths[config])
            ax.set_xscale("log", base=2)
            ax.set_xticks([n for n in (4, 8, 16, 32, 64) if ns and ns[0] <= n <= ns[-1]])
            ax.get_xaxis().set_major_formatter(lambda v, _: f"{int(v)}")
            ax.set_xlabel("length L (items)")
        ax_h.set_title(f"{algo.replace('_', ' ')}: entropy")
        ax_h.set_ylabel("nats")
        ax_d.set_title(f"{algo.replace('_', ' ')}: logit spread δ")
    extra = [Line2D([], [], color="0.3", lw=1.3, label="after β"),
             Line2D([], [], color="0.3", lw=1.0, ls="--", marker="o", mfc="none", ms=3, label="before β"),
             Line2D([], [], color="0.5", lw=0.8, ls=":", label="uniform (ln k)")]
    legend_ax.legend(handles=list(handles.values()) + extra, loc="upper left", title=f"{scale} scale",
                     borderaxespad=0.0)
    fig.suptitle("Text study: the answer rows' heads (mean over rows, heads, seeds)", fontsize=9)
    return common.save_figure(fig, outdir, "text_study_entropy")


# ---- the page's text


def seed_text(s) -> str:
    kept = ", ".join(f"{x.kept} of {x.total} at {x.length}" for x in s.strata)
    return (f"seed {s.seed}: {kept}; softmax / arm right {s.softmax_right} / {s.arm_right}, discordant "
            f"{s.mcnemar.only_a} / {s.mcnemar.only_b}, McNemar p {mr.format_p(s.mcnemar.p)}")


def p_text(e) -> tuple:
    """(CMH chi2, pooled p, exact binomial p, Holm p) as the table prints them."""
    if not e.measured:
        return ("n/a",) * 4
    chi2 = "n/a" if e.chi2 != e.chi2 else f"{e.chi2:.2f}"
    return (chi2, mr.format_p(e.pooled_p), mr.format_p(e.exact_p),
            "(primary: raw p)" if e.primary else mr.format_p(e.holm_p))


def endpoint_table(rows: list, title: str) -> list:
    head = ["algorithm", "arm against softmax",
            "per seed (kept samples per length, softmax / arm right, discordant only softmax / only arm, McNemar p)",
            "Δ (points)", "signs", "CMH χ²", "pooled p", "exact binomial p", "Holm p", "verdict"]
    lines = [title, "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for e in rows:
        algo = f"{e.algorithm} ({e.group})" if e.group else e.algorithm
        seeds = "; ".join(seed_text(s) for s in e.seeds) or "none"
        if e.missing:
            seeds += f"; lacking a length: seed {', '.join(str(s) for s in e.missing)}"
        verdict = e.verdict
        if e.gate_failures:
            verdict += " (gate: " + "; ".join(e.gate_failures) + ")"
        signs = " ".join({1: "+", -1: "−", 0: "0"}[s.sign] for s in e.seeds)
        lines.append("| " + " | ".join([algo, e.remedy + (" (primary)" if e.primary else ""), seeds,
                                        f"{e.difference:+.1f}" if e.seeds else "n/a", signs, *p_text(e),
                                        verdict]) + " |")
    return lines + [""]


def gate_table(study: Study) -> list:
    """Every model's gate figure: the models a row needs."""
    lines = ["## Competence gate", "", f"Greedy exact match of the final output at the model's own training lengths, "
             f"from the rows with normaliser `trained`; a model passes at ≥ {100 * competence_gate.GATE:g}%, "
             "otherwise it is \"not learned\" and the rows that need it say \"not measured\".", "",
             "| configuration | model | exact match | gate |", "|---|---|---|---|"]
    for (config, normaliser, seed), c in sorted(study.gate.items(), key=lambda kv: str(kv[0])):
        group = tp.group_text(study.groups.get(config, {}), "")
        lines.append(f"| {group or '—'} | {normaliser}, seed {seed} | {100 * c.exact:.1f}% | "
                     f"{'passes' if c.passes else 'not learned'} |")
    return lines + [""]


def entropy_table(study: Study, measures: dict) -> list:
    head = ["algorithm", "arm", "lengths", "entropy after β", "entropy before β", "δ", "uniform ln k"]
    lines = ["## The answer rows' heads", "", "Mean over the answer rows, heads and seeds, and over the lengths "
             "of each column; nats (δ in logit units). Training lengths: the models' own.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for arm in arms(study):
        trained = set(study.training_lengths[arm.config])
        ns = sorted(k[2] for k in measures if (k[0], k[1], k[3], k[4]) == (arm.config, arm.algorithm, arm.normaliser, arm.item))
        for label, chosen in [("training", [n for n in ns if n in trained])] + \
                             [(str(n), [n]) for n in ns if n > max(trained, default=0)]:
            if not chosen:
                continue
            cells = [measures[(arm.config, arm.algorithm, n, arm.normaliser, arm.item)] for n in chosen]
            mean = {m: np.mean([c[m] for c in cells]) for m in HEAD_METRICS}
            lines.append("| " + " | ".join([arm.algorithm, arm.label, label] + [
                f"{mean[m]:.3f}" for m in ("answer_entropy", "answer_entropy_before_beta", "answer_delta",
                                           "answer_entropy_uniform")]) + " |")
    return lines + [""]


RULE = (f"Primary endpoint (pre-registered): exact match of the final output at lengths "
        f"{', '.join(map(str, PRIMARY_LENGTHS))}, on the samples whose answer index is below the largest training "
        "length where the answer is an index (minimum; the output-extrapolation confound removed; max_value keeps "
        "every sample), each arm against softmax of the same seed on the same samples. Per seed: McNemar's exact "
        "test, the lengths pooled. Pooled over the (seed, length) strata: Cochran-Mantel-Haenszel with continuity "
        "correction, χ² = (|Σ(b−c)| − 1)² / Σ(b+c) on 1 degree of freedom (b: only the arm right, c: only softmax); "
        "the exact binomial p of the pooled discordant pairs beside it. Adaptive trained in (the primary "
        "comparison) is judged by its raw pooled p, the other arms by their Holm-adjusted pooled p over the "
        f"comparisons of the table's algorithm. A direction is claimed only when every seed's difference has its "
        f"sign and that p < {ALPHA}; otherwise \"{NO_DIFFERENCE}\"; a comparison one of whose models fails the "
        f"competence gate is \"{NOT_MEASURED}\".")


def samples_note(study: Study) -> str:
    independent = independent_samples(study)
    if independent is None:
        return ""
    return ("Samples at the primary lengths: drawn independently for each training seed (sample_seed = training)."
            if independent else "Samples at the primary lengths: shared by the seeds (sample_seed = eval), so the "
            "seeds are not independent strata as the design asks; re-run the primary evaluation with "
            "--sample-seed training.")


def markdown(study: Study, primary: list, unrestricted: list, measures: dict) -> str:
    lines = ["# The text study (docs/science.md#the-text-study-pre-registered)", "",
             f"From {', '.join(study.paths)}. Samples generated in the CLRS-Text format, not the released data.", "",
             RULE, "", samples_note(study), ""]
    lines += gate_table(study)
    if not primary:
        lines += ["No comparison: the files hold no softmax-trained model with a matching arm model (same seed "
                  "and training parameters), or its training file was not found.", ""]
        return "\n".join(lines)
    below = sorted({str(e.index_below) for e in primary if e.index_below is not None})
    lines += endpoint_table(primary, "## Primary endpoint" + (f" (answer index < {', '.join(below)} where it is an "
                                                               "index)" if below else ""))
    lines += endpoint_table(unrestricted, "## The same on every sample (confounded by output extrapolation; "
                                          "for comparison, not the endpoint)")
    lines += entropy_table(study, measures)
    return "\n".join(lines)


def make(path: str, outdir: str) -> list:
    study = load(study_files(path))
    scale = str(common.load_result(path, EXPERIMENT).attrs.get("scale", "custom"))
    measures = head_measures(study)
    written = [common.save_text(markdown(study, endpoints(study), endpoints(study, restrict=False), measures),
                                outdir, "text_study.md")]
    if study.outcomes.correct:
        written += accuracy_figure(study, outdir, scale)
    if measures:
        written += entropy_figure(study, measures, outdir, scale)
    return written


# What this module makes (analysis/products.py collects it for make_figures and the page).
PRODUCTS = (
    product.Product("text_study", INPUT_FILE, make,
        figures=(
        product.Figure(
            "text_study_accuracy", "Exact match against length, every sample",
            "Mean over seeds with a 95% interval, per arm, beside chance 1/L (dotted); grey lines mark the training "
            "lengths. Beyond 16 part of each curve's fall is output extrapolation (answers naming an index the "
            "models never wrote), which the primary endpoint removes."),
        product.Figure(
            "text_study_entropy", "The answer rows' heads",
            "Attention entropy of the rows that write the answer after (solid) and before (dashed) the normaliser's "
            "β, beside uniform attention's ln k, and their logit spread δ, per arm against length: learned sharpness"
            " (low entropy before β) told apart from the multiplier's."),)),
)


if __name__ == "__main__":
    sys.exit(common.run_standalone(make, __doc__.splitlines()[0]))
