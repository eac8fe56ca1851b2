"""The tables of the page's sections (analysis/page/sections.py names them): each builder takes
the page's Inputs (analysis/page/report.py) and returns HTML, or a box saying why there is no table.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

import common
import competence_gate
import fig_dispersion
import fig_remedies
import max_accuracy_table
import max_retrieval as mr
import remedies_table as leaderboard
import text_paired_table
import text_study
import transformer_theorem
from page import html as H
from page import scorecard as sc

if TYPE_CHECKING:
    from page.report import Inputs


def dispersion_thresholds(inputs: Inputs) -> str:
    result = inputs.result("bounds.h5")
    if result is None:
        return ""
    try:
        series = fig_dispersion.collect_series(result)
    except common.ResultFileError as err:
        return H.box("error", "Table refused:", H.esc(err))
    eps = fig_dispersion.EPSILONS
    head = ["logits", "δ", "θ", "δ/θ"]
    for e in eps:
        head += [f"first grid n with α_max &lt; {e:g}", f"worst case, closed form (ε = {e:g})"]
    head.append("violations")
    rows = []
    for s in series:
        cells = [H.esc(s.law), H.number(s.spread), H.number(s.theta), H.number(s.ratio)]
        for e in eps:
            cells += [H.number(fig_dispersion.smallest_n_below(s.n, s.alpha_max, e)),
                      H.number(fig_dispersion.worst_case_threshold(e, s.ratio), digits=5)]
        cells.append(H.number(s.violations))
        rows.append(cells)
    return H.table(head, rows, caption=(
        "Smallest n of the grid at which α_max falls below ε, beside the closed form for the worst "
        "case (one logit at M, n − 1 at m), below ε exactly when n &gt; 1 + (1/ε − 1)·e^(δ/θ); "
        "every law gets there no later. '—': not reached on the grid."))


def max_accuracy(inputs: Inputs) -> str:
    data = inputs.eval_max
    if data is None:
        return ""
    rows = max_accuracy_table.table_rows(data)
    xs = data.normalisers
    head = (["n", "models"] + [H.esc(sc._label(x)) for x in xs]
            + [f"paper {H.esc(sc._label(x))}" for x in mr.PAPER_ACCURACY]
            + ["Δ (points)", "McNemar p (largest)", "paired t p", "paper p"])
    body = []
    for r in rows:
        cells = [H.number(r.n), H.number(r.models)]
        for x in xs:
            s = r.accuracy[x]  # the interval clipped to [0, 1]: no accuracy lies beyond
            cells.append(H.MISSING if s is None else
                         f"{H.number(s.mean, decimals=1, percent=True)} "
                         f"[{H.number(max(0.0, s.low), decimals=1, percent=True)}, "
                         f"{H.number(min(1.0, s.high), decimals=1, percent=True)}]")
        cells += [H.number(mr.paper_value(x, r.n), decimals=1) if mr.paper_value(x, r.n)
                  is not None else H.MISSING for x in mr.PAPER_ACCURACY]
        cells += [H.number(r.difference, decimals=1, percent=True, signed=True),
                  H.number(max_accuracy_table.largest_p(r.mcnemar), digits=2) if r.mcnemar
                  else H.MISSING,
                  H.number(r.t_p, digits=2), H.number(mr.PAPER_T_TEST_P.get(r.n), digits=2)]
        body.append(cells)
    caption = (f"Accuracy in % over {len(data.train_seeds)} model(s) trained at n = "
               f"{data.train_n}: mean [95% interval: t across models, or Wilson for one model]. "
               f"{H.esc(max_accuracy_table.tests_note(data))}")
    return H.table(head, body, caption=caption)


def points_overview(result) -> str:
    """For a file no dedicated reader knows yet: its parameters and metrics, value ranges."""
    rows = []
    for name, values in result.params.items():
        distinct = sorted({common._decode(v) for v in values}, key=str)
        shown = ", ".join(str(v) for v in distinct[:8]) + (" …" if len(distinct) > 8 else "")
        rows.append([H.code(name), "parameter", H.number(len(distinct)), H.esc(shown)])
    for name, values in result.metrics.items():
        v = np.asarray(values)
        if v.dtype.kind in "fiu" and v.size:
            finite = v[np.isfinite(v)] if v.dtype.kind == "f" else v
            text = (f"{H.number(finite.min())} … {H.number(finite.max())}" if finite.size
                    else "no finite value")
        else:
            text = H.MISSING
        rows.append([H.code(name), "metric", H.MISSING, text])
    return H.table(["column", "kind", "distinct values", "values (range)"], rows, caption=(
        f"{len(result)} point(s). No dedicated table reads this experiment yet: its columns, "
        f"as stored."))


def transformer_theorem_table(inputs: Inputs) -> str:
    checks = inputs.transformer
    if checks is None:
        return ""
    if not checks:
        return H.box("note", "No theorem check:",
                     f"no model of the file has two n at least {transformer_theorem.SPAN}× apart.")
    rows, classes = [], []
    for c in checks:
        expected = sc.bounded_positions(c.key)
        as_expected = c.holds if expected else not c.levels_off
        rows.append([H.esc(c.label()), f"{H.number(c.ns[0])} … {H.number(c.ns[-1])}",
                     f"{H.number(float(c.growth.max()))} ({H.esc(c.span())})", H.esc(c.rate.text()),
                     H.esc(c.rate_outcome), H.esc(c.delta_slope.text()), H.number(c.lemma_violations),
                     "bounded: must hold" if expected else "unbounded: must fail",
                     (H.esc(c.outcome), "verdict")])
        classes.append("v-agrees" if as_expected else "v-differs")
    tt = transformer_theorem
    return H.table(
        ["model", "n", f"β·certificate rise over the last {tt.SPAN}× of n (max over heads)",
         "rate: slope of ln(mean k·α_max) against ln n [95%]", "rate",
         "sup δ slope against ln n [95%] (illustration)", "lemma violations", "positions",
         "theorem check"], rows, row_classes=classes,
        caption=(f"The theorem's check per model (analysis/transformer_theorem.py, "
                 f"docs/science.md#measuring-heads), decided by the certificate: per head β·C, C the "
                 f"weight-norm bound on every row's logit spread (R analytic where LayerNorm precedes "
                 f"attention, so C does not depend on n), \"{tt.OUTSIDE}\" when some head's rises by "
                 f"more than {tt.GROWTH_LIMIT - 1:.0%} over the grid's last {tt.SPAN}× of n, "
                 f"\"{tt.HOLDS}\" when none does and no row violates the lemma. The rate, beside it: "
                 f"\"{tt.RATE_HOLDS}\" when the slope's 95% interval lies within ±{tt.RATE_TOLERANCE}, "
                 f"\"{tt.RATE_SLOWER}\" when above; the lemma forces it only once n outgrows "
                 f"e^(β·sup δ). The δ slope illustrates, it does not decide. ALiBi, and the raw index "
                 f"without LayerNorm, are the negative controls: their certificate grows with n."))


def remedies_table(inputs: Inputs) -> str:
    """Per remedy (training normaliser) and n: accuracy and ranking rate, mean over seeds with a
    95% t interval (fig_remedies.series), and accuracy as a fraction of the ranking rate."""
    groups = inputs.remedies
    if groups is None:
        return ""

    def cell(triple, i, decimals=1, top=100.0):
        """mean [low, high]; a rate's t interval is clipped to [0, top] (none lies beyond)."""
        mean, low, high = (float(v[i]) for v in triple)
        if low != low:  # one seed: no interval
            return H.number(mean, decimals=decimals)
        return (f"{H.number(mean, decimals=decimals)} [{H.number(max(0.0, low), decimals=decimals)}"
                f", {H.number(min(top, high), decimals=decimals)}]")

    rows = []
    for remedy, data in groups.items():
        if fig_remedies.TRAINED not in data.normalisers:
            return H.box("error", "Table refused:",
                         f"{H.code(data.path)}: the normaliser list lacks 'trained'.")
        s = fig_remedies.series(data)
        for i, n in enumerate(data.ns):
            name = ("unknown (training file not found)" if remedy == mr.UNKNOWN_TRAINING
                    else sc._label(remedy))
            rows.append([H.esc(name), H.number(data.models(n)), H.number(n),
                         cell(s["accuracy"], i), cell(s["ranking"], i),
                         cell(s["ratio"], i, decimals=2, top=float("inf"))])
    return H.table(["remedy (trained in)", "seeds", "n", "accuracy %", "ranking rate %",
                    "accuracy / ranking rate"], rows, caption=(
        "Each remedy trained into the head and evaluated with its own normaliser: mean over "
        "seeds (trained models) [95% t interval across seeds; none with one seed]. The ranking "
        "rate is how often the highest logit is on the true maximum; soft mixing can beat it."))


