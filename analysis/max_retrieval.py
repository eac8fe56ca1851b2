"""Shared by the max-retrieval figures and table (docs/science.md#max-retrieval, docs/science.md#figures): the paper's published
numbers, reading an "eval-max" result file into per-(n, model) cells, and the statistics
(Wilson and t intervals, McNemar's exact test, the paired t-test).

Replicates are trained models: every distinct `checkpoint` of the file is one model (one training
seed). Models trained with different head normalisers (docs/science.md#remedies) are different
experiments, never seeds of one: load_eval_max refuses a file that mixes them unless told which
training normaliser to keep, and load_eval_max_groups splits a file by training normaliser (each
point's /points/params/train_normaliser, derived by sharp-eval-max from its checkpoint). A model evaluated under several evaluation seeds at the same n has its samples pooled, in
seed order. "Mean over seeds" below always means the mean over models.
"""
from __future__ import annotations

import dataclasses
import math
import os
import re

import numpy as np
from scipy import stats

import common

EXPERIMENT = "eval-max"
# What this module reads of the file (checked against the binary's --describe by
# analysis/tests/test_needs_declared.py); per normaliser it needs accuracy.<x> and correct.<x> too.
NEEDS = common.Needs(EXPERIMENT, params=("checkpoint", "n", "normaliser", "seed"), metrics=("train_n", "train_seed"))
PER_NORMALISER = common.Needs(EXPERIMENT, metrics=("accuracy.softmax", "correct.softmax"))
INPUT_FILE = "eval-max.h5"
CONFIDENCE = 0.95
Z95 = float(stats.norm.ppf(0.5 + CONFIDENCE / 2))  # 1.959964…

# ---- published numbers (docs/science.md#published-numbers), accuracy in %

PAPER_N = (16, 64, 256, 512, 1024, 2048, 4096, 16384)
PAPER_ACCURACY = {
    "softmax": (98.6, 94.3, 81.3, 70.1, 53.8, 35.7, 22.6, 12.4),
    "adaptive": (98.6, 94.5, 82.1, 72.5, 57.7, 39.4, 24.9, 14.0),
}
PAPER_T_TEST_P = {16: 0.4, 64: 0.002, 256: 2e-4, 1024: 1e-4, 4096: 0.02, 16384: 4e-3}
OTHER_REPRODUCTION_N = (16, 128, 512, 1024, 2048, 4096, 8192, 16384)
OTHER_REPRODUCTION_SOFTMAX = (99.8, 96.7, 80.1, 59.9, 41.8, 30.3, 25.8, 22.1)  # 3 seeds, width 128
CHANCE = 10.0  # one of ten classes

# ---- how normalisers are named and coloured in every max-retrieval figure

_LABELS = {"softmax": "softmax", "adaptive": r"adaptive $\theta$"}
_COLOURS = {"softmax": common.PALETTE["blue"], "adaptive": common.PALETTE["orange"]}
# Okabe-Ito's six others, then brown and grey: the remedies figure has eight more normalisers.
_SPARE_COLOURS = [common.PALETTE[c] for c in ("green", "vermillion", "purple", "sky", "black",
                                              "yellow")] + ["#8C564B", "#7F7F7F"]


def normaliser_label(name: str) -> str:
    return _LABELS.get(name, name)


def normaliser_colours(names) -> dict:
    """softmax blue and adaptive orange in every figure; any other normaliser a spare colour."""
    spare = iter(_SPARE_COLOURS * 4)
    return {x: _COLOURS[x] if x in _COLOURS else next(spare) for x in names}


# ---- statistics


