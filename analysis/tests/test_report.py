"""Tests of the paper page (analysis/page/report.py) and its scorecard (analysis/page/scorecard.py) on
synthetic result files with known values: missing, refused and stale files, the verdict rules
(including data that must give "differs"), the one number formatter, and a page that fetches
nothing from a network.
"""
import json
import os
import re
import shutil

import h5py
import numpy as np
import pytest

from page import report
from page import html as H
from page import sources as report_sources
from page import scorecard as sc
from page import scorecard_clrs
import synthetic
from page.sections import SECTIONS, Section
import products

PAPER_N = (16, 64, 256, 512, 1024, 2048, 4096, 16384)


def build(results_dir, figures_dir=None):
    path, inputs, rows = report.write_report(str(results_dir), figures_dir and str(figures_dir),
                                             now="test")
    with open(path, encoding="utf-8") as fh:
        return fh.read(), inputs, rows


def section_text(page: str, key: str) -> str:
    match = re.search(rf'<section id="{key}">(.*?)</section>', page, re.S)
    assert match, f"no section {key}"
    return match.group(1)


def inline_rows(page: str) -> list:
    match = re.search(r'<script type="application/json" id="scorecard-data">(.*?)</script>',
                      page, re.S)
    return json.loads(match.group(1).replace("<\\/", "</"))


def by_claim(rows, text):
    found = [r for r in rows if r.claim == text]
    assert len(found) == 1, f"{len(found)} rows named {text!r}"
    return found[0]


# ---- the one number formatter


def test_number_formats_every_kind_of_value():
    assert H.number(None) == "—" and H.number(float("nan")) == "—"
    assert H.number(3) == "3" and H.number(np.int64(-3)) == "−3"
    assert H.number(2.0 / 3.0) == "0.667"
    assert H.number(1e-5) == "1e−5" and H.number(123456789.0) == "1.23e8"
    assert H.number(0.9861, decimals=1, percent=True) == "98.6"
    assert H.number(0.031, decimals=1, percent=True, signed=True) == "+3.1"
    assert H.number(-0.031, decimals=1, percent=True, signed=True) == "−3.1"
    assert H.number(float("inf")) == "∞"


# ---- verdict rules


def test_polynomial_shape_is_an_identity_and_a_changed_coefficient_fails():
    rows = sc.polynomial_rows()
    assert [r.verdict for r in rows] == [sc.IDENTITY] * len(sc.SHAPE_CLAIMS)
    assert abs(by_claim(rows, "peak value of β(H)").ours - 2.4214) < 1e-4
    changed = sc.polynomial_rows((-0.037, 0.481, -2.3, 4.917, -1.6))
    assert sc.DIFFERS in [r.verdict for r in changed]


def test_accuracy_verdict_changes_when_the_data_cross_the_interval(tmp_path):
    """Three models around the paper's values agree; the same spread moved 10 points below the
    paper must differ (the rule can fail); two models decide nothing."""
    def rows_for(shift, seeds=(1, 2, 3)):
        accuracy = {}
        for i, t in enumerate(seeds):
            for x in ("softmax", "adaptive"):
                paper = dict(zip(PAPER_N, sc.mr.PAPER_ACCURACY[x]))
                accuracy[(x, t)] = {n: (paper[n] + shift + (i - 1) * 1.0) / 100 for n in PAPER_N}
        d = tmp_path / f"shift{shift}-{len(seeds)}"
        d.mkdir()
        synthetic.write_eval_max_exact(d / "eval-max.h5", accuracy, samples=1000)
        return [r for r in report.build_scorecard(report.Inputs(str(d))) if r.group == sc.TABLE]

    near = rows_for(0.0)
    assert len(near) == 16 and all(r.verdict == sc.AGREES for r in near), \
        [(r.claim, r.low, r.high, r.paper) for r in near if r.verdict != sc.AGREES]
    far = rows_for(-10.0)
    assert all(r.verdict == sc.DIFFERS for r in far)
    cell = by_claim(far, "softmax accuracy at n = 1024")
    assert cell.high < 53.8 and abs(cell.ours - 43.8) < 0.01 and cell.width > 0
    assert all(r.verdict == sc.INCONCLUSIVE for r in rows_for(0.0, seeds=(1, 2)))


