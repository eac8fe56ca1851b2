"""The paper page: results/report/index.html, every figure, table and claim in one static page,
from the result files already in RESULTS_DIR (nothing is recomputed).

    /usr/bin/python3 analysis/make_report.py RESULTS_DIR [--figures DIR] [--out FILE]

`make figures` and `make paper` run it after analysis/make_figures.py. The page works from the file
system with no server and no network: figures are inlined PNGs, the scorecard's data are inline
JSON, the stylesheet is written here. Sections follow docs/science.md (analysis/page/sections.py
maps them to result files); a missing result file makes its section say "not run" with the command
that makes it, a refused one shows the reader's reason, and one made by another commit than the
checkout's is marked stale. A section (or the scorecard) that raises anything else — a bug of the
analysis — says "this section failed: <exception> — please report it" in its place; the rest of
the page is still written. Every refusal and failure is also one line on stderr. Exit status 0
when the page is written, 1 when it is written but a section failed. The scorecard (analysis/page/scorecard.py) gives each claim of the paper the
suite tests a verdict by the rules printed on the page; the suite's own arithmetic on the paper's
numbers is a separate table, never counted.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import sys

import numpy as np

import checkpoints
import common
import competence_gate
import fig_beta_polynomial
import max_retrieval as mr
import products
import published
from page import html as H
from page import sources as report_sources
from page import scorecard as sc
from page import scorecard_clrs
from page import tables
import text_paired_table
import text_study
import text_study_endpoint
import text_results
import transformer_theorem
from page.sections import SECTIONS

DOCS = os.path.join(report_sources.REPO_ROOT, "docs", "science.md")
SHORT_SHA = 12


# ---- reading everything once


class Inputs:
    """Every result file of every section, inspected once, plus the readers that need more than
    common.load_result (eval-max's per-sample cells, fit-adaptive's per-model fits). A reader
    that refuses a file turns that file into a refused source, one that fails (a bug) into a
    failed source. `failures`: what failed on the page, "where: this section failed: ..." (shared
    with the Inputs the scorecard judges from)."""

    def __init__(self, results_dir: str, published_dir: str | None = None,
                 sources: dict | None = None, failures: list | None = None):
        self.results_dir = results_dir
        self.head = report_sources.checkout_sha()
        self.sources = sources if sources is not None else {
            name: report_sources.inspect(results_dir, name, self.head, published_dir)
            for name in file_names()}
        self.failures = failures if failures is not None else []
        self.failures += [f"{s.path}: {s.reason}" for s in self.sources.values()
                          if s.state == "failed"]
        self.eval_max = self._read("eval-max.h5", lambda s: mr.load_eval_max(s.path))
        self.fits = self._read("fit-adaptive.h5", _read_fits)
        self.transformer = self._read("transformer-dispersion.h5",
                                      lambda s: transformer_theorem.check_models(s.result))
        self.text_pools = self._read("eval-text.h5", lambda s: text_results.unseen_pools(s.path))
        self.text_models = self._read("eval-text.h5",
                                      lambda s: competence_gate.competence(s.path))
        self.text_paired = self._read("eval-text.h5", _read_text_paired)
        self.text_study = self._read("eval-text.h5", _read_text_study)
        self.text_pilot = self._read("eval-text-pilot.h5",
                                     lambda s: competence_gate.competence(s.path))
        self.remedies = self._read("eval-remedies.h5",
                                   lambda s: mr.load_eval_max_groups(s.path))

    def _read(self, name: str, reader):
        source = self.sources.get(name)
        if source is None or not source.ok:
            return None
        value, problem = common.attempt(lambda: reader(source))
        if problem is not None:
            source.state, source.reason = problem.kind, problem.text
            if problem.kind == "failed":
                self.failures.append(f"{source.path}: {problem.text}")
        return value

    def result(self, name: str):
        source = self.sources.get(name)
        return source.result if source is not None and source.ok else None

    def why_not(self, name: str) -> str:
        """Why a claim reading `name` is not measured (for the scorecard)."""
        source = self.sources[name]
        if source.state == "missing":
            return f"{source.path} is missing"
        return f"{source.path} was {source.state} (see its section)"


def file_names() -> list:
    """Every result file the page reads, in section order (a figure's file too: one that may be
    absent without a notice, as the text study's pilot once the study has run)."""
    names = []
    for section in SECTIONS:
        names += section.files + section.optional + tuple(products.page_figure(png)[1].input_file
                                                          for png in section.figures)
    return list(dict.fromkeys(names))


def judged_inputs(inputs: Inputs, published_dir: str | None = None) -> Inputs:
    """The files the scorecard judges from: for each, the largest scale present among the results
    folder and the shipped results (report_sources.inspect_largest); `inputs` itself when that is
    what the page shows anyway."""
    chosen = {name: report_sources.inspect_largest(inputs.results_dir, name, inputs.head,
                                                   published_dir)
              for name in file_names()}
    if all(chosen[n].path == inputs.sources[n].path for n in chosen):
        return inputs
    return Inputs(inputs.results_dir, published_dir, sources=chosen, failures=inputs.failures)


def _read_text_paired(source: report_sources.Source):
    """The paired comparisons, or the reason they cannot be made (a string): a file without
    per-sample arrays still feeds the figure and the scorecard, so only the table is refused."""
    try:
        return text_paired_table.load(source.path)
    except common.ResultFileError as err:
        return str(err)


def _read_text_study(source: report_sources.Source):
    """(study, primary endpoints) from eval-text.h5 and the study's files beside it, or the reason
    they cannot be read (a string; the other text tables still stand)."""
    try:
        study = text_study_endpoint.load(text_study.study_files(source.path))
        return study, text_study_endpoint.endpoints(study)
    except common.ResultFileError as err:
        return str(err)


def _read_fits(source: report_sources.Source) -> dict:
    """protocol array name -> [(coefficients [5], smallest and largest entropy the fit saw)]."""
    models = fig_beta_polynomial.read_models(source.result)
    fits = {"coefficients": [(m.coefficients, float(m.entropy.min()), float(m.entropy.max()))
                             for m in models]}
    binned = [(m.binned["coefficients_binned"], float(m.binned["bin_entropy"].min()),
               float(m.binned["bin_entropy"].max())) for m in models if m.binned is not None]
    if binned:
        fits["coefficients_binned"] = binned
    return fits


# The Gemma analogue: per-head logit spreads of random models built like an LLM's (positions
# bounded as the theorem needs, LayerNorm, the default init scale), each at its largest n.
GEMMA_ANALOGUE = {"layer_norm": (1,), "init_scale": (1.0,), "checkpoint": ("none", "")}


def transformer_deltas(result) -> tuple:
    """([heads] δ of every head (/arrays/<id>/delta_max [layer, head]) of the GEMMA_ANALOGUE
    models at their largest n, description, number of models) or (None, why, None)."""
    if result is None:
        return None, "", None
    needed = [k for k in list(GEMMA_ANALOGUE) + ["n", "positional"] if k not in result.params]
    if needed:
        return None, f"the file lacks the parameters {', '.join(needed)}", None
    rows = [i for i in result.rows(**{k: list(v) for k, v in GEMMA_ANALOGUE.items()})
            if sc.bounded_positions({"positional": result.params["positional"][i],
                                     "layer_norm": result.params["layer_norm"][i]})]
    if len(rows) == 0:
        return None, ("no random model with bounded positions, LayerNorm and init scale 1 in "
                      "the file"), None
    model_params = [k for k in transformer_theorem.MODEL_PARAMS if k in result.params]
    deltas, sizes = [], set()
    for _, group in result.group_by(*model_params, among=np.array(rows, dtype=int)):
        last = group[int(np.argmax(result.params["n"][group]))]
        arrays = result.arrays(result.ids[last])
        if "delta_max" not in arrays:
            return None, f"/arrays/{result.ids[last]} has no delta_max", None
        deltas.append(np.asarray(arrays["delta_max"], dtype=float).ravel())
        sizes.add(int(result.params["n"][last]))
    d = np.concatenate(deltas)
    return d[np.isfinite(d)], (f"{d.size} heads of {len(deltas)} random transformer(s) with "
                               f"bounded positions, LayerNorm, init scale 1, at n = "
                               f"{', '.join(map(str, sorted(sizes)))}"), len(deltas)



def row_provenance(inputs: Inputs, name: str, steps: str = "") -> sc.Provenance:
    """A row's provenance as far as the file tells it: its name, root attribute `scale` as
    written, where the file comes from, and the training steps of its models (`steps`)."""
    source = inputs.sources[name]
    return sc.Provenance(name, source.scale if source.ok else "", source.origin, steps=steps)


def training_steps(inputs: Inputs, name: str, experiment: str) -> str:
    """The training steps of the models a file's `checkpoint` column names (their training
    files, `experiment`, beside it): "4000", "500–800", or "" when not found."""
    result = inputs.result(name)
    if result is None or "checkpoint" not in result.params:
        return ""
    refs = sorted({str(common._decode(r)) for r in result.params["checkpoint"]} - {"none"})
    params = checkpoints.training_params(result.path, refs, experiment)
    return checkpoints.steps_text(p.get("steps") if p else None for p in params.values())


def build_scorecard(inputs: Inputs) -> list:
    def why(name):
        return inputs.why_not(name) if inputs.sources[name].state != "ok" else ""

    def where(name):
        return row_provenance(inputs, name)

    max_steps = training_steps(inputs, "eval-max.h5", "train-max")
    rows = []
    rows += sc.accuracy_rows(inputs.eval_max, row_provenance(inputs, "eval-max.h5", max_steps),
                             why("eval-max.h5"))
    rows += sc.p_value_rows(inputs.eval_max, row_provenance(inputs, "eval-max.h5", max_steps),
                            why("eval-max.h5"))
    rows += sc.lemma_rows(inputs.result("bounds.h5"), where("bounds.h5"), why("bounds.h5"))
    rows += sc.weight_bound_rows(inputs.result("weight-bound.h5"), where("weight-bound.h5"),
                                 why("weight-bound.h5"))
    rows += sc.entropy_rows(inputs.result("entropy-temperature.h5"),
                            where("entropy-temperature.h5"), why("entropy-temperature.h5"))
    rows += sc.transformer_rows(inputs.transformer, where("transformer-dispersion.h5"),
                                why("transformer-dispersion.h5"))
    rows += sc.refit_rows(inputs.fits, row_provenance(inputs, "fit-adaptive.h5", training_steps(
        inputs, "fit-adaptive.h5", "train-max")), why("fit-adaptive.h5"))
    transformer = inputs.result("transformer-dispersion.h5")
    deltas, described, models = transformer_deltas(transformer)
    rows += sc.gemma_rows(deltas, transformer is not None,
                          where("transformer-dispersion.h5").of(models),
                          why("transformer-dispersion.h5"), described)
    text_ok = inputs.sources["eval-text.h5"].ok
    judged = (scorecard_clrs.judge_clrs(inputs.text_pools, inputs.text_models)
              if inputs.text_pools and inputs.text_models else None)
    rows += scorecard_clrs.clrs_rows(text_ok, where("eval-text.h5"), why("eval-text.h5"), judged)
    return rows


def build_derived(inputs: Inputs) -> list:
    """The suite's own arithmetic on the paper's numbers: shown apart, never counted."""
    return sc.polynomial_rows() + [sc.threshold_row(inputs.result("bounds.h5"),
                                                    row_provenance(inputs, "bounds.h5"))]


# ---- page pieces


def docs_link(anchor: str, page_dir: str, text: str | None = None) -> str:
    href = os.path.relpath(DOCS, page_dir).replace(os.sep, "/") + "#" + anchor
    return f'<a href="{H.esc(href)}">{H.esc(text or "docs/science.md#" + anchor)}</a>'


def sha_text(source: report_sources.Source, head: str) -> str:
    text = H.code(source.git_sha[:SHORT_SHA])
    if source.git_dirty:
        text += " " + H.badge("stale", "uncommitted changes")
    if source.stale:
        behind = (f", {source.behind} commit(s) behind" if source.behind is not None else "")
        text += " " + H.badge("stale", f"stale: checkout is {head[:SHORT_SHA]}{behind}")
    return text


def provenance_line(source: report_sources.Source, head: str) -> str:
    """The provenance under a figure, compact: file, commit, scale, creation time, command."""
    shipped = f"{H.esc(source.published)} · " if source.published else ""
    return (f'<span class="prov">{shipped}From {H.code(source.path)} · git '
            f"{sha_text(source, head)} · scale {H.esc(source.scale)} · created "
            f"{H.esc(source.created)} · {H.code(source.command_line)}</span>")


def provenance(source: report_sources.Source, head: str) -> str:
    created = source.created + ("" if source.finished == report_sources.UNKNOWN
                                else f" → {source.finished}")
    items = [("source", H.code(source.path)), ("experiment", H.esc(source.experiment)),
             ("git_sha", sha_text(source, head)), ("command line", H.code(source.command_line)),
             ("scale", H.esc(source.scale)), ("created", H.esc(created)),
             ("points", H.number(len(source.result)))]
    return ('<dl class="prov">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in items)
            + "</dl>")


def state_badge(source: report_sources.Source, named: bool = False) -> str:
    """'not run' / 'refused' / 'failed' / 'stale' / 'ok', prefixed with the file name when
    `named`."""
    kind, text = (("missing", "not run") if source.state == "missing" else
                  ("error", source.state) if source.state in ("refused", "failed") else
                  ("stale", "stale") if source.stale else
                  ("ok", "published") if source.published else ("ok", "ok"))
    return H.badge(kind, f"{source.name}: {text}" if named else text)


def file_notice(source: report_sources.Source, inputs: Inputs) -> str:
    if source.state == "missing":
        experiment = os.path.splitext(source.name)[0]
        command = report_sources.rerun_command(inputs.results_dir, experiment)
        return H.box("missing", "not run:",
                     f"{H.code(source.path)} is missing — run {H.code('make paper')} or "
                     f"{H.code(command)}")
    if source.state in ("refused", "failed"):
        return problem_box(common.Problem(source.state, source.reason), source.path)
    shipped = ""
    if source.published:
        # a named scale is one `make paper` run; any other file (a pilot run from the command
        # line: scale custom) is remade by its own command
        how = (H.code('make paper SCALE=' + source.scale) if source.scale in published.SCALES
               else "its command, " + H.code(str(source.result.attrs.get("command_line", "unknown")))
               + ",")
        shipped = H.box("published", f"{source.published}:",
                        f"{H.code(source.path)} ships with the repository (results/ has no "
                        f"{H.code(source.name)}); {how} makes it here.")
    if source.stale:
        behind = (f" ({source.behind} commit(s) behind)" if source.behind is not None else "")
        paths = ", ".join(p + ("/" if "." not in p else "") for p in report_sources.CODE_PATHS)
        if source.code_changed is None:
            substance = "Its numbers may not be what this code computes"
        elif source.code_changed == 0:
            substance = (f"None of {paths} changed since, so the code that computed it is the "
                         f"checkout's")
        else:
            substance = (f"{source.code_changed} file(s) of {paths} changed since: its numbers "
                         f"may not be what this code computes")
        return H.box("stale", "stale:",
                     f"{H.code(source.path)} was made by commit "
                     f"{H.code(source.git_sha[:SHORT_SHA])}, the checkout is "
                     f"{H.code(inputs.head[:SHORT_SHA])}{behind}. {H.esc(substance)}; rerun "
                     f"{H.code('make paper')} to refresh.") + shipped
    return shipped


def figure_block(png: str, inputs: Inputs, figures_dir: str) -> str:
    figure, product = products.page_figure(png)
    source = inputs.sources[product.input_file]
    if not source.ok:
        return ""
    png = os.path.join(figures_dir, figure.png + ".png")
    if not os.path.isfile(png):
        return H.box("missing", f"figure not drawn: {figure.png}.png",
                     f"is not in {H.code(figures_dir)}; run {H.code('make figures')} (it says "
                     f"why a figure is skipped).")
    notice = ""
    if os.path.getmtime(png) < os.path.getmtime(source.path):
        notice = H.box("stale", "figure out of date:",
                       f"{H.code(figure.png + '.png')} is older than {H.code(source.path)}; "
                       f"run {H.code('make figures')}.")
    with open(png, "rb") as fh:
        data = fh.read()
    caption = (f"<strong>{H.esc(figure.title)}.</strong> {H.esc(figure.caption)}<br>"
               + provenance_line(source, inputs.head))
    return notice + H.figure(data, figure.title, caption)


def _size(n: int) -> str:
    """A grid size as the sweeps write it: 2^k for powers of two from 2^14, else the number."""
    return (f"2^{n.bit_length() - 1}" if n >= 1 << 14 and n & (n - 1) == 0 else H.number(n))


def file_holds(source: report_sources.Source) -> str:
    """What a loaded file's grid covers, so that a section's text never promises more than the
    file on the page holds: 'eval-max.h5 holds n = 16 … 2^16 (39 points)'."""
    result = source.result
    parts = []
    for name, label in (("n", "n = "), ("length", "lengths ")):
        values = np.asarray(result.params[name]) if name in result.params else np.array([])
        if values.size and values.dtype.kind in "iu":
            parts.append(f"{label}{_size(int(values.min()))} … {_size(int(values.max()))}")
    if "train_normaliser" in result.params:
        parts.append("models trained with " + ", ".join(map(str, result.distinct(
            "train_normaliser"))))
    points = f"{len(result)} point{'s' if len(result) != 1 else ''}"
    return f"{source.name} holds " + (f"{', '.join(parts)} ({points})" if parts else points)


def section_html(section, inputs: Inputs, figures_dir: str, page_dir: str) -> str:
    sources = [inputs.sources[f] for f in section.files] + [
        inputs.sources[f] for f in section.optional if inputs.sources[f].state != "missing"]
    holds = "; ".join(file_holds(s) for s in sources if s.ok)
    out = [f'<section id="{H.esc(section.key)}">',
           f"<h2>{H.esc(section.title)} " + " ".join(state_badge(s, named=True)
                                                     for s in sources) + "</h2>",
           f"<p>{H.esc(section.intro)} See {docs_link(section.anchor, page_dir)}."
           + (f" On this page: {H.esc(holds)}." if holds else "") + "</p>"]
    out += [n for n in (file_notice(s, inputs) for s in sources) if n]
    for s in sources:
        if s.ok:
            out.append(f"<details><summary>Provenance of {H.code(s.name)}</summary>"
                       + provenance(s, inputs.head) + "</details>")
    for figure in section.figures:
        out.append(figure_block(figure, inputs, figures_dir))
    for name in section.tables:
        out.append(tables.TABLE_BUILDERS[name](inputs))
    if not section.figures and not section.tables:
        for s in sources:
            if s.ok:
                out.append(f"<h3>{H.code(s.name)}</h3>" + tables.points_overview(s.result))
    out.append("</section>")
    return "\n".join(out)


def problem_box(problem: common.Problem, path: str = "") -> str:
    """Where a product would be: a refusal with the reader's reason, or a failure (a bug) with its
    exception and the request to report it."""
    if problem.kind == "refused":
        return H.box("error", f"refused: {path}" if path else "refused:",
                     ("<br>" if path else "") + H.esc(problem.text))
    return H.box("error", "Bug in the analysis:",
                 (f"{H.code(path)}: " if path else "") + H.esc(problem.text))


def guarded(key: str, title: str, inputs: Inputs, make) -> tuple:
    """(make(), None), or (a section saying why make() raised, the Problem): one refusal or bug
    stops one section, never the page; a failure is recorded in inputs.failures."""
    made, problem = common.attempt(make)
    if problem is None:
        return made, None
    if problem.kind == "failed":
        inputs.failures.append(f"section {key}: {problem.text}")
    return (f'<section id="{H.esc(key)}"><h2>{H.esc(title)}</h2>{problem_box(problem)}'
            f"</section>"), problem


def other_figures(inputs: Inputs, figures_dir: str) -> str:
    """Figures in the figures directory that no section lists (a new experiment's)."""
    listed = {png for s in SECTIONS for png in s.figures}
    if not os.path.isdir(figures_dir):
        return ""
    extra = sorted(f[:-4] for f in os.listdir(figures_dir)
                   if f.endswith(".png") and not f.startswith(".") and f[:-4] not in listed)
    if not extra:
        return ""
    out = ['<section id="other-figures"><h2>Other figures</h2>',
           "<p>Figures in the figures directory that no section of this page describes yet "
           "(add them to analysis/page/sections.py).</p>"]
    for name in extra:
        with open(os.path.join(figures_dir, name + ".png"), "rb") as fh:
            out.append(H.figure(fh.read(), name, f"<strong>{H.esc(name)}.png</strong>"))
    out.append("</section>")
    return "\n".join(out)


VERDICT_CLASS = {sc.AGREES: "v-agrees", sc.DIFFERS: "v-differs",
                 sc.NO_DIFFERENCE: "v-no-difference", sc.IDENTITY: "v-identity",
                 sc.ANALOGUE: "v-analogue", sc.NOT_MEASURED: "v-not-measured",
                 sc.INCONCLUSIVE: "v-inconclusive"}


def _value(v, row: sc.Row) -> str:
    if isinstance(v, str):
        return H.esc(v)
    text = H.number(v, digits=row.digits, decimals=row.decimals)
    return text + (H.esc(row.unit) if v is not None and row.unit else "")


def scorecard_table(rows: list, page_dir: str, derived: bool = False) -> str:
    """The claims (or, `derived`, the suite's own arithmetic: 'printed' is the number
    docs/science.md prints, 'check' whether our arithmetic gives it)."""
    head = (["number", "printed", "ours", "interval", "width", "check", "why"] if derived else
            ["claim", "paper", "ours", "interval", "width", "verdict", "why"])
    body, classes, group = [], [], None
    for r in rows:
        if r.group != group:
            group = r.group
            body.append([f"<strong>{H.esc(group)}</strong>"] + [""] * (len(head) - 1))
            classes.append("group")
        claim = docs_link(r.anchor, page_dir, r.claim)
        if r.reconstructed:
            claim += " " + H.badge("stale", "reconstructed protocol")
        claim += f'<br><small class="source">{H.esc(r.provenance.text())}</small>'
        paper = _value(r.paper, r) + (f'<br><small class="source">{H.esc(r.paper_source)}'
                                      f'</small>' if r.paper_source else "")
        interval = (H.MISSING if r.low is None and r.high is None else
                    f'<span class="nowrap">[{_value(r.low, r)}, {_value(r.high, r)}]</span>'
                    + (f"<br><small>{H.esc(r.interval_of)}</small>" if r.interval_of else ""))
        body.append([claim, paper, _value(r.ours, r), interval,
                     H.number(r.width, digits=max(r.digits, 3), decimals=r.decimals),
                     (H.esc(r.verdict), "verdict"),
                     H.esc(r.why) + (f"<br><strong>Cause:</strong> {H.esc(r.cause)} "
                                     f"({docs_link(r.cause_anchor, page_dir)})"
                                     if r.cause else "")])
        classes.append(VERDICT_CLASS.get(r.verdict, ""))
    return H.table(head, body, classes="scorecard", row_classes=classes)


def scorecard_html(rows: list, derived: list, page_dir: str) -> str:
    counts = sc.counts(rows)
    out = ['<section id="scorecard"><h2>Reproduction scorecard</h2>',
           f"<p>One row per claim of the paper that the suite tests "
           f"({docs_link('published-numbers', page_dir)}): the paper's value, ours with its 95% "
           f"interval and the interval's width, and a verdict computed from the data by these "
           f"rules. Only these {len(rows)} rows are counted; the suite's own arithmetic on the "
           f"paper's numbers is in a separate table below. Under each claim: the result file, "
           f"its scale as the file states it, the number of models behind our number and their "
           f"training steps, and “reconstructed protocol” where the paper does not state its "
           f"protocol and the suite chose it; under the paper's value: where that number comes "
           f"from. Each claim is judged at the largest scale present (cluster, then paper, then "
           f"a custom run, then quick) among the results folder and the results shipped with the "
           f"repository, which may differ from the file a section below shows: the row names "
           f"the file it was judged from.</p>",
           H.table(["verdict", "rule"], [[(H.esc(v), "verdict"), H.esc(t)] for v, t in sc.RULES],
                   classes="rules", row_classes=[VERDICT_CLASS[v] for v, _ in sc.RULES]),
           '<dl class="definitions">' + "".join(f"<dt>{H.esc(term)}</dt><dd>{H.esc(text)}</dd>"
                                                for term, text in sc.DEFINITIONS) + "</dl>",
           "<p>Derived here (the table under the scorecard): identity when our arithmetic gives "
           "the number docs/science.md prints, differs when it does not.</p>",
           '<p class="counts">' + "".join(f"<span>{H.esc(v)}: <strong>{c}</strong></span>"
                                          for v, c in counts.items()) + "</p>",
           scorecard_table(rows, page_dir),
           '<h3 id="derived-here">Derived here (not counted)</h3>',
           "<p>Numbers the suite computes itself from the paper's coefficients and lemma, not "
           "numbers the paper states: the polynomial's crossings and peak, and the lemma's "
           "worst-case threshold at Gemma 2B's mean spread. They are shown with their arithmetic "
           "(and, for the threshold, the measured crossing when bounds.h5 has it) and are never "
           "counted among the paper's claims.</p>",
           scorecard_table(derived, page_dir, derived=True),
           "</section>"]
    return "\n".join(out)


def scorecard_json(rows: list) -> str:
    """The scorecard as inline JSON (for readers of the page's source and the tests); '</' is
    escaped so the text cannot close its script element."""
    def plain(v):
        if isinstance(v, (np.floating, float)):
            return None if not np.isfinite(v) else float(v)
        if isinstance(v, np.integer):
            return int(v)
        return v

    data = [{k: plain(v) for k, v in vars(r).items() if k != "provenance"}
            | {"width": plain(r.width),
               "provenance": {k: plain(v) for k, v in vars(r.provenance).items()}}
            for r in rows]
    text = json.dumps(data, ensure_ascii=False, sort_keys=True)
    return ('<script type="application/json" id="scorecard-data">'
            + text.replace("</", "<\\/") + "</script>")


def files_table(inputs: Inputs) -> str:
    rows = []
    for name, s in inputs.sources.items():
        rows.append([H.code(s.path), state_badge(s), H.esc(s.scale if s.ok else H.MISSING),
                     sha_text(s, inputs.head) if s.ok else H.MISSING,
                     H.esc(s.created if s.ok else H.MISSING),
                     H.code(s.command_line) if s.ok else H.MISSING])
    return ('<section id="result-files"><h2>Result files</h2>'
            + H.table(["file", "state", "scale", "git_sha", "created", "command line"], rows)
            + "</section>")


def page(inputs: Inputs, figures_dir: str, page_dir: str, now: str,
         judged: Inputs | None = None) -> tuple:
    """(html, scorecard rows): the paper's claims (the derived rows are on the page and in its
    inline JSON, not in the returned rows), judged from `judged` (default: the page's files)."""
    judged = judged or inputs

    def scorecard_section():
        rows, derived = build_scorecard(judged), build_derived(judged)
        return scorecard_html(rows, derived, page_dir), rows, derived

    made, problem = guarded("scorecard", "Reproduction scorecard", inputs, scorecard_section)
    scorecard, rows, derived = (made, [], []) if problem is not None else made
    states = [s.state if not (s.ok and s.stale) else "stale" for s in inputs.sources.values()]
    summary = ", ".join(f"{states.count(k)} {k}" for k in ("ok", "stale", "missing", "refused",
                                                           "failed")
                        if states.count(k))
    scales = [s.scale for s in inputs.sources.values() if s.ok]
    if scales:
        summary += "; scale " + ", ".join(f"{k} ({scales.count(k)} file(s))"
                                          for k in sorted(set(scales)))
        if len(set(scales)) > 1:
            summary += " — the files come from runs of different scales"
    nav = ["<nav><ol>", '<li><a href="#scorecard">Reproduction scorecard</a></li>']
    for section in SECTIONS:
        badges = " ".join(state_badge(inputs.sources[f]) for f in section.files)
        nav.append(f'<li><a href="#{H.esc(section.key)}">{H.esc(section.title)}</a> {badges}</li>')
    nav.append('<li><a href="#result-files">Result files</a></li></ol></nav>')
    body = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>sharp: reproduction report</title>", f"<style>{H.STYLE}</style></head><body><main>",
        "<h1>Softmax is not enough: the reproduction report</h1>",
        f"<p>The figures, tables and claims of Veličković et al., <em>Softmax is not "
        f"Enough (for Sharp Size Generalisation)</em> (ICML 2025) that this suite can test, as "
        f"it measured them in the result files below (the Gemma and CLRS-Text parts with small "
        f"models of its own). "
        f"Generated {H.esc(now)} from {H.code(inputs.results_dir)} at checkout "
        f"{H.code(inputs.head[:SHORT_SHA])} by {H.code('analysis/make_report.py')}; nothing on this "
        f"page is fetched from a network. Result files: {H.esc(summary)}.</p>",
        "\n".join(nav),
        scorecard,
    ]
    body += [guarded(s.key, s.title, inputs,
                     lambda s=s: section_html(s, inputs, figures_dir, page_dir))[0]
             for s in SECTIONS]
    body += [other_figures(inputs, figures_dir), files_table(inputs),
             scorecard_json(rows + derived),
             "</main></body></html>", ""]
    return "\n".join(b for b in body if b), rows