def wilson_interval(correct: int, total: int, z: float = Z95) -> tuple:
    """Wilson score interval for a binomial proportion (sharp-eval-max's ci_low / ci_high):
    (p̂ + z²/2m ± z·√(p̂(1−p̂)/m + z²/4m²)) / (1 + z²/m)."""
    if total <= 0:
        return (math.nan, math.nan)
    p = correct / total
    denominator = 1.0 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def newcombe_interval(right_a: int, total_a: int, right_b: int, total_b: int,
                      z: float = Z95) -> tuple:
    """95% interval of the difference p_a − p_b of two proportions, Newcombe's hybrid score
    method (his method 10) from the two Wilson intervals:
    d − √((p_a − l_a)² + (u_b − p_b)²), d + √((u_a − p_a)² + (p_b − l_b)²)."""
    if total_a <= 0 or total_b <= 0:
        return (math.nan, math.nan)
    pa, pb = right_a / total_a, right_b / total_b
    (la, ua), (lb, ub) = wilson_interval(right_a, total_a, z), wilson_interval(right_b, total_b, z)
    d = pa - pb
    return (d - math.sqrt((pa - la) ** 2 + (ub - pb) ** 2),
            d + math.sqrt((ua - pa) ** 2 + (pb - lb) ** 2))


def t_interval(values, level: float = CONFIDENCE) -> tuple:
    """(mean, low, high): Student-t interval of the mean, mean ± t_{(1+level)/2, k−1}·s/√k.
    With one value the interval is undefined: (value, nan, nan)."""
    values = np.asarray(values, dtype=float)
    mean = float(values.mean())
    if values.size < 2:
        return (mean, math.nan, math.nan)
    half = float(stats.t.ppf(0.5 + level / 2, values.size - 1)
                 * values.std(ddof=1) / math.sqrt(values.size))
    return (mean, mean - half, mean + half)


@dataclasses.dataclass(frozen=True)
class McNemar:
    """Exact McNemar test on paired 0/1 outcomes: only discordant pairs carry information; under
    H0 each is equally likely to favour either side, so b ~ Binomial(b + c, 1/2)."""
    only_a: int   # b: pairs A got right and B wrong
    only_b: int   # c: pairs B got right and A wrong
    p: float      # two-sided exact binomial p-value (1 when there is no discordant pair)


def mcnemar_exact(correct_a, correct_b) -> McNemar:
    a = np.asarray(correct_a).astype(bool)
    b = np.asarray(correct_b).astype(bool)
    if a.shape != b.shape:
        raise ValueError(f"McNemar needs paired outcomes of one shape, got {a.shape} and {b.shape}")
    only_a, only_b = int(np.sum(a & ~b)), int(np.sum(~a & b))
    if only_a + only_b == 0:
        return McNemar(0, 0, 1.0)
    p = stats.binomtest(only_a, only_a + only_b, 0.5, alternative="two-sided").pvalue
    return McNemar(only_a, only_b, float(p))