def remedies_leaderboard(inputs: Inputs) -> str:
    """The leaderboard of analysis/leaderboard.py (also results/figures/remedies_leaderboard.md
    and .tex): accuracy per entry and n, the tests against softmax, the equivalence check."""
    path = inputs.sources.get(leaderboard.INPUT_FILE)
    if inputs.remedies is None or path is None:
        return ""
    try:
        b = leaderboard.board(path.path)
    except common.ResultFileError as err:
        return H.box("error", "Leaderboard refused:", H.esc(str(err)))
    head = ["entry", "kind", "seeds"] + [f"n = {leaderboard.n_text(n)}" for n in b.ns]
    out = []
    for what in ("accuracy", "tests"):
        rows = [[H.esc(c) for c in row] for row in leaderboard.table_rows(b, what)]
        out.append(H.table([H.esc(h) for h in head], rows,
                           caption=H.esc(leaderboard.CAPTIONS[what])))
    if b.equivalence:
        out.append("<ul>" + "".join(f"<li>{H.esc(x)}</li>" for x in b.equivalence) + "</ul>")
    return "\n".join(out)


def text_paired(inputs: Inputs) -> str:
    """Per algorithm and length bucket: each remedy against softmax on the same samples, with
    McNemar's test per seed (analysis/text_paired_table.py)."""
    rows = inputs.text_paired
    if rows is None:
        return ""
    if isinstance(rows, str):
        return H.box("error", "Table refused:", H.esc(rows))
    if not rows:
        return H.box("note", "No paired comparison:",
                     "the evaluation holds no softmax-trained model with a remedy model of the same seed "
                     "and training parameters (or their training file was not found beside it).")
    body = []
    for r in rows:
        name = f"{r.algorithm} ({r.group})" if r.group else r.algorithm
        body.append([H.esc(name), H.esc(r.bucket), H.esc(text_paired_table.lengths_text(r.lengths)),
                     H.esc(r.remedy), H.number(r.seeds), H.number(r.samples),
                     H.number(r.baseline, decimals=1, percent=True),
                     H.number(r.accuracy, decimals=1, percent=True),
                     H.number(r.difference, decimals=1, percent=True, signed=True),
                     f"{sum(t.only_a for t in r.tests)} / {sum(t.only_b for t in r.tests)}",
                     H.number(r.largest_p, digits=2)])
    return H.table(["algorithm", "bucket", "lengths", "remedy", "seeds", "paired samples", "softmax %",
                    "remedy %", "Δ (points)", "discordant", "McNemar p (largest)"], body,
                   caption=(f"Training: {H.esc(rows[0].setting)}. " if rows[0].setting else "")
                   + H.esc(text_paired_table.TESTS_NOTE))