def test_bound_violations_make_the_lemma_row_differ(tmp_path):
    synthetic.write_bounds(tmp_path / "bounds.h5", ns=tuple(2 ** k for k in range(1, 12)),
                           spreads=(5.69,), thetas=(1.0,))
    bounds = report_sources.inspect(str(tmp_path), "bounds.h5", "x").result
    assert [r.verdict for r in sc.lemma_rows(bounds, sc.Provenance("bounds.h5"), "")] == [sc.IDENTITY]
    threshold = sc.threshold_row(bounds, sc.Provenance("bounds.h5"))  # derived here: the bracket of the data
    assert threshold.verdict == sc.IDENTITY and threshold.derived
    assert (threshold.low, threshold.high) == (256.0, 512.0) and abs(threshold.ours - 296.9) < 0.1
    synthetic.write_bounds(tmp_path / "bounds.h5", ns=(2, 4, 8), spreads=(5.69,), thetas=(1.0,),
                           violate=2)
    rows = sc.lemma_rows(report_sources.inspect(str(tmp_path), "bounds.h5", "x").result,
                         sc.Provenance("bounds.h5"), "")
    assert rows[0].verdict == sc.DIFFERS and rows[0].ours == 2


# ---- the page: missing, refused, stale


def test_empty_results_directory_says_not_run_with_the_command(tmp_path):
    page, inputs, rows = build(tmp_path)
    for section in SECTIONS:
        text = section_text(page, section.key)
        for name in section.files:
            path = os.path.join(str(tmp_path), name)
            assert f"<code>{path}</code> is missing — run <code>make paper</code> or" in text
    bounds = section_text(page, "dispersion")
    assert (f"build/bin/sharp-bounds --config sweeps/quick/bounds.cfg --out "
            f"{tmp_path}/bounds.h5") in bounds
    # an experiment whose sweep reads another's results gets that input on its command line
    assert f"--checkpoint {tmp_path}/train-max.h5" in section_text(page, "max-retrieval")
    assert rows and all(r.verdict == sc.NOT_MEASURED for r in rows)
    assert len(inline_rows(page)) == len(rows) + len(report.build_derived(inputs))
    assert "<img" not in page


def test_refused_files_get_an_error_box_with_the_reason(tmp_path):
    synthetic.write_bounds(tmp_path / "bounds.h5", ns=(2, 4), attrs={"complete": None})
    (tmp_path / "weight-bound.h5").write_text("not an HDF5 file")
    synthetic.write_entropy_temperature(tmp_path / "eval-max.h5", ns=(16,), beta_steps=5)
    page, inputs, rows = build(tmp_path)
    assert "refused" in section_text(page, "dispersion")
    assert "the file is incomplete" in section_text(page, "dispersion")
    assert "not an HDF5 file" in section_text(page, "weight-bound")
    assert "needs &#x27;eval-max&#x27;" in section_text(page, "max-retrieval") or \
        "needs 'eval-max'" in section_text(page, "max-retrieval")
    assert 'class="box error"' in section_text(page, "max-retrieval")
    assert by_claim(rows, "softmax accuracy at n = 64").verdict == sc.NOT_MEASURED
    assert "was refused" in by_claim(rows, "softmax accuracy at n = 64").why