def paired_t_p(a, b) -> float:
    """Two-sided paired t-test p-value (scipy.stats.ttest_rel) across models; nan with fewer than
    two models or when the paired differences have no variance (the test is undefined)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size < 2:
        return math.nan
    difference = a - b
    # Accuracies are counts/samples: equal differences may differ in the last bit (0.9 − 0.8 vs
    # 0.8 − 0.7), which would turn "no variance" into a spurious t of 1e15.
    if np.ptp(difference) <= 1e-12 * max(1.0, float(np.max(np.abs(difference)))):
        return math.nan
    return float(stats.ttest_rel(a, b).pvalue)


def format_p(p: float) -> str:
    """'n/a' for an undefined test, 3 significant digits down to 0.001, then scientific."""
    if p is None or math.isnan(p):
        return "n/a"
    if p >= 0.9995:
        return "1"
    if p >= 1e-3:
        return f"{p:.3g}"
    return f"{p:.1e}"


@dataclasses.dataclass(frozen=True)
class Summary:
    """A quantity over models: the mean and a 95% interval (t across models when there are ≥ 2,
    otherwise an interval from the one model's samples); `models` = how many."""
    mean: float
    low: float
    high: float
    models: int

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2


# ---- the eval-max file


@dataclasses.dataclass
class Cell:
    """One trained model at one n, pooled over the file's evaluation seeds. Per normaliser X:
    correct[X] [S] 0/1 per sample (S = samples over every evaluation seed, the same sets for every
    X: the pairs of McNemar's test); entropy[X] / weight_on_max[X] [S] per sample, or None when the
    evaluation recorded only correct.X (--per-sample correct); means[what][X] the mean over the S
    samples of entropy / weight_on_max (from the per-point means when the samples are absent)."""
    n: int
    checkpoint: str
    train_seed: int
    point_ids: list                 # the file's points, in evaluation-seed order
    correct: dict
    entropy: dict | None
    weight_on_max: dict | None
    means: dict

    @property
    def samples(self) -> int:
        return int(next(iter(self.correct.values())).size)

    def accuracy(self, x: str) -> float:
        return float(self.correct[x].mean())


@dataclasses.dataclass
class EvalMax:
    result: common.Result
    normalisers: list        # in the file's order ("softmax+adaptive" -> softmax, adaptive)
    ns: list                 # sorted sizes
    cells: dict              # n -> [Cell] by (train seed, checkpoint): one order at every n
    train_n: int
    train_normaliser: str = "?"   # the models' head normaliser during training ("?": unknown)

    @property
    def path(self) -> str:
        return self.result.path

    def models(self, n: int) -> int:
        return len(self.cells[n])

    def has(self, x: str, n: int) -> bool:
        return all(x in c.correct for c in self.cells[n])

    def per_model(self, what: str, x: str, n: int) -> np.ndarray:
        """[models] per-model mean of correct / entropy / weight_on_max."""
        if what == "correct":
            return np.array([float(c.correct[x].mean()) for c in self.cells[n]])
        return np.array([float(c.means[what][x]) for c in self.cells[n]])

    def summary(self, what: str, x: str, n: int) -> Summary:
        """Mean over models with a 95% interval: t across models (≥ 2 models); with one model,
        the Wilson interval of its samples for accuracy ('correct') and the t-interval over its
        samples for a per-sample mean (entropy, weight on max)."""
        cells = self.cells[n]
        if len(cells) >= 2:
            mean, low, high = t_interval(self.per_model(what, x, n))
            return Summary(mean, low, high, len(cells))
        samples = getattr(cells[0], what)
        if samples is None:
            raise _bad(self.path, f"one model at n = {n} and no per-sample {what} (the evaluation "
                                  f"ran with --per-sample correct): there is no interval to draw. "
                                  f"Re-run it with --per-sample all.")
        values = samples[x]
        if what == "correct":
            low, high = wilson_interval(int(values.sum()), int(values.size))
            return Summary(float(values.mean()), low, high, 1)
        mean, low, high = t_interval(values)
        return Summary(mean, low, high, 1)

    @property
    def train_seeds(self) -> list:
        return sorted({c.train_seed for cells in self.cells.values() for c in cells})

    @property
    def eval_seeds(self) -> list:
        return self.result.distinct("seed")


def split_normalisers(text: str) -> list:
    """The in-point list of sharp-eval-max's --normaliser: items separated by ',' or '+'."""
    return [item for item in re.split(r"[,+]", str(text)) if item]


def _bad(path: str, message: str) -> common.ResultFileError:
    return common.ResultFileError(f"{path}: {message}")


UNKNOWN_TRAINING = "?"


def _training_file(eval_path: str, written: str) -> str | None:
    """The training file a checkpoint reference names: as written (relative to the working
    directory, as the binary read it), else beside the evaluation file or one level above it."""
    here = os.path.dirname(os.path.abspath(eval_path))
    for candidate in (written, os.path.join(here, os.path.basename(written)),
                      os.path.join(os.path.dirname(here), written)):
        if os.path.isfile(candidate):
            return candidate
    return None


def training_normalisers(result: common.Result) -> list:
    """[P] each point's training normaliser: the /points/params/train_normaliser column that
    sharp-eval-max derives from each checkpoint; for files without it (older versions), the
    sharp-train-max /points/params/normaliser of the model its `checkpoint` FILE.h5#ID names, or
    UNKNOWN_TRAINING when that file or model cannot be read (the training file was not kept)."""
    if "train_normaliser" in result.params:
        return [str(v) for v in result.params["train_normaliser"]]
    cache: dict = {}
    out = []
    for reference in result.params["checkpoint"]:
        written, _, model = str(reference).rpartition("#")
        if written not in cache:
            found = _training_file(result.path, written)
            table = {}
            if found is not None:
                try:
                    training = common.load_result(found)
                    table = dict(zip(training.ids, (str(v) for v in training.params["normaliser"])))
                except (common.ResultFileError, KeyError):
                    table = {}
            cache[written] = table
        out.append(cache[written].get(model, UNKNOWN_TRAINING))
    return out


def load_eval_max_groups(path: str) -> dict:
    """{training normaliser: EvalMax} for every training normaliser in the file, sorted by name."""
    result = common.load_result(path, EXPERIMENT)
    if len(result) == 0:
        raise _bad(path, "no points; the run's grid was empty.")
    result.require(params=("checkpoint",))
    return {t: load_eval_max(path, train_normaliser=t) for t in sorted(set(training_normalisers(result)))}


def load_eval_max(path: str, train_normaliser: str | None = None) -> EvalMax:
    """Read an eval-max file into cells, refusing files that cannot give an honest figure: not a
    complete eval-max file, missing metrics or per-sample arrays, non-finite values, per-sample
    arrays that disagree with the stored counts, or models trained at different n or with
    different normalisers mixed (`train_normaliser` keeps the models trained with that one)."""
    result = common.load_result(path, EXPERIMENT)
    if len(result) == 0:
        raise _bad(path, "no points; the run's grid was empty.")
    NEEDS.check(result)
    trained_with = training_normalisers(result)
    if train_normaliser is None:
        kinds = sorted(set(trained_with))
        if len(kinds) > 1:
            raise _bad(path, f"mixes models trained with normalisers {', '.join(kinds)}; they are "
                             f"different remedies, not seeds of one. Read one of them "
                             f"(load_eval_max(path, train_normaliser=...)) or all "
                             f"(load_eval_max_groups).")
        train_normaliser = kinds[0]
    keep = [i for i in range(len(result)) if trained_with[i] == train_normaliser]
    if not keep:
        raise _bad(path, f"has no model trained with {train_normaliser!r} (it has "
                         f"{', '.join(sorted(set(trained_with)))}).")
    lists = [split_normalisers(v) for v in result.params["normaliser"]]
    normalisers = []
    for i in keep:
        normalisers += [x for x in lists[i] if x not in normalisers]
    for x in normalisers:
        result.require(metrics=[f"{m}.{x}" for m in ("accuracy", "correct")], finite=False)
        rows = [i for i in keep if x in lists[i]]
        for m in ("accuracy", "entropy", "weight_on_max"):
            if f"{m}.{x}" in result.metrics:
                result.require_finite(f"/points/{m}.{x}", result.metrics[f"{m}.{x}"][rows])

    train_ns = sorted({int(result.metrics["train_n"][i]) for i in keep})
    if len(train_ns) != 1:
        raise _bad(path, f"mixes models trained at n = {', '.join(map(str, train_ns))}; their "
                         f"accuracies are not replicates of one experiment. Evaluate each training "
                         f"configuration into its own file.")

    grouped: dict = {}
    order = sorted(keep, key=lambda i: (int(result.params["seed"][i]), i))
    for i in order:
        key = (int(result.params["n"][i]), str(result.params["checkpoint"][i]))
        grouped.setdefault(key, []).append(i)
    cells: dict = {}
    for (n, checkpoint), rows in sorted(grouped.items()):
        cells.setdefault(n, []).append(_read_cell(result, n, checkpoint, rows, lists))
    for n in cells:
        cells[n].sort(key=lambda c: (c.train_seed, c.checkpoint))
    return EvalMax(result, normalisers, sorted(cells), cells, train_ns[0], train_normaliser)


MEANS = ("entropy", "weight_on_max")  # per-sample series that --per-sample correct keeps as means only


def _read_cell(result: common.Result, n: int, checkpoint: str, rows: list, lists: list) -> Cell:
    names = set.intersection(*[set(lists[i]) for i in rows])
    # Per-sample entropy and weight on max: all points have them or none (--per-sample correct).
    present = [all(f"entropy.{x}" in result.arrays(result.ids[i]) for x in names) for i in rows]
    if len(set(present)) > 1:
        raise _bad(result.path, f"n = {n}, {checkpoint}: some evaluation seeds have per-sample "
                                f"entropy arrays and some do not; the points were evaluated with "
                                f"different --per-sample. Re-run them alike.")
    per_sample = present[0]
    series = ("correct",) + (MEANS if per_sample else ())
    pooled = {what: {x: [] for x in names} for what in series}
    weighted = {what: {x: 0.0 for x in names} for what in MEANS}
    for i in rows:
        pid = result.ids[i]
        arrays = result.arrays(pid)
        lengths = set()
        for x in names:
            for what in pooled:
                name = f"{what}.{x}"
                if name not in arrays:
                    raise _bad(result.path, f"/arrays/{pid} lacks {name!r} (per-sample results); "
                                            f"the file was written by another version of "
                                            f"sharp-eval-max. Re-run it.")
                values = np.asarray(arrays[name]).ravel()
                result.require_finite(f"/arrays/{pid}/{name}", values.astype(float), pid)
                lengths.add(values.size)
                pooled[what][x].append(values)
            count = int(result.metrics[f"correct.{x}"][i])
            if int(np.sum(arrays[f"correct.{x}"])) != count:
                raise _bad(result.path, f"point {pid}: /arrays/{pid}/correct.{x} sums to "
                                        f"{int(np.sum(arrays[f'correct.{x}']))} but /points/"
                                        f"correct.{x} says {count}; the file is inconsistent. "
                                        f"Re-run the evaluation.")
            if not per_sample:  # only the per-point means exist; weight them by samples
                for what in MEANS:
                    name = f"{what}.{x}"
                    if name not in result.metrics:
                        raise _bad(result.path, f"point {pid} has neither per-sample {name!r} nor "
                                                f"the metric /points/{name}; the file was written "
                                                f"by another version of sharp-eval-max. Re-run it.")
                    weighted[what][x] += float(result.metrics[name][i]) * pooled["correct"][x][-1].size
        if len(lengths) > 1:
            raise _bad(result.path, f"point {pid}: the per-sample arrays have different lengths "
                                    f"{sorted(lengths)}; normalisers must be evaluated on the "
                                    f"same samples.")
    merged = {what: {x: np.concatenate(v) for x, v in per.items()} for what, per in pooled.items()}
    merged["correct"] = {x: v.astype(np.int64) for x, v in merged["correct"].items()}
    samples = {x: v.size for x, v in merged["correct"].items()}
    if per_sample:
        means = {what: {x: float(v.mean()) for x, v in merged[what].items()} for what in MEANS}
    else:  # the per-point means (finite: checked when the file was loaded), weighted by samples
        means = {what: {x: weighted[what][x] / samples[x] for x in names} for what in MEANS}
    return Cell(n=n, checkpoint=checkpoint, train_seed=int(result.metrics["train_seed"][rows[0]]),
                point_ids=[result.ids[i] for i in rows], correct=merged["correct"],
                entropy=merged.get("entropy"), weight_on_max=merged.get("weight_on_max"),
                means=means)


def paper_value(x: str, n: int):
    """The paper's accuracy (%) for normaliser x at n, or None."""
    if x in PAPER_ACCURACY and n in PAPER_N:
        return PAPER_ACCURACY[x][PAPER_N.index(n)]
    return None


def source_line(result: common.Result) -> str:
    return (f"Source: `{result.path}` (fingerprint {result.attrs.get('fingerprint', '?')}, "
            f"git {result.attrs.get('git_sha', '?')}).")
