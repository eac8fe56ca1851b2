"""The scorecard's verdict rules (analysis/page/scorecard.py, docs/science.md#published-numbers), each
with synthetic data that must give every verdict it can give, including the cases a hostile
reading found: an interval too wide to decide, significance without an effect, models that learned
nothing, a refit point beyond the data.
"""
import numpy as np

import competence_gate as gate
from page import report
from page import scorecard as sc
from page import scorecard_clrs as clrs
import synthetic

PAPER_N = synthetic.PAPER_N


def scorecard_of(directory) -> list:
    return report.build_scorecard(report.Inputs(str(directory)))


def by_claim(rows, text):
    found = [r for r in rows if r.claim == text]
    assert len(found) == 1, f"{len(found)} rows named {text!r}"
    return found[0]


def paper_accuracy(x: str, shift: float = 0.0) -> dict:
    """n -> the paper's accuracy of normaliser x as a fraction, moved by `shift` points."""
    return {n: (v + shift) / 100 for n, v in zip(PAPER_N, sc.mr.PAPER_ACCURACY[x])}


def eval_max_with(directory, at_16384: dict, samples=1000) -> None:
    """Three models at the paper's accuracies ± 0.2 points everywhere, except at n = 16384 where
    model i has at_16384[normaliser][i] (a fraction)."""
    accuracy = {}
    for i, t in enumerate((1, 2, 3)):
        for x in ("softmax", "adaptive"):
            cells = paper_accuracy(x, 0.2 * (i - 1))
            cells[16384] = at_16384[x][i]
            accuracy[(x, t)] = cells
    synthetic.write_eval_max_exact(directory / "eval-max.h5", accuracy, samples=samples)


# ---- 2. agreement needs precision


def test_an_interval_too_wide_for_a_verdict_is_inconclusive_not_agreement(tmp_path):
    # The hostile reading's case: 19.2, 11.5 and 15.0% at 16384 give [5.7, 24.8], which held both
    # the paper's softmax 12.4 and its adaptive 14.0.
    wide = (0.192, 0.115, 0.150)
    eval_max_with(tmp_path, {"softmax": wide, "adaptive": wide})
    rows = scorecard_of(tmp_path)
    for x in ("softmax", "adaptive θ"):
        row = by_claim(rows, f"{x} accuracy at n = 16384")
        assert abs(row.low - 5.7) < 0.1 and abs(row.high - 24.8) < 0.1
        assert row.verdict == sc.INCONCLUSIVE, (row.verdict, row.why)
        assert "±9.6 too wide for a verdict" in row.why and "limit ±3" in row.why
    # the other cells are precise (±0.5 points) and hold the paper's value: they agree
    assert by_claim(rows, "softmax accuracy at n = 1024").verdict == sc.AGREES


def test_a_precise_interval_agrees_inside_and_any_interval_differs_outside(tmp_path):
    eval_max_with(tmp_path, {"softmax": (0.120, 0.124, 0.128), "adaptive": (0.30, 0.40, 0.35)})
    rows = scorecard_of(tmp_path)
    inside = by_claim(rows, "softmax accuracy at n = 16384")
    assert inside.verdict == sc.AGREES and inside.high - inside.low < 6
    # wide, but the paper's 14.0 lies outside it: a difference needs no precision
    outside = by_claim(rows, "adaptive θ accuracy at n = 16384")
    assert outside.verdict == sc.DIFFERS and outside.low > 14.0


def test_the_precision_limit_is_three_points_or_half_the_papers_gap():
    assert sc.precision_limit(16) == 3.0            # gap 0
    assert sc.precision_limit(1024) == 3.0          # gap 3.9: half is 1.95
    assert sc.precision_limit(1024, floor=1.0) == (57.7 - 53.8) / 2
    verdict, why = sc.interval_verdict(50.0, 46.9, 53.1, 3, limit=3.0)
    assert verdict == sc.INCONCLUSIVE and "±3.1" in why
    assert sc.interval_verdict(50.0, 47.0, 53.0, 3, limit=3.0)[0] == sc.AGREES  # boundary
    assert sc.interval_verdict(50.0, 47.0, 53.0, 2, limit=3.0)[0] == sc.INCONCLUSIVE
    assert sc.interval_verdict(50.0, None, None, 5, limit=3.0)[0] == sc.INCONCLUSIVE