def test_stale_scale_and_provenance_of_each_figure(tmp_path):
    head = report_sources.checkout_sha()
    if head == report_sources.UNKNOWN:
        pytest.skip("not a git checkout: no commit to compare with")
    synthetic.write_bounds(tmp_path / "bounds.h5", ns=(2, 4, 8),
                           attrs={"git_sha": head, "scale": "quick"})
    synthetic.write_weight_bound(tmp_path / "weight-bound.h5", trials=5)  # git_sha "synthetic"
    figures = tmp_path / "figures"
    figures.mkdir()
    tiny = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + (40).to_bytes(4, "big") * 2 + b"\x08"
    for name in ("dispersion", "weight_bound"):
        (figures / f"{name}.png").write_bytes(tiny)
    os.utime(figures / "weight_bound.png", (1, 1))  # older than its result file
    page, inputs, rows = build(tmp_path)
    dispersion = section_text(page, "dispersion")
    assert "badge stale" not in dispersion and "box stale" not in dispersion
    assert "<dt>scale</dt><dd>quick</dd>" in dispersion
    assert f"<code>{head[:12]}</code>" in dispersion
    assert "sharp-bounds (synthetic)" in dispersion and "2025-01-01T00:00:00Z" in dispersion
    weight = section_text(page, "weight-bound")
    assert 'class="box stale"' in weight and "badge stale" in weight and "was made by commit <code>synthetic</code>" in weight
    assert "<dt>scale</dt><dd>unknown</dd>" in weight  # no scale attribute: never guessed
    assert "figure out of date" in weight and "figure out of date" not in dispersion
    assert dispersion.count("<img") == 1 and 'style="width:40px"' in dispersion
    entropy = section_text(page, "entropy")
    assert "is missing" in entropy and "<img" not in entropy


def test_figure_missing_and_other_figures(tmp_path):
    synthetic.write_bounds(tmp_path / "bounds.h5", ns=(2, 4, 8))
    figures = tmp_path / "figures"
    figures.mkdir()
    tiny = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + (8).to_bytes(4, "big") * 2
    (figures / "brand_new.png").write_bytes(tiny)
    page, _, _ = build(tmp_path)
    assert "figure not drawn: dispersion.png" in section_text(page, "dispersion")
    assert "brand_new.png" in section_text(page, "other-figures")


def test_page_fetches_nothing_and_every_docs_link_names_a_listed_anchor(tmp_path):
    synthetic.write_bounds(tmp_path / "bounds.h5", ns=(2, 4, 8))
    page, _, _ = build(tmp_path)
    assert not re.search(r'(src|href)="(https?:)?//', page)
    assert "<link" not in page and "<script src" not in page and "@import" not in page
    anchors = set(re.findall(r'href="[^"]*science\.md#([a-z0-9-]+)"', page))
    listed = {"notation", "dispersion-lemma", "transformers-disperse", "weight-norm-bound",
              "entropy-falls-with-beta", "logit-spread-in-llms", "adaptive-temperature",
              "streaming-entropy", "refitting-the-polynomial", "max-retrieval",
              "max-retrieval-reconstructed", "published-numbers", "remedies", "algorithmic-text",
              "the-text-study-pre-registered"}
    assert anchors and anchors <= listed, anchors - listed


def test_full_synthetic_set_reads_every_file(tmp_path):
    synthetic.write_bounds(tmp_path / "bounds.h5", ns=tuple(2 ** k for k in range(1, 11)))
    synthetic.write_weight_bound(tmp_path / "weight-bound.h5", trials=10)
    synthetic.write_entropy_temperature(tmp_path / "entropy-temperature.h5", ns=(16,),
                                        beta_steps=9)
    synthetic.write_eval_max(tmp_path / "eval-max.h5", ns=(16, 64, 256), samples=24,
                             map_samples=2)
    synthetic.write_fit_adaptive(tmp_path / "fit-adaptive.h5", samples=12, binned=True)
    page, inputs, rows = build(tmp_path)
    assert all(inputs.sources[n].ok for n in ("bounds.h5", "weight-bound.h5",
                                               "entropy-temperature.h5", "eval-max.h5",
                                               "fit-adaptive.h5"))
    table = section_text(page, "max-retrieval")
    assert "<table>" in table and "paired t p" in table
    assert by_claim(rows, "softmax accuracy at n = 512").verdict == sc.NOT_MEASURED  # not in grid
    assert by_claim(rows, "softmax accuracy at n = 64").verdict in (sc.AGREES, sc.DIFFERS,
                                                                  sc.INCONCLUSIVE)
    refits = [r for r in rows if r.group == sc.POLYNOMIAL]
    assert len(refits) == 6
    # the synthetic fits peak inside their data (H < 3.1) but never cross β = 1 there
    assert [r.verdict for r in refits if "peak" in r.claim] == [sc.DIFFERS] * 4
    assert all(r.verdict == sc.NOT_MEASURED and "data end at H = " in r.why
               for r in refits if "up to" in r.claim)
    assert "reconstructed protocol" in section_text(page, "scorecard")
    # a file no dedicated reader knows yet gets an overview of its columns
    section = Section("extra", "Extra", "remedies", ("bounds.h5",), "intro")
    assert "No dedicated table reads this experiment yet" in report.section_html(
        section, inputs, str(tmp_path), str(tmp_path))