def text_study_pilot_table(inputs: Inputs) -> str:
    """The pilot's competence gate (eval-text-pilot.h5: seed 1 of the arms, at the training lengths
    only) and what it decides by the registration: the study goes on, or stops "not learned within
    budget" (docs/science.md#the-text-study-pre-registered)."""
    models = inputs.text_pilot
    if not models:
        return ""
    rows = [[H.esc(m.label()), H.number(m.steps),
             H.esc(f"{m.lengths[0]}–{m.lengths[-1]}" if m.lengths else "—"),
             H.number(m.exact, decimals=1, percent=True), "passes" if m.passes else "not learned"]
            for m in sorted(models.values(), key=lambda m: (m.label(), m.model))]
    out = [H.table(["pilot model", "steps", "training lengths", "greedy exact match there (%)", "gate"], rows,
                   caption=f"The pilot's competence gate (eval-text-pilot.h5): ≥ "
                           f"{100 * competence_gate.GATE:g}% greedy exact match of the final output at "
                           "the model's own training lengths.")]
    passing = [m for m in models.values() if m.passes]
    study = inputs.sources.get("eval-text.h5")
    if not passing and not (study is not None and study.ok):
        out.append(H.box("note", "Not learned within budget:",
                         "no pilot model reaches the gate, so by the registration the study stops here. "
                         "No out-of-distribution result was computed; the study's tables and the "
                         "scorecard's text rows are \"not measured\". A null result of the budget, not "
                         "of adaptive temperature: it says nothing about lengths beyond training."))
    elif passing:
        out.append(H.box("note", "The pilot passes:",
                         H.esc(", ".join(m.label() for m in passing)) + " reach the gate; the study "
                         "trains its other seeds (sweeps/paper/train-text.cfg)."))
    return "\n".join(out)