def parabola(peak_h: float, peak_beta: float) -> np.ndarray:
    """Coefficients (degree 4, highest first) of β(H) = peak_beta − (H − peak_h)²."""
    return np.array([0.0, 0.0, -1.0, 2 * peak_h, peak_beta - peak_h ** 2])


def test_refit_rows_need_an_interval_within_ten_percent_of_the_papers_value():
    fits = {"coefficients": [(parabola(h, b), 0.5, 9.0) for h, b in
                             ((4.3, 2.0), (4.4, 2.4), (4.5, 2.8))]}
    rows = {r.claim: r for r in sc.refit_rows(fits, sc.Provenance("fit-adaptive.h5"), "")}
    peak_h = rows["peak of the refitted β(H) at H = (per-set β*)"]
    assert peak_h.verdict == sc.AGREES and abs(peak_h.ours - 4.4) < 1e-9
    # peak values 2.0, 2.4, 2.8: [1.4, 3.4] holds 2.421 but is ±1.0, beyond 10% of it
    peak_beta = rows["peak value of the refitted β(H) (per-set β*)"]
    assert peak_beta.verdict == sc.INCONCLUSIVE and "too wide" in peak_beta.why


# ---- 3. effects, not significance


def effect_rows(directory, adaptive: tuple, softmax: float = 0.5) -> dict:
    """n -> the effect row of three models: softmax at `softmax` everywhere, adaptive at
    softmax + adaptive[i] points for model i."""
    accuracy = {}
    for i, t in enumerate((1, 2, 3)):
        accuracy[("softmax", t)] = softmax
        accuracy[("adaptive", t)] = softmax + adaptive[i] / 100
    synthetic.write_eval_max_exact(directory / "eval-max.h5", accuracy, samples=1000)
    rows = [r for r in scorecard_of(directory) if r.group == sc.P_VALUES]
    return {int(r.claim.split("n = ")[1].split()[0]): r for r in rows}


def test_an_effect_agrees_inside_a_precise_interval_and_differs_outside(tmp_path):
    rows = effect_rows(tmp_path, (2.0, 3.0, 4.0))   # Δ = 3 ± 2.5 points
    assert rows[1024].verdict == sc.AGREES, rows[1024].why          # the paper's +3.9
    assert rows[1024].paper == 3.9 and abs(rows[1024].ours - 3.0) < 1e-9
    assert rows[1024].low < 3.9 < rows[1024].high
    assert rows[16].verdict == sc.DIFFERS, rows[16].why             # the paper's 0.0: outside
    assert "p = " in rows[1024].why                                 # both tests still shown


def test_significance_alone_never_differs_an_underpowered_effect_is_inconclusive(tmp_path):
    # Our t-test is not significant (p ≈ 0.4) where the paper's is (1e-4 at 1024), but the
    # paper's +3.9 lies inside our wide interval: that is a lack of power, not a difference.
    rows = effect_rows(tmp_path, (-2.0, 3.0, 10.0))
    row = rows[1024]
    assert row.verdict == sc.INCONCLUSIVE, row.why
    assert "underpowered: 3 models" in row.why
    assert rows[16].verdict == sc.INCONCLUSIVE                     # 0.0 lies inside too


def test_effect_verdict_rule():
    assert sc.effect_verdict(3.9, 0.5, 5.5, 3, 3.0)[0] == sc.AGREES
    assert sc.effect_verdict(3.9, 4.0, 5.0, 3, 3.0)[0] == sc.DIFFERS
    assert sc.effect_verdict(3.9, -9.0, 15.0, 3, 3.0)[0] == sc.INCONCLUSIVE
    assert sc.effect_verdict(3.9, 0.5, 5.5, 2, 3.0)[0] == sc.INCONCLUSIVE


# ---- 6. only the paper's claims are counted


