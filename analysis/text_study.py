"""The text study's endpoint and its secondary views (docs/science.md#algorithmic-text), from an
"eval-text" result file and the training file its checkpoints name: text_study.md (the endpoint
table, the per-arm entropies), text_study_accuracy.png/pdf and text_study_entropy.png/pdf.

Primary endpoint. Exact match of the final output at lengths 24 and 32 (PRIMARY_LENGTHS), restricted
to the samples whose expected output names no index the models never wrote in training: answer_index
(eval-text's per-sample largest index, -1 for a copied value) below the configuration's largest
training length (16 for lengths 4-16), which removes the output-extrapolation confound. Each remedy is
compared with softmax sample by sample: models of one seed that differ only in the trained
normaliser see the same samples, and an item applied at inference runs on the softmax models.
- Per seed: McNemar's exact test on the discordant pairs of the restricted samples.
- Pooled over seeds: the Cochran-Mantel-Haenszel test stratified by seed, in its exact conditional
  form. Paired outcomes make every (seed, sample) pair a 2x2 stratum (model x right/wrong);
  concordant strata carry no information, and given the D discordant ones the number the remedy wins
  is Binomial(D, 1/2) under H0, so the exact CMH p is the two-sided binomial p of the remedy's wins
  summed over seeds (`cmh_paired_exact`). `cmh` is the classical statistic with continuity correction
  for any 2x2xK tables; on these pair strata it is McNemar's corrected chi-square of the pooled counts.
  The pooled test takes the seeds' discordant pairs as independent; seeds share their samples, so a
  sample that separates the arms in every seed counts once per seed. The sign rule below keeps one
  seed from carrying a verdict.
- Verdict: "<remedy> better" or "softmax better" only when the remedy-minus-softmax difference of
  every seed has that sign and the pooled p < ALPHA; otherwise "no difference shown"; "not measured"
  when no seed has both models at every primary length. The count of restricted samples per seed is
  shown with each test.

Secondary (unrestricted): exact match at SECONDARY_LENGTHS per arm (mean over seeds, 95% t-interval
across seeds; one seed: its Wilson interval) with the chance line 1/L of a uniform guess among the L
items, the models' own training lengths shaded; the answer rows' attention entropy after and before
the normaliser's beta and their logit spread per arm, at the training lengths (the models' own) and
at each longer length.

    /usr/bin/python3 analysis/text_study.py results/eval-text.h5 --out results/figures
"""
from __future__ import annotations

import dataclasses
import math
import sys

import h5py
import numpy as np
from matplotlib.lines import Line2D
from scipy import stats

import common
import max_retrieval as mr
import text_paired_table as tp
from fig_text_accuracy import seed_interval
from text_results import read_points

EXPERIMENT = "eval-text"
INPUT_FILE = "eval-text.h5"
PRIMARY_LENGTHS = (24, 32)
SECONDARY_LENGTHS = tuple(range(4, 17)) + (20, 24, 32, 48, 64)
ALPHA = 0.05
NO_DIFFERENCE = "no difference shown"


# ---- the pooled test


def cmh(tables) -> tuple:
    """Cochran-Mantel-Haenszel test of K 2x2 tables [[a, b], [c, d]] (rows: groups, columns:
    outcome yes/no), with continuity correction: (|sum a - sum E[a]| - 1/2)^2 / sum Var(a), with
    E[a] = (a+b)(a+c)/n and Var(a) = (a+b)(c+d)(a+c)(b+d) / (n^2 (n-1)); strata with n < 2 add
    nothing. Returns (statistic, p) against chi-square with 1 degree of freedom; (nan, nan) when no
    stratum varies."""
    deviation = variance = 0.0
    for (a, b), (c, d) in np.asarray(tables, dtype=float).reshape(-1, 2, 2):
        n = a + b + c + d
        if n < 2:
            continue
        deviation += a - (a + b) * (a + c) / n
        variance += (a + b) * (c + d) * (a + c) * (b + d) / (n * n * (n - 1))
    if variance <= 0:
        return (math.nan, math.nan)
    statistic = max(0.0, abs(deviation) - 0.5) ** 2 / variance
    return (statistic, float(stats.chi2.sf(statistic, 1)))


def pair_strata(correct_a, correct_b) -> np.ndarray:
    """The 2x2 tables of paired outcomes, one per pair: [[a right, a wrong], [b right, b wrong]]."""
    a = np.asarray(correct_a, dtype=bool)
    b = np.asarray(correct_b, dtype=bool)
    return np.stack([np.stack([a, ~a], -1), np.stack([b, ~b], -1)], -2).astype(int)