def test_remedies_table_per_remedy_and_n(tmp_path):
    # eval-remedies.h5 is written by sharp-eval-max (its sweep says `# experiment: eval-max`)
    synthetic.write_eval_max(tmp_path / "eval-remedies.h5", ns=(16, 256), train_seeds=(1, 2, 3),
                             samples=16, normalisers=("trained",), map_samples=0)
    page, inputs, rows = build(tmp_path)
    assert inputs.sources["eval-remedies.h5"].ok
    text = section_text(page, "remedies")
    assert "ranking rate %" in text and "No dedicated table" not in text
    # The leaderboard follows (analysis/remedies_table.py), its rows named by training normaliser.
    assert "McNemar" in text and "unknown (training file not found)" in text
    assert "paper: softmax" in text
    # ranking rate of the synthetic file: min(1, 4/√n) → 100% at 16, 25% at 256, every seed
    first = text[:text.index("</table>")]
    body = re.findall(r"<tr>(.*?)</tr>", first, re.S)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", b, re.S) for b in body]
    cells = [c for c in cells if c]
    assert [c[2] for c in cells] == ["16", "256"] and [c[1] for c in cells] == ["3", "3"]
    assert cells[0][4].startswith("100.0") and cells[1][4].startswith("25.0")
    assert re.match(r"\d+\.\d \[\d+\.\d, \d+\.\d\]", cells[0][3])
    # a wrong file is refused with the reader's reason, not drawn
    synthetic.write_eval_max(tmp_path / "eval-remedies.h5", ns=(16,), train_seeds=(1,),
                             samples=8, map_samples=0)
    page, inputs, rows = build(tmp_path)
    assert "lacks 'trained'" in section_text(page, "remedies")


# ---- CLRS-Text claims


def test_clrs_rows_read_the_text_files_and_their_training_normalisers(tmp_path):
    exact = {("minimum", "adaptive"): (0.2, 0), ("minimum", "softmax"): (0.9, 0.1),
             ("sorting", "adaptive"): (0.1, 0), ("sorting", "softmax"): (0.8, 0.1),
             ("heapsort", "adaptive"): (0.5, 0), ("heapsort", "softmax"): (0.5, 0.5)}
    synthetic.write_text_files(tmp_path, exact)
    page, inputs, rows = build(tmp_path)
    assert inputs.sources["eval-text.h5"].ok
    claims = [r for r in rows if r.group == scorecard_clrs.CLRS]
    # inside training every model is perfect: only lengths 16 and 32 count, and softmax wins;
    # the models were trained without traces, so the exceptions are not measured
    assert [(r.verdict, r.ours) for r in claims] == [
        (sc.DIFFERS, "ahead on 0 of 2 algorithms"), (sc.NOT_MEASURED, None),
        (sc.AGREES, "ahead on 0, behind on 2 of 3 algorithms")]
    assert H.esc(scorecard_clrs.CLRS) in section_text(page, "scorecard")
    # the same models at 50% on their own training lengths did not learn the task
    synthetic.write_text_files(tmp_path, exact, seen_exact=0.5)
    page, inputs, rows = build(tmp_path)
    claims = [r for r in rows if r.group == scorecard_clrs.CLRS]
    assert [r.verdict for r in claims] == [sc.NOT_MEASURED] * 3
    assert "did not learn the task" in claims[0].why and "softmax, seed 1: 50.0%" in claims[0].why


