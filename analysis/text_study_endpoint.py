"""The text study's primary endpoint as pre-registered (docs/science.md#the-text-study-pre-registered),
from the study's eval-text files (the secondary lengths and the primary ones may be separate files,
e.g. eval-text.h5 and eval-text-primary.h5; their outcomes are joined).

- Samples: exact match of the final output at lengths 24 and 32 (PRIMARY_LENGTHS), restricted to the
  samples whose answer index is below the models' largest training length (16) when the algorithm's
  answer is an index (`minimum`); an algorithm whose answers name no index (answer_index -1 for
  every sample, `max_value`: a copied value) keeps every sample.
- Pairs: each arm against softmax of the same training seed, sample by sample (an arm applied at
  inference runs on the softmax models themselves).
- Per seed: McNemar's exact test, lengths 24 and 32 pooled.
- Pooled: CMH over the (seed, length) strata with continuity correction (paired_strata.cmh_paired);
  the exact binomial p of the pooled discordant pairs is shown beside it.
- Family: the comparisons of one configuration and algorithm. The primary comparison, adaptive
  trained in against softmax, is judged by its raw pooled p; the others by their Holm-adjusted
  pooled p over the whole family (adaptive's p included; a comparison not measured counts as p = 1).
- Verdict: "<arm> better" or "softmax better" only when the three seeds' differences share that sign
  and the p it is judged by is < ALPHA; otherwise "no difference shown".
- Gate: every model a comparison needs (softmax and, for an arm trained in, the arm's model, of
  every seed) must pass the competence gate (competence_gate.GATE, from the eval-text rows with
  normaliser `trained` at its own training lengths, in any of the files); otherwise the comparison
  is "not measured" and names the models that failed.
"""
from __future__ import annotations

import dataclasses
import math

import h5py
import numpy as np

import common
import competence_gate
import max_retrieval as mr
import paired_strata
import text_paired_table as tp

PRIMARY_LENGTHS = (24, 32)
ALPHA = 0.05
NO_DIFFERENCE = "no difference shown"
NOT_MEASURED = "not measured"
PRIMARY_ARM = ("adaptive", "trained")   # (trained normaliser, item): the paper's question


@dataclasses.dataclass
class Stratum:
    """One (seed, length) stratum of one comparison."""
    seed: object
    length: int
    kept: int                # samples kept by the restriction
    total: int               # samples before it
    softmax_right: int
    arm_right: int
    only_arm: int            # b_k
    only_softmax: int        # c_k


@dataclasses.dataclass
class SeedTest:
    seed: object
    strata: list             # [Stratum], one per primary length
    mcnemar: mr.McNemar      # lengths pooled; only_a: only softmax right, only_b: only the arm

    def _sum(self, field: str) -> int:
        return sum(getattr(s, field) for s in self.strata)

    # Summed over the lengths.
    restricted = property(lambda self: self._sum("kept"))
    total = property(lambda self: self._sum("total"))
    softmax_right = property(lambda self: self._sum("softmax_right"))
    arm_right = property(lambda self: self._sum("arm_right"))

    @property
    def sign(self) -> int:
        return int(np.sign(self.mcnemar.only_b - self.mcnemar.only_a))


@dataclasses.dataclass
class Endpoint:
    group: str               # training parameters that differ between configurations ("" if none)
    algorithm: str
    remedy: str              # the arm's label
    primary: bool            # adaptive trained in: judged by its raw p
    lengths: tuple
    index_below: int | None  # the restriction: answer_index < index_below (None: every sample)
    seeds: list              # [SeedTest]
    missing: list            # seeds without both models at every primary length
    gate_failures: list      # figures of the needed models that fail the gate (or lack a figure)
    holm_p: float = math.nan  # set over the family by endpoints()

    @property
    def measured(self) -> bool:
        """Every seed has both models at every primary length, and every model passes the gate."""
        return bool(self.seeds) and not self.missing and not self.gate_failures

    @property
    def strata(self) -> list:
        return [s for t in self.seeds for s in t.strata]

    def _discordant(self) -> tuple:
        """([b_k], [c_k]) over the (seed, length) strata."""
        return [s.only_arm for s in self.strata], [s.only_softmax for s in self.strata]

    @property
    def chi2(self) -> float:
        return paired_strata.cmh_paired(*self._discordant())[0] if self.seeds else math.nan

    @property
    def pooled_p(self) -> float:
        return paired_strata.cmh_paired(*self._discordant())[1] if self.seeds else math.nan

    @property
    def exact_p(self) -> float:
        return paired_strata.binomial_paired(*self._discordant()) if self.seeds else math.nan

    @property
    def judged_p(self) -> float:
        """The p the verdict uses: raw for the primary comparison, Holm-adjusted for the others."""
        return self.pooled_p if self.primary else self.holm_p

    @property
    def difference(self) -> float:
        """Arm - softmax exact match over the kept samples of every seed, in points."""
        n = sum(s.restricted for s in self.seeds)
        return 100.0 * sum(s.arm_right - s.softmax_right for s in self.seeds) / n if n else math.nan

    @property
    def verdict(self) -> str:
        if not self.measured:
            return NOT_MEASURED
        signs = {s.sign for s in self.seeds}
        if len(signs) == 1 and signs != {0} and self.judged_p < ALPHA:
            return f"{self.remedy} better" if signs == {1} else f"{tp.BASELINE} better"
        return NO_DIFFERENCE