def test_over_an_empty_folder_every_claim_is_not_measured_and_derived_rows_are_apart(tmp_path):
    page, inputs, rows = build_page(tmp_path)
    assert rows and all(r.verdict == sc.NOT_MEASURED for r in rows), \
        [(r.claim, r.verdict) for r in rows if r.verdict != sc.NOT_MEASURED]
    derived = report.build_derived(inputs)
    printed = sorted(r.paper for r in derived)
    assert printed == sorted([0.8486, 5.9445, 4.412, 2.421, 381, 297])
    assert all(r.derived and r.verdict == sc.IDENTITY for r in derived)   # arithmetic, no data
    assert not {r.claim for r in derived} & {r.claim for r in rows}
    counts = sc.counts(rows + derived)                 # derived rows are never counted
    assert sum(counts.values()) == len(rows) and counts[sc.NOT_MEASURED] == len(rows)
    assert "one row per numeric claim of the paper" not in page.lower()
    assert 'id="derived-here"' in page


def build_page(directory):
    path, inputs, rows = report.write_report(str(directory), now="test")
    with open(path, encoding="utf-8") as fh:
        return fh.read(), inputs, rows


def test_the_derived_threshold_differs_when_the_data_cross_elsewhere(tmp_path):
    import h5py
    from page import sources as report_sources
    synthetic.write_bounds(tmp_path / "bounds.h5", ns=tuple(2 ** k for k in range(1, 12)),
                           spreads=(5.69,), thetas=(1.0,))
    with synthetic.edited(tmp_path / "bounds.h5") as f:   # α_max never falls below 1/2
        f["points/alpha_max"][...] = 0.9
    row = sc.threshold_row(report_sources.inspect(str(tmp_path), "bounds.h5", "x").result,
                           sc.Provenance("bounds.h5"))
    assert row.verdict == sc.DIFFERS and row.derived and row.low == 2048.0


# ---- 7. refit rows are not measured beyond the data


def refit(fits: list) -> dict:
    """claim (per-set protocol) -> row, for fits [(coefficients, H_min, H_max)]."""
    rows = sc.refit_rows({"coefficients": fits}, sc.Provenance("fit-adaptive.h5"), "")
    return {r.claim.replace(" (per-set β*)", ""): r for r in rows if "per-set" in r.claim}


def test_a_refit_point_beyond_the_data_is_not_measured_never_clamped():
    # peaks at H = 4.4 but the data end at 4.0: the largest β on the data is at its end
    rows = refit([(parabola(4.4, 2.4), 0.5, 4.0)] * 3)
    for claim in ("peak of the refitted β(H) at H =", "peak value of the refitted β(H)",
                  "refitted β(H) > 1 up to H ="):
        assert rows[claim].verdict == sc.NOT_MEASURED, (claim, rows[claim].why)
        assert rows[claim].ours is None and "data end at H = 4" in rows[claim].why
    # the data reach past the peak (4.4) but end at 5.0, before the crossing (5.58)
    rows = refit([(parabola(4.4, 2.4), 0.5, 5.0)] * 3)
    assert rows["peak of the refitted β(H) at H ="].verdict != sc.NOT_MEASURED
    assert rows["refitted β(H) > 1 up to H ="].verdict == sc.NOT_MEASURED
    assert "data end at H = 5" in rows["refitted β(H) > 1 up to H ="].why


def test_a_refit_without_the_point_inside_data_that_hold_the_papers_point_differs():
    rising = np.array([0.0, 0.0, 0.0, 1.0, 1.0])   # β = 1 + H: no peak, no crossing
    rows = refit([(rising, 0.5, 8.0)] * 3)
    assert rows["peak of the refitted β(H) at H ="].verdict == sc.DIFFERS
    assert rows["refitted β(H) > 1 up to H ="].verdict == sc.DIFFERS
    assert rows["peak value of the refitted β(H)"].verdict == sc.NOT_MEASURED


# ---- 1. the competence gate, "no difference", traces


def pools(table: dict, total: int = 320) -> dict:
    """{(algorithm, trained, item): fraction} -> unseen_pools' {key: (right, samples)}."""
    return {k: (int(round(f * total)), total) for k, f in table.items()}


def text_table(adaptive: dict, softmax: dict, at_inference: dict | None = None) -> dict:
    out = {}
    for a, f in adaptive.items():
        out[(a, "adaptive", "trained")] = f
    for a, f in softmax.items():
        out[(a, "softmax", "trained")] = f
        out[(a, "softmax", "adaptive")] = (at_inference or {}).get(a, f * 0.8)
    return out