def test_the_text_study_section_shows_the_gate_the_endpoint_and_the_curves(tmp_path):
    # Seed 2's adaptive model misses the gate: the primary comparison is not measured, and says why.
    def right(normaliser, item, n, seed, index):
        j = np.arange(index.size)
        if n in (4, 8, 16):
            return (j % 10 != 0) if (normaliser, item, seed) == ("adaptive", "trained", 2) else np.ones(index.size, bool)
        return j % 2 == 0
    synthetic.write_text_study(tmp_path, right=right, primary=(24, 32))
    import make_figures
    assert make_figures.main([str(tmp_path), "--out", str(tmp_path / "figures")]) == 0
    page, inputs, rows = build(tmp_path, tmp_path / "figures")
    text = section_text(page, "text-study")
    assert "adaptive, seed 2" in text and "90.0" in text and "not learned" in text
    assert "adaptive (primary)" in text and "not measured (gate: minimum, adaptive, seed 2: 90.0%)" in text
    assert "softmax + adaptive at inference" in text and "no difference shown" in text
    assert "drawn independently for each training seed" in text
    for title in ("Learning curves", "Exact match against length, every sample", "The answer rows"):
        assert title in text
    assert "The pilot" not in text   # no train-text-pilot.h5: its figure is simply absent
    assert "text_study_curves" not in section_text(page, "other-figures") if 'id="other-figures"' in page else True


def test_the_pilots_file_holds_its_studys_experiment_and_its_curves_are_shown(tmp_path):
    """train-text-pilot.h5 is written by sharp-train-text: read as a train-text file, not refused as
    another experiment's (the page once refused it and left the pilot's curves out)."""
    assert report_sources.experiment_of("train-text-pilot.h5") == "train-text"
    assert report_sources.experiment_of("eval-remedies.h5") == "eval-max"
    assert report_sources.experiment_of("bounds.h5") == "bounds"
    synthetic.write_text_study(tmp_path, lengths=(4, 8, 16), seeds=(1,), samples=6)
    shutil.copy(tmp_path / "train-text.h5", tmp_path / "train-text-pilot.h5")
    import make_figures
    assert make_figures.main([str(tmp_path), "--out", str(tmp_path / "figures")]) == 0
    page, inputs, rows = build(tmp_path, tmp_path / "figures")
    text = section_text(page, "text-study")
    assert "The pilot&#x27;s learning curves" in text   # the figure's title, HTML-escaped
    assert "refused" not in text and "holds experiment" not in text

def write_transformer_dispersion(path, growing=("alibi",), ns=(64, 256, 1024)):
    """Random models at three n: every positional scheme in `growing` has logit spreads that grow
    like n (the theorem's hypothesis fails), the others constant spreads and α_max ∝ 1/n."""
    grid, arrays, violations = [], {}, []
    for positional in dict.fromkeys(("none",) + tuple(growing)):
        for n in ns:
            grid.append(dict(checkpoint="none", layers=1, heads=2, d_model=8, vocab=8, causal=1,
                             positional=positional, layer_norm=1, init_scale=1.0,
                             max_length=1024, normaliser="softmax", input="uniform", samples=1,
                             seed=1, n=int(n)))
            delta = np.array([[3.0, 5.0]]) * (n / 64 if positional in growing else 1.0)
            arrays[len(grid) - 1] = {"delta_max": delta, "beta_max": np.ones((1, 2)),
                                     "certificate": 2 * delta, "n_alpha_max_last": np.full((1, 2), 4.0),
                                     "n_alpha_max_half_mean": np.full((1, 2), 3.0),
                                     "alpha_max_last": np.full((1, 2), 4.0 / n),
                                     "alpha_max_half_mean": np.full((1, 2), 4.0 / n)}
            violations.append(0)
    synthetic.write_result(path, "transformer-dispersion", grid,
                           {"lemma_violations": np.array(violations, dtype=np.int64),
                            "tokens": np.array([float(p["n"]) for p in grid])},
                           arrays=arrays)