def text_study_table(inputs: Inputs) -> str:
    """The text study's competence gate and primary endpoint (analysis/text_study_endpoint.py)."""
    read = inputs.text_study
    if read is None:
        return ""
    if isinstance(read, str):
        return H.box("error", "Table refused:", H.esc(read))
    study, rows = read
    gate = [[H.esc(text_paired_table.group_text(study.groups.get(config, {}), "") or "—"),
             H.esc(f"{normaliser}, seed {seed}"), H.number(c.exact, decimals=1, percent=True),
             "passes" if c.passes else "not learned"]
            for (config, normaliser, seed), c in sorted(study.gate.items(), key=lambda kv: str(kv[0]))]
    out = [H.table(["configuration", "model", "exact match at its training lengths", "gate"], gate,
                   caption=f"Competence gate: ≥ {100 * competence_gate.GATE:g}% greedy exact match of the "
                           "final output at the model's own training lengths; a model below it is "
                           "\"not learned\" and the rows that need it say \"not measured\".")]
    if not rows:
        return "\n".join(out + [H.box("note", "No primary endpoint:",
                                      "the files hold no softmax-trained model with a matching arm model "
                                      "evaluated at lengths 24 and 32.")])
    body = []
    for e in rows:
        seeds = "; ".join(text_study.seed_text(t) for t in e.seeds) or "none"
        chi2, pooled, exact, holm = text_study.p_text(e)
        verdict = e.verdict + (" (gate: " + "; ".join(e.gate_failures) + ")" if e.gate_failures else "")
        body.append([H.esc(f"{e.algorithm} ({e.group})" if e.group else e.algorithm),
                     H.esc(e.remedy + (" (primary)" if e.primary else "")), H.esc(seeds),
                     H.number(e.difference, decimals=1, signed=True) if e.seeds else H.MISSING,
                     H.esc(" ".join({1: "+", -1: "−", 0: "0"}[t.sign] for t in e.seeds)),
                     H.esc(chi2), H.esc(pooled), H.esc(exact), H.esc(holm), H.esc(verdict)])
    out.append(H.table(["algorithm", "arm against softmax", "per seed", "Δ (points)", "signs", "CMH χ²",
                        "pooled p", "exact binomial p", "Holm p", "verdict"], body,
                       caption=H.esc(text_study.RULE + " " + text_study.samples_note(study))))
    return "\n".join(out)


TABLE_BUILDERS = {"dispersion_thresholds": dispersion_thresholds, "max_accuracy": max_accuracy,
                  "transformer_theorem": transformer_theorem_table, "remedies": remedies_table,
                  "remedies_leaderboard": remedies_leaderboard,
                  "text_paired": text_paired, "text_study": text_study_table,
                  "text_study_pilot": text_study_pilot_table}