def models_of(table: dict, exact: float = 0.99, traces: bool = False, failing=()) -> dict:
    """One Competence per (algorithm, trained normaliser) of a text_table, at `exact` on its
    training lengths (0.30 for the (algorithm, normaliser) pairs in `failing`)."""
    out = {}
    for algorithm, trained, _ in table:
        ref = f"train-text.h5#{algorithm}-{trained}"
        out[ref] = gate.Competence(ref, trained, 1, (algorithm,), (4, 5, 7),
                                   0.30 if (algorithm, trained) in failing else exact, traces)
    return out


def judge(table: dict, **kw) -> list:
    return clrs.judge_clrs(pools(table), models_of(table, **kw))


def test_clrs_claim_one_agrees_differs_no_difference_and_is_inconclusive_between():
    algos = ("minimum", "binary_search", "insertion_sort")
    verdict, ours, why, _ = judge(text_table({a: 0.8 for a in algos}, {a: 0.4 for a in algos}))[0]
    assert verdict == sc.AGREES and ours == "ahead on 3 of 3 algorithms"
    assert "not the paper's Gemma" in why
    losses = text_table({a: 0.3 for a in algos}, {a: 0.8 for a in algos})
    assert judge(losses)[0][:2] == (sc.DIFFERS, "ahead on 0 of 3 algorithms")
    both_zero = text_table({a: 0.0 for a in algos}, {a: 0.0 for a in algos})
    assert judge(both_zero)[0][0] == sc.NO_DIFFERENCE
    unclear = text_table({a: 0.5 for a in algos}, {a: 0.5 for a in algos})   # ±7.7 points
    assert judge(unclear)[0][0] == sc.INCONCLUSIVE
    assert clrs.judge_clrs({}, {})[0][0] == sc.NOT_MEASURED


def test_clrs_rows_about_models_that_did_not_learn_are_not_measured():
    # The hostile reading's case: softmax-trained models near chance, adaptive at inference
    # below them, was "agrees" ("above on 0 of 2 algorithms").
    algos = ("minimum", "binary_search")
    table = text_table({}, {a: 0.16 for a in algos}, {a: 0.10 for a in algos})
    assert judge(table)[2][0] == sc.AGREES                          # competent models
    verdict, ours, why, _ = judge(table, exact=0.19)[2]
    assert verdict == sc.NOT_MEASURED and "did not learn the task" in why
    assert "gate ≥ 95%" in why and "minimum, softmax, seed 1: 19.0%" in why
    # one model below the gate is enough; the gate's boundary passes
    table = text_table({a: 0.8 for a in algos}, {a: 0.4 for a in algos})
    assert judge(table, failing=[("minimum", "adaptive")])[0][0] == sc.NOT_MEASURED
    assert judge(table, exact=gate.GATE)[0][0] == sc.AGREES
    assert not gate.Competence("m", "softmax", 1, ("minimum",), (4,), None, False).passes


def test_clrs_exceptions_not_measured_without_traces_and_equal_is_no_difference():
    base = text_table({"minimum": 0.8}, {"minimum": 0.4})
    verdict, ours, why, _ = judge(base, traces=True)[1]
    assert verdict == sc.NOT_MEASURED and "mst_kruskal: graph traces are not generated" in why
    behind = text_table({"heapsort": 0.2, "bubble_sort": 0.1}, {"heapsort": 0.6, "bubble_sort": 0.5})
    verdict, ours, why, _ = judge(behind)[1]
    assert verdict == sc.NOT_MEASURED and "trained without traces" in why
    assert judge(behind, traces=True)[1][:2] == (sc.AGREES, "ahead on 0, behind on 2 of 2")
    zero = text_table({"heapsort": 0.0, "bubble_sort": 0.0}, {"heapsort": 0.0, "bubble_sort": 0.0})
    assert judge(zero, traces=True)[1][0] == sc.NO_DIFFERENCE      # was "agrees"
    wins = text_table({"heapsort": 0.9, "bubble_sort": 0.4}, {"heapsort": 0.3, "bubble_sort": 0.4})
    assert judge(wins, traces=True)[1][:2] == (sc.DIFFERS, "ahead on 1, behind on 0 of 2")