def test_transformer_theorem_and_gemma_analogue(tmp_path):
    write_transformer_dispersion(tmp_path / "transformer-dispersion.h5")
    page, inputs, rows = build(tmp_path)
    section = section_text(page, "transformers")
    assert "bounded: must hold" in section and "unbounded: must fail" in section
    assert "outside the hypothesis" in section and 'class="v-differs"' not in section
    theorem = by_claim(rows, "every head of a transformer with bounded positions disperses "
                             "(α_max → 0)")
    assert theorem.verdict == sc.IDENTITY and theorem.ours == "1 of 1 models"
    gemma = [r for r in rows if r.group == sc.GEMMA]
    assert len(gemma) == 4 and all(r.verdict == sc.ANALOGUE for r in gemma)
    assert gemma[0].ours == "[3.00, 5.00]" and gemma[1].ours == "4.00 ± 1.41"
    assert "2 heads of 1 random transformer(s)" in gemma[0].why
    # a model with bounded positions whose logits grow must make the theorem row differ
    write_transformer_dispersion(tmp_path / "transformer-dispersion.h5", growing=("none",))
    page, inputs, rows = build(tmp_path)
    theorem = by_claim(rows, "every head of a transformer with bounded positions disperses "
                             "(α_max → 0)")
    assert theorem.verdict == sc.DIFFERS
    assert 'class="v-differs"' in section_text(page, "transformers")


# ---- the words: the page's static text and the docs say only what was shown


def test_sections_say_what_their_files_hold_and_captions_do_not_predict(tmp_path):
    synthetic.write_eval_max(tmp_path / "eval-remedies.h5", ns=(16, 256), train_seeds=(1, 2),
                             samples=8, normalisers=("trained",), map_samples=0)
    synthetic.write_bounds(tmp_path / "bounds.h5", ns=(2, 4, 8))
    page, _, _ = build(tmp_path)
    remedies = section_text(page, "remedies")
    assert "2^20" not in remedies and "eval-remedies.h5 holds n = 16 … 256 (4 points)" in remedies
    assert "2^30" not in section_text(page, "dispersion")
    assert "bounds.h5 holds n = 2 … 8" in section_text(page, "dispersion")
    synthetic.write_eval_max(tmp_path / "eval-remedies.h5", ns=(16, 1 << 20), train_seeds=(1,),
                             samples=8, normalisers=("trained",), map_samples=0,
                             train_normaliser={1: "entmax15"})
    page, _, _ = build(tmp_path)
    assert ("eval-remedies.h5 holds n = 16 … 2^20, models trained with entmax15 (2 points)"
            in section_text(page, "remedies"))
    static = " ".join(f.caption for p in products.PRODUCTS for f in p.figures) + " ".join(
        s.intro for s in SECTIONS)
    for prediction in ("land near", "loose by a factor that grows", "stay sharp.",
                       "fall towards chance", "tested to 2^", "up to 2^"):
        assert prediction not in static, prediction


def test_the_docs_claim_only_what_was_shown():
    with open(report.DOCS, encoding="utf-8") as fh:
        docs = fh.read()
    assert "entropy → `ln n`" not in docs and "`H/ln n → 1`" in docs
    assert "answer rows are sharper" not in docs
    assert "our reading, not the paper's" in docs   # the exceptions' mechanism
    with open(os.path.join(os.path.dirname(report.DOCS), "..", "README.md"),
              encoding="utf-8") as fh:
        readme = fh.read()
    # README and docs state the same measurement of the RoPE text model the same way
    rope = re.search(r"RoPE reaches (\d+)% exact match after 800 steps at lr 3e-3 \((\d+)%",
                     docs)
    assert rope and (f"reaches {rope.group(1)}% exact match on minimum at lengths 4, 5, 7 after "
                     f"800 steps at lr 3e-3 ({rope.group(2)}% at the default") in readme


def test_each_scorecard_group_is_one_block(tmp_path):
    rows = report.build_scorecard(report.Inputs(str(tmp_path)))
    groups = [r.group for r in rows]
    blocks = [g for i, g in enumerate(groups) if i == 0 or groups[i - 1] != g]
    assert len(blocks) == len(set(groups)), blocks