def cmh_paired_exact(tests) -> float:
    """Exact conditional CMH p over strata of paired pairs, from each stratum's McNemar counts
    (only_a: pairs only A got right, only_b: only B): two-sided binomial p of sum only_b among the
    discordant pairs, p = 1/2; 1 when there is none."""
    only_a = sum(t.only_a for t in tests)
    only_b = sum(t.only_b for t in tests)
    if only_a + only_b == 0:
        return 1.0
    return float(stats.binomtest(only_b, only_a + only_b, 0.5).pvalue)


# ---- the endpoint


@dataclasses.dataclass
class SeedTest:
    seed: object
    restricted: int          # paired samples kept by the restriction (summed over the lengths)
    total: int               # paired samples before it
    softmax_right: int
    remedy_right: int
    mcnemar: mr.McNemar      # only_a: only softmax right; only_b: only the remedy

    @property
    def sign(self) -> int:
        return int(np.sign(self.mcnemar.only_b - self.mcnemar.only_a))


@dataclasses.dataclass
class Endpoint:
    group: str               # training parameters that differ between configurations ("" if none)
    algorithm: str
    remedy: str
    lengths: tuple
    index_below: int | None  # the restriction: answer_index < index_below (None: unrestricted)
    seeds: list              # [SeedTest]
    missing: list            # seeds without both models at every primary length

    @property
    def pooled_p(self) -> float:
        return cmh_paired_exact([s.mcnemar for s in self.seeds]) if self.seeds else math.nan

    @property
    def difference(self) -> float:
        """Remedy - softmax exact match over the kept samples of every seed, in points."""
        n = sum(s.restricted for s in self.seeds)
        return 100.0 * sum(s.remedy_right - s.softmax_right for s in self.seeds) / n if n else math.nan

    @property
    def verdict(self) -> str:
        if not self.seeds:
            return "not measured"
        signs = {s.sign for s in self.seeds}
        if len(signs) == 1 and signs != {0} and self.pooled_p < ALPHA:
            return f"{self.remedy} better" if signs == {1} else f"{tp.BASELINE} better"
        return NO_DIFFERENCE


@dataclasses.dataclass
class Study:
    outcomes: tp.PairedOutcomes
    answer_index: dict       # (algorithm, length, eval seed) -> [samples] int
    training_lengths: dict   # configuration -> sorted training lengths (the models' own)
    groups: dict             # configuration -> its label among the file's configurations


def _training_lengths(config, outcomes) -> list:
    """The models' own training lengths: their `lengths` parameter ("4+5+...+16"), else the
    evaluated rows at training lengths."""
    text = dict(config).get("lengths")
    if text is not None:
        return sorted(int(x) for x in str(text).replace(",", "+").split("+") if x.strip())
    return sorted(outcomes.trained_lengths.get(config, ()))


def load(path: str) -> Study:
    outcomes = tp.paired_outcomes(path)
    answer_index = {}
    with h5py.File(path, "r") as f:
        for key, point in outcomes.points.items():
            name = f"arrays/{point}/answer_index"
            if name not in f:
                raise common.ResultFileError(f"{path}: point {point} lacks /{name}; the file was written by an "
                                             "older eval-text. Re-run it.")
            index = np.asarray(f[name][()], dtype=int)
            where = (key[1], key[2], key[3])
            if where in answer_index and not np.array_equal(answer_index[where], index):
                raise common.ResultFileError(f"{path}: models evaluated on {key[1]} at length {key[2]} saw different "
                                             "samples (their answer_index differ); evaluate them in one eval-text run.")
            answer_index[where] = index
    configs = sorted({k[0] for k in outcomes.correct})
    varying, _ = tp.configuration_labels(configs)
    return Study(outcomes, answer_index, {c: _training_lengths(c, outcomes) for c in configs},
                 {c: varying[c] for c in configs})


def endpoints(study: Study, lengths=PRIMARY_LENGTHS, restrict: bool = True) -> list:
    """Every remedy against softmax on every configuration and algorithm, at `lengths`, restricted
    to answer_index below the largest training length (restrict=False: every sample)."""
    correct = study.outcomes.correct
    out = []
    for config in sorted(study.groups):
        below = max(study.training_lengths[config], default=0) if restrict else None
        for algo in sorted({k[1] for k in correct if k[0] == config}):
            for normaliser, item in tp.remedies_of(correct, config):
                seeds, missing = [], []
                for seed in sorted({k[6] for k in correct if k[:2] == (config, algo)}, key=str):
                    a, b, kept, lacking = [], [], [], False
                    for n in lengths:
                        pairs = [(k, correct.get((*k[:4], normaliser, item, seed))) for k in sorted(correct, key=str)
                                 if k[:3] == (config, algo, n) and k[4:] == (tp.BASELINE, "trained", seed)]
                        pairs = [(k, other) for k, other in pairs if other is not None and other.shape == correct[k].shape]
                        lacking = lacking or not pairs
                        for k, other in pairs:
                            index = study.answer_index[(algo, n, k[3])]
                            a.append(correct[k])
                            b.append(other)
                            kept.append(index < below if below is not None else np.ones(index.shape, bool))
                    if lacking:
                        missing.append(seed)
                        continue
                    a, b, kept = np.concatenate(a), np.concatenate(b), np.concatenate(kept)
                    seeds.append(SeedTest(seed, int(kept.sum()), int(kept.size), int(a[kept].sum()),
                                          int(b[kept].sum()), mr.mcnemar_exact(a[kept], b[kept])))
                out.append(Endpoint(tp.group_text(study.groups[config], algo), algo, tp.remedy_label(normaliser, item),
                                    tuple(lengths), below, seeds, missing))
    return out


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