def test_clrs_adaptive_at_inference_agrees_only_below_and_equal_is_no_difference():
    algos = ("minimum", "binary_search")
    below = text_table({}, {a: 0.6 for a in algos}, {a: 0.2 for a in algos})
    assert judge(below)[2][:2] == (sc.AGREES, "ahead on 0, behind on 2 of 2 algorithms")
    level = text_table({}, {a: 1.0 for a in algos}, {a: 1.0 for a in algos})
    assert judge(level)[2][0] == sc.NO_DIFFERENCE                   # was "agrees"
    above = text_table({}, {a: 0.3 for a in algos}, {a: 0.9 for a in algos})
    assert judge(above)[2][0] == sc.DIFFERS
    one = text_table({}, {a: 0.3 for a in algos}, {"minimum": 0.9, "binary_search": 0.3})
    assert judge(one)[2][0] == sc.INCONCLUSIVE


def test_the_gate_reads_each_models_training_lengths_from_the_eval_text_file(tmp_path):
    synthetic.write_text_files(tmp_path, {("minimum", "softmax"): (0.9, 0.1),
                                ("minimum", "adaptive"): (0.2, 0)}, seen_exact=0.5)
    models = gate.competence(str(tmp_path / "eval-text.h5"))
    assert sorted(m.trained for m in models.values()) == ["adaptive", "softmax"]
    for m in models.values():
        assert m.lengths == (4, 8) and m.exact == 0.5 and not m.passes and not m.traces
        assert m.algorithms == ("minimum",) and m.seed == 1


# ---- 4. every row says where it stands


def test_every_row_names_its_files_scale_models_steps_protocol_and_papers_source(tmp_path):
    scale = {"scale": "custom"}
    refs = synthetic.write_train_max(tmp_path / "train-max.h5", steps=1234, attrs=scale)
    accuracy = {(x, t): paper_accuracy(x) for x in ("softmax", "adaptive") for t in (1, 2, 3)}
    synthetic.write_eval_max_exact(tmp_path / "eval-max.h5", accuracy, attrs=scale,
                                   checkpoints=refs)
    synthetic.write_bounds(tmp_path / "bounds.h5", ns=(2, 4, 8), attrs={"scale": "quick"})
    synthetic.write_text_files(tmp_path, {("minimum", "softmax"): (0.9, 0.1),
                                          ("minimum", "adaptive"): (0.2, 0)})
    page, inputs, rows = build_page(tmp_path)
    table = [r for r in rows if r.group in (sc.TABLE, sc.P_VALUES)]
    assert len(table) == 22
    for r in table:
        assert (r.provenance.file, r.provenance.scale, r.provenance.models,
                r.provenance.steps, r.provenance.origin) == ("eval-max.h5", "custom", 3,
                                                             "1234", "run")
        assert r.reconstructed and "as quoted (2 secondary sources)" in r.paper_source
    assert "eval-max.h5 · scale custom · 3 models × 1234 steps" in page
    lemma = by_claim(rows, "exp(−δ/θ)/n ≤ α_k ≤ exp(δ/θ)/n for every logit law, n and δ/θ")
    assert lemma.provenance.text() == "bounds.h5 · scale quick" and not lemma.reconstructed
    assert lemma.paper_source == "the paper's formal result"
    # the text models' file has no scale attribute: never guessed; 2 models of 500 steps
    clrs_row = [r for r in rows if r.group == clrs.CLRS][0]
    assert clrs_row.provenance.text() == "eval-text.h5 · scale unknown · 2 models × 500 steps"
    assert clrs_row.paper_source == "the paper's text (qualitative)"
    missing = by_claim(rows, "every head of a transformer with bounded positions disperses "
                             "(α_max → 0)")
    assert missing.provenance.text() == "transformer-dispersion.h5 · file not read"
    # a row's source can be another origin without touching the row builders
    assert sc.Provenance("eval-max.h5", "paper", "published: results/published/paper/"
                         "eval-max.h5").of(10).text() == (
        "eval-max.h5 (published: results/published/paper/eval-max.h5) · scale paper · 10 models")
    assert all(r.paper_source for r in rows + report.build_derived(inputs))


# ---- 5. every "differs" has a cause