@dataclasses.dataclass
class Study:
    paths: list              # the eval-text files read
    outcomes: tp.PairedOutcomes
    answer_index: dict       # outcome key -> [samples] int
    training_lengths: dict   # configuration -> sorted training lengths (the models' own)
    groups: dict             # configuration -> its label among the files' configurations
    gate: dict               # (configuration, trained normaliser, training seed) -> competence_gate.Competence
    sample_seeds: dict       # (algorithm, length) -> {"eval", "training"}: how its samples were keyed


def _training_lengths(config, outcomes) -> list:
    """The models' own training lengths: their `lengths` parameter ("4+5+...+16"), else the
    evaluated rows at training lengths."""
    text = dict(config).get("lengths")
    if text is not None:
        return sorted(int(x) for x in str(text).replace(",", "+").split("+") if x.strip())
    return sorted(outcomes.trained_lengths.get(config, ()))


def _sample_seeds(path: str) -> list:
    """Per point of an eval-text file: "training" when its samples were keyed on the model's training
    seed (sample_seed = training), else "eval" (also for files without the column)."""
    r = common.load_result(path, tp.EXPERIMENT)
    if "sample_seed" not in r.params:
        return ["eval"] * len(r)
    return [str(common._decode(x)) for x in r.params["sample_seed"]]


def _join(path: str, into: tp.PairedOutcomes, answer_index: dict, sample_seeds: dict) -> None:
    """Adds one file's outcomes and answer indices; a key seen in another file is refused."""
    outcomes = tp.paired_outcomes(path)
    keyed = dict(zip(common.load_result(path, tp.EXPERIMENT).ids, _sample_seeds(path)))
    seen_samples: dict = {}
    with h5py.File(path, "r") as f:
        for key, point in outcomes.points.items():
            if key in into.correct:
                raise common.ResultFileError(f"{path}: model {key[4]} seed {key[6]} on {key[1]} at length {key[2]} "
                                             "is also in another file of the study; keep each length in one file.")
            name = f"arrays/{point}/answer_index"
            if name not in f:
                raise common.ResultFileError(f"{path}: point {point} lacks /{name}; the file was written by an "
                                             "older eval-text. Re-run it.")
            index = np.asarray(f[name][()], dtype=int)
            # Models evaluated on the same samples must have the same answers: every model at one
            # (algorithm, length) with samples keyed on the evaluation seed, the models of one training
            # seed with samples keyed on it.
            mode = keyed[point]
            where = (key[1], key[2], key[3], key[6] if mode == "training" else None)
            if where in seen_samples and not np.array_equal(seen_samples[where], index):
                raise common.ResultFileError(f"{path}: models evaluated on {key[1]} at length {key[2]} saw different "
                                             "samples (their answer_index differ); evaluate them in one eval-text run.")
            seen_samples[where] = index
            sample_seeds.setdefault((key[1], key[2]), set()).add(mode)
            into.correct[key] = outcomes.correct[key]
            into.points[key] = point
            answer_index[key] = index
    for config, lengths in outcomes.trained_lengths.items():
        into.trained_lengths.setdefault(config, set()).update(lengths)


def _gate(path: str) -> dict:
    """(configuration, trained normaliser, training seed) -> Competence of the file's models that
    were evaluated at their training lengths."""
    figures = competence_gate.competence(path)
    models = tp.model_configurations(path, sorted(figures))
    out = {}
    for ref, c in figures.items():
        m = models.get(ref)
        if m is not None and c.exact is not None:
            out[(m[2], m[0], m[1])] = c
    return out