def head_measures(path: str, study: Study) -> dict:
    """(config, algorithm, length, normaliser, item) -> {metric: mean over seeds} of HEAD_METRICS."""
    r, refs, algos, lengths, evaluated, _ = read_points(path)
    models = tp.model_configurations(path, sorted(set(refs)))
    sums: dict = {}
    for i in range(len(r)):
        m = models[refs[i]]
        if m is None or not evaluated[i]:
            continue
        normaliser, _, config = m
        for item in {k[5] for k in study.outcomes.correct}:
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


def _seed_text(s: SeedTest) -> str:
    return (f"seed {s.seed}: {s.restricted} of {s.total} samples, {s.softmax_right} / {s.remedy_right} right, "
            f"discordant {s.mcnemar.only_a} / {s.mcnemar.only_b}, p {mr.format_p(s.mcnemar.p)}")


def endpoint_table(rows: list, title: str) -> list:
    head = ["algorithm", "remedy", "seeds (kept samples, softmax / remedy right, discordant, McNemar p)",
            "Δ (points)", "signs", "pooled CMH p", "verdict"]
    lines = [title, "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for e in rows:
        algo = f"{e.algorithm} ({e.group})" if e.group else e.algorithm
        seeds = "; ".join(_seed_text(s) for s in e.seeds) or "none"
        if e.missing:
            seeds += f"; lacking a length: seed {', '.join(str(s) for s in e.missing)}"
        signs = " ".join({1: "+", -1: "−", 0: "0"}[s.sign] for s in e.seeds)
        lines.append("| " + " | ".join([algo, e.remedy, seeds, f"{e.difference:+.1f}" if e.seeds else "n/a", signs,
                                        mr.format_p(e.pooled_p), e.verdict]) + " |")
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


RULE = (f"Primary endpoint: exact match of the final output at lengths {', '.join(map(str, PRIMARY_LENGTHS))} on the "
        "samples whose answer names no index at or above the largest training length (the output-extrapolation "
        "confound removed), each remedy against softmax on the same samples. McNemar: exact two-sided binomial test "
        "on each seed's discordant pairs (only softmax right / only the remedy right). Pooled: Cochran-Mantel-Haenszel "
        "stratified by seed, exact conditional (the binomial p of the remedy's wins among every seed's discordant "
        f"pairs). A direction is claimed only when every seed's difference has its sign and the pooled p < {ALPHA}; "
        f"otherwise \"{NO_DIFFERENCE}\".")


def markdown(path: str, study: Study, primary: list, unrestricted: list, measures: dict) -> str:
    lines = ["# The text study (docs/science.md#algorithmic-text)", "",
             f"From {path}. Samples generated in the CLRS-Text format, not the released data.", "", RULE, ""]
    if not primary:
        lines += ["No comparison: the file holds no softmax-trained model with a matching remedy model (same seed "
                  "and training parameters), or its training file was not found.", ""]
        return "\n".join(lines)
    below = sorted({e.index_below for e in primary})
    lines += endpoint_table(primary, f"## Primary endpoint (answer index < {', '.join(map(str, below))})")
    lines += endpoint_table(unrestricted, "## The same on every sample (confounded by output extrapolation; "
                                          "for comparison, not the endpoint)")
    lines += entropy_table(study, measures)
    return "\n".join(lines)


def make(path: str, outdir: str) -> list:
    study = load(path)
    scale = str(common.load_result(path, EXPERIMENT).attrs.get("scale", "custom"))
    measures = head_measures(path, study)
    written = [common.save_text(markdown(path, study, endpoints(study), endpoints(study, restrict=False), measures),
                                outdir, "text_study.md")]
    if study.outcomes.correct:
        written += accuracy_figure(study, outdir, scale)
    if measures:
        written += entropy_figure(study, measures, outdir, scale)
    return written


if __name__ == "__main__":
    sys.exit(common.run_standalone(make, __doc__.splitlines()[0]))