def test_every_differs_row_names_one_cause_with_a_link(tmp_path):
    refs = synthetic.write_train_max(tmp_path / "train-max.h5", steps=4000,
                                     attrs={"scale": "quick"})
    accuracy = {(x, t): paper_accuracy(x, -10.0 + 0.2 * t) for x in ("softmax", "adaptive")
                for t in (1, 2, 3)}
    synthetic.write_eval_max_exact(tmp_path / "eval-max.h5", accuracy, samples=1000,
                                   attrs={"scale": "quick"}, checkpoints=refs)
    synthetic.write_bounds(tmp_path / "bounds.h5", ns=(2, 4, 8), spreads=(5.69,),
                           thetas=(1.0,), violate=1)
    synthetic.write_text_files(tmp_path, {("minimum", "softmax"): (0.9, 0.1),
                                          ("minimum", "adaptive"): (0.2, 0)})
    page, inputs, rows = build_page(tmp_path)
    rising = np.array([0.0, 0.0, 0.0, 1.0, 1.0])
    rows += sc.refit_rows({"coefficients": [(rising, 0.5, 8.0)] * 3},
                          sc.Provenance("fit-adaptive.h5"), "")
    rows += sc.polynomial_rows((-0.037, 0.481, -2.3, 4.917, -1.6))
    differs = [r for r in rows if r.verdict == sc.DIFFERS]
    groups = {r.group for r in differs}
    assert {sc.TABLE, sc.P_VALUES, sc.THEOREMS, sc.POLYNOMIAL, clrs.CLRS,
            sc.DERIVED_POLYNOMIAL} <= groups, groups
    for r in differs:
        assert r.cause and r.cause_anchor, r.claim
    cell = by_claim(rows, "softmax accuracy at n = 1024")
    assert cell.cause_anchor == "max-retrieval-reconstructed"
    assert "9.6 points below the paper's" in cell.cause
    assert "3 models × 4000 steps at quick scale" in cell.cause
    lemma = by_claim(rows, "exp(−δ/θ)/n ≤ α_k ≤ exp(δ/θ)/n for every logit law, n and δ/θ")
    assert lemma.cause.startswith("Not explained") and lemma.cause_anchor == "dispersion-lemma"
    assert [r for r in rows if r.group == clrs.CLRS][0].cause_anchor == "algorithmic-text"
    assert page.count("<strong>Cause:</strong>") == sum(
        1 for r in differs if not r.derived and r.group != sc.POLYNOMIAL)
    assert 'science.md#max-retrieval-reconstructed">' in page


def test_a_differs_row_without_a_known_cause_is_refused():
    try:
        sc.Row("a group nobody knows", "a claim", "notation", 1.0, 2.0, sc.DIFFERS, "why")
    except ValueError as err:
        assert "cause" in str(err)
    else:
        raise AssertionError("a differs row without a cause was accepted")
    row = sc.Row("a group nobody knows", "a claim", "notation", 1.0, 2.0, sc.DIFFERS, "why",
                 cause="Not explained.", cause_anchor="notation")
    assert row.cause == "Not explained."


def test_violation_checks_give_each_verdict_they_can(tmp_path):
    """The lemma and the weight bound share one rule (scorecard._violation_rows): no file → not
    measured; no 'violations' column → inconclusive; none → identity; any → differs, with the
    count and whose fault it is."""
    class FakeResult:
        def __init__(self, metrics, points):
            self.metrics, self.points = metrics, points

        def __len__(self):
            return self.points

    where = sc.Provenance("f.h5")
    for rows_of, blame in ((sc.lemma_rows, "in 4 points: the library is wrong"),
                           (sc.weight_bound_rows, ": the experiment or the library is wrong")):
        assert rows_of(None, where, "no file")[0].verdict == sc.NOT_MEASURED
        assert rows_of(FakeResult({}, 4), where, "")[0].verdict == sc.INCONCLUSIVE
        held = rows_of(FakeResult({"violations": np.zeros(4, int)}, 4), where, "")[0]
        assert held.verdict == sc.IDENTITY and held.ours == 0
        assert held.why.startswith("0 violations in 4 points")
        broken = rows_of(FakeResult({"violations": np.array([0, 2, 1, 0])}, 4), where, "")[0]
        assert broken.verdict == sc.DIFFERS and broken.ours == 3
        assert broken.why == ("3 violation(s) " + blame).replace(" :", ":")
    tight = sc.weight_bound_rows(FakeResult({"violations": np.zeros(2, int),
                                             "ratio_max": np.array([0.25, 0.5])}, 2), where, "")[0]
    assert tight.why == "0 violations in 2 points; tightest trial δ/bound = 0.5"