def load(paths) -> Study:
    """The study from one eval-text file or several (a list)."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    outcomes, answer_index, sample_seeds, gate = tp.PairedOutcomes({}, {}, {}), {}, {}, {}
    for path in paths:
        _join(path, outcomes, answer_index, sample_seeds)
        for key, c in _gate(path).items():
            gate.setdefault(key, c)
    configs = sorted({k[0] for k in outcomes.correct})
    varying, _ = tp.configuration_labels(configs)
    return Study(paths, outcomes, answer_index, {c: _training_lengths(c, outcomes) for c in configs},
                 {c: varying[c] for c in configs}, gate, sample_seeds)


def gate_failures(study: Study, config, normaliser: str, item: str, seeds) -> list:
    """Figures of the models a comparison needs that do not pass the gate, or lack a gate figure."""
    needed = [tp.BASELINE] + ([normaliser] if item == "trained" and normaliser != tp.BASELINE else [])
    out = []
    for trained in needed:
        for seed in seeds:
            c = study.gate.get((config, trained, seed))
            if c is None:
                out.append(f"{trained}, seed {seed}: not evaluated at its training lengths")
            elif not c.passes:
                out.append(c.figure())
    return out


def _answers_are_indices(study: Study, config, algo: str, lengths) -> bool:
    """Whether the algorithm's answers name an index (some answer_index >= 0 at these lengths)."""
    return any(int(v.max(initial=-1)) >= 0 for k, v in study.answer_index.items()
               if k[0] == config and k[1] == algo and k[2] in lengths)


def _seed_test(study: Study, config, algo: str, normaliser: str, item: str, seed, lengths, below) -> SeedTest | None:
    """The strata of one seed, or None when a length lacks the pair."""
    strata, a_all, b_all = [], [], []
    for n in lengths:
        a, b, kept = [], [], []
        for k in sorted(study.outcomes.correct, key=str):
            if k[:3] != (config, algo, n) or k[4:] != (tp.BASELINE, "trained", seed):
                continue
            other = study.outcomes.correct.get((*k[:4], normaliser, item, seed))
            if other is None or other.shape != study.outcomes.correct[k].shape:
                continue
            index = study.answer_index[k]
            a.append(study.outcomes.correct[k])
            b.append(other)
            kept.append(index < below if below is not None else np.ones(index.shape, bool))
        if not a:
            return None
        a, b, kept = np.concatenate(a), np.concatenate(b), np.concatenate(kept)
        a, b = a[kept], b[kept]
        strata.append(Stratum(seed, n, int(kept.sum()), int(kept.size), int(a.sum()), int(b.sum()),
                              int(np.sum(b & ~a)), int(np.sum(a & ~b))))
        a_all.append(a)
        b_all.append(b)
    return SeedTest(seed, strata, mr.mcnemar_exact(np.concatenate(a_all), np.concatenate(b_all)))


def endpoints(study: Study, lengths=PRIMARY_LENGTHS, restrict: bool = True) -> list:
    """Every arm against softmax on every configuration and algorithm at `lengths`, restricted to
    answer_index below the largest training length where the answers are indices (restrict=False:
    every sample), with the gate applied and Holm's adjustment over each family."""
    correct = study.outcomes.correct
    out = []
    for config in sorted(study.groups, key=str):
        for algo in sorted({k[1] for k in correct if k[0] == config}):
            below = (max(study.training_lengths[config], default=0)
                     if restrict and _answers_are_indices(study, config, algo, lengths) else None)
            family = []
            for normaliser, item in tp.remedies_of(correct, config):
                seeds, missing = [], []
                all_seeds = sorted({k[6] for k in correct if k[:2] == (config, algo)}, key=str)
                for seed in all_seeds:
                    test = _seed_test(study, config, algo, normaliser, item, seed, lengths, below)
                    (seeds.append(test) if test is not None else missing.append(seed))
                family.append(Endpoint(tp.group_text(study.groups[config], algo), algo,
                                       tp.remedy_label(normaliser, item), (normaliser, item) == PRIMARY_ARM,
                                       tuple(lengths), below, seeds, missing,
                                       gate_failures(study, config, normaliser, item, all_seeds)))
            for e, p in zip(family, paired_strata.holm([e.pooled_p if e.measured else math.nan for e in family])):
                e.holm_p = p
            out += sorted(family, key=lambda e: not e.primary)
    return out


def independent_samples(study: Study, lengths=PRIMARY_LENGTHS) -> bool | None:
    """Whether every primary length's samples were drawn per training seed (sample_seed = training),
    so that the seeds are independent strata; None when no primary length is in the files."""
    modes = [m for (algo, n), ms in study.sample_seeds.items() if n in lengths for m in ms]
    return None if not modes else all(m == "training" for m in modes)