def write_report(results_dir: str, figures_dir: str | None = None, out: str | None = None,
                 now: str | None = None, published_dir: str | None = None) -> tuple:
    """Write the page; returns (path, Inputs, scorecard rows)."""
    figures_dir = figures_dir or os.path.join(results_dir, "figures")
    out = out or os.path.join(results_dir, "report", "index.html")
    now = now or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    inputs = Inputs(results_dir, published_dir)
    judged = judged_inputs(inputs, published_dir)
    page_dir = os.path.dirname(os.path.abspath(out))
    text, rows = page(inputs, figures_dir, page_dir, now, judged)
    common.save_text(text, page_dir, os.path.basename(out))
    return out, inputs, rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results_dir", metavar="RESULTS_DIR", help="directory of the result files")
    parser.add_argument("--figures", help="figures directory (default RESULTS_DIR/figures)")
    parser.add_argument("--out", help="page to write (default RESULTS_DIR/report/index.html)")
    parser.add_argument("--published", default=None,
                        help="shipped results to fall back to for a file missing in RESULTS_DIR "
                             "(default: results/published of this repository)")
    args = parser.parse_args(argv)
    path, inputs, rows = write_report(args.results_dir, args.figures, args.out,
                                      published_dir=args.published)
    for s in inputs.sources.values():
        if s.state == "refused":
            print(f"error: {s.name}: {s.reason}", file=sys.stderr)
    for failure in dict.fromkeys(inputs.failures):  # the scorecard's files may repeat the page's
        print(f"error: {failure}", file=sys.stderr)
    states = [s.state for s in inputs.sources.values()]
    counts = sc.counts(rows)
    shipped = sum(1 for s in inputs.sources.values() if s.ok and s.published)
    print(f"wrote report: {path} ({states.count('ok')} of {len(states)} result files read"
          + (f" ({shipped} of them published)" if shipped else "") + ", "
          f"{states.count('missing')} missing, {states.count('refused')} refused, "
          f"{states.count('failed')} failed; scorecard "
          f"{len(rows)} claims: " + ", ".join(f"{c} {v}" for v, c in counts.items() if c) + ")")
    if inputs.failures:
        print(f"report: {len(set(inputs.failures))} part(s) of the page failed (a bug in the "
              f"analysis), see above; please report it", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
