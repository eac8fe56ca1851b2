"""What the paper page shows, in the order of docs/science.md: one table mapping each section to the
result files it reads, the figures drawn from them (results/figures/<png>.png, made by
analysis/make_figures.py) with the caption that says what to see, and its tables.

A new experiment is one more Section here (file names are the results directory's file names);
a figure not listed here still appears on the page, under "Other figures".
"""
from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Figure:
    png: str       # file name in the figures directory, without ".png"
    source: str    # the result file it is drawn from
    title: str
    caption: str   # what to see in it (plain text)


@dataclasses.dataclass(frozen=True)
class Section:
    key: str       # HTML id
    title: str
    anchor: str    # heading of docs/science.md
    files: tuple   # result files the section reads
    intro: str
    figures: tuple = ()
    tables: tuple = ()  # names of table builders in analysis/report.py (TABLE_BUILDERS)
    # Files read when present and silent when absent (no "not run" notice): a study's pilot, which
    # only a run of the study at its own scale makes.
    optional: tuple = ()


SECTIONS = (
    Section(
        "dispersion", "The dispersion lemma", "dispersion-lemma", ("bounds.h5",),
        "With every logit in [m, M] (spread δ = M − m) each softmax coefficient lies between "
        "exp(−δ/θ)/n and exp(δ/θ)/n, so at fixed δ and θ the largest coefficient must vanish as n "
        "grows. Four logit laws are streamed in chunks (memory does not grow with n).",
        figures=(Figure(
            "dispersion", "bounds.h5", "Largest attention coefficient against n",
            "Left: α_max of every logit law against n, with the lemma's bound exp(δ/θ)/n "
            "(dashed) and the worst case, one logit at M and the rest at m (thin line). Right: "
            "n·α_max against the ceiling e^(δ/θ). The lemma allows no marker above its dashed "
            "line; the table's violations column counts any that is."),),
        tables=("dispersion_thresholds",)),
    Section(
        "weight-bound", "Sharpness needs large weights", "weight-norm-bound", ("weight-bound.h5",),
        "For logits e_i = (Qy)ᵀ(Kx_i) the spread obeys δ ≤ 2·σmax(Q)·σmax(K)·‖y‖·max‖x_i‖: a "
        "sharp head needs large weights or inputs. Random Q, K, y, x_i test how tight it is.",
        figures=(Figure(
            "weight_bound", "weight-bound.h5", "Tightness of the weight-norm bound",
            "Left: the ratio δ/bound of every trial, per d_model; the bound allows at most 1, "
            "and how far below 1 the trials stay measures how loose it is for random weights. "
            "Right: the mean ratio per point against n."),)),
    Section(
        "entropy", "Entropy falls as β rises", "entropy-falls-with-beta",
        ("entropy-temperature.h5",),
        "H(softmax(β·e)) has derivative −β·Var_p(e) < 0: sharpening by temperature always "
        "lowers the entropy, which is what adaptive temperature relies on.",
        figures=(Figure(
            "entropy_temperature", "entropy-temperature.h5", "Entropy against inverse temperature",
            "Left: H against β for every row, from ln n at β → 0; the result says every curve "
            "falls. Right: the closed-form slope (lines) and the finite difference (markers); "
            "the title gives their largest relative difference over every point."),)),
    Section(
        "max-retrieval", "The trained max-retrieval head", "max-retrieval",
        ("train-max.h5", "eval-max.h5"),
        "One attention head trained on sets of 16 items to return the class of the "
        "highest-priority item, then tested on larger sets with softmax and with "
        "adaptive temperature applied at inference to the same weights, on the same sets. Parts "
        "of the protocol the paper does not state are reconstructed "
        "(docs/science.md#max-retrieval-reconstructed).",
        figures=(
            Figure("attention_maps", "eval-max.h5", "Attention maps",
                   "Each panel: the head's weights on the 16 highest-priority items of 32 sets "
                   "(rows), highest first. Compare across n how much weight the first column "
                   "(the maximum) keeps, and at one n softmax's rows with adaptive's; adaptive "
                   "temperature can only sharpen a row whose entropy is below 5.94 nats "
                   "(β > 1 there)."),
            Figure("max_accuracy", "eval-max.h5", "Accuracy against n",
                   "Accuracy of softmax and adaptive temperature, mean over trained models with a "
                   "95% interval, beside the paper's published points and another public "
                   "reproduction; chance is 10%. The gap between the two curves is adaptive "
                   "temperature's gain; by its rule it leaves every row whose entropy is above "
                   "5.94 nats unchanged (β = 1 there)."),
            Figure("head_entropy", "eval-max.h5", "Entropy of the trained head against n",
                   "Left: the head's attention entropy against n, beside ln n (uniform "
                   "attention, dashed). Right: the weight on the true maximum against n, beside "
                   "1/n (dashed)."),
        ),
        tables=("max_accuracy",)),
    Section(
        "beta-refit", "Refitting the entropy → β polynomial", "refitting-the-polynomial",
        ("fit-adaptive.h5",),
        "The paper fitted β(H) on max-retrieval data without saying how; the suite reconstructs "
        "it: per evaluation set the β* in [1, 20] that maximises the probability of the correct "
        "class, then a degree-4 least-squares fit (and a binned variant).",
        figures=(Figure(
            "beta_polynomial", "fit-adaptive.h5", "Entropy → β: data, our refit, the paper's curve",
            "Dots: per-set (H, β*), coloured by n. Black: our fit per model; red: the binned fit. "
            "Orange: the paper's polynomial as applied (solid) and bare (dotted). Compare where "
            "the curves rise above β = 1 and where they peak; the legend's numbers say which "
            "rule gives the model the highest mean log-probability of the right class."),)),
    Section(
        "transformers", "Transformers disperse", "transformers-disperse",
        ("transformer-dispersion.h5", "transformer-dispersion-boundary.h5",
         "transformer-dispersion-trained.h5"),
        "Over a finite vocabulary with bounded positions every global head's logits stay bounded, "
        "so every head disperses as n grows; random and trained transformers are measured per "
        "head, with positional schemes that break the hypothesis as negative controls. The "
        "trained ones are the algorithmic-text models reading prompts of their own task, grown "
        "past the training lengths. The spreads stand in for the paper's Gemma measurements "
        "(docs/science.md#logit-spread-in-llms).",
        figures=(
            Figure("transformer_alpha", "transformer-dispersion.h5", "Largest coefficient per head against n",
                   "Each panel one random model; lines: α_max of the last row of every head, dotted: "
                   "its bound min(1, e^(β·sup δ)/n), dashed: 1/n. Compare each head's slope with "
                   "1/n's; the titles name the positional scheme, and the table below gives the "
                   "theorem check's verdict per model."),
            Figure("transformer_entropy", "transformer-dispersion.h5", "Head entropy against n",
                   "Mean row entropy of every head against n beside uniform attention's ln(n!)/n "
                   "(dashed) and ln n (dotted), one panel per model. Adaptive temperature leaves "
                   "a row with H > 5.94 unchanged (β = 1 there)."),
            Figure("transformer_entropy_trained", "transformer-dispersion-trained.h5",
                   "Head entropy of trained text models against prompt length",
                   "Top: entropy at the answer position (the prompt's last row) against the prompt "
                   "length, bottom: mean entropy over every row; mean over heads, shaded from the "
                   "lowest to the highest head. Left: random models on uniform tokens (NoPE; ALiBi, "
                   "the negative control); then each trained task, one colour per trained-in "
                   "normaliser, grey where the prompts are of training lengths, beside ln n (dotted) "
                   "and ln(n!)/n (dashed). Compare each curve's climb past the training lengths with "
                   "the baselines'; a head whose logit spread δ is large (e^δ far above n) can stay "
                   "sharp at every n measured. Adaptive temperature leaves a row with H > 5.94 "
                   "unchanged (β = 1 there)."),
            Figure("transformer_logit_spread", "transformer-dispersion.h5", "Logit spread across heads",
                   "δ per head (its largest row spread) at the largest n: range and mean ± std over "
                   "heads per model, beside the paper's Gemma 2B/7B rows; blue rows are the trained "
                   "text models on prompts of their task (seeds pooled), red rows the negative "
                   "controls. Where random models land depends on their init scale (the rows "
                   "name it)."),
        ),
        tables=("transformer_theorem",)),
    Section(
        "algorithmic-text", "Algorithmic text", "algorithmic-text",
        ("train-text.h5", "eval-text.h5"),
        "Small transformers trained from scratch on algorithm traces written in the CLRS-Text "
        "format (generated here, not the released data), each remedy trained into every head, "
        "tested at unseen lengths: the offline analogue of the paper's Gemma fine-tuning.",
        figures=(Figure(
            "text_accuracy", "eval-text.h5", "Exact match against length, per algorithm",
            "One panel per algorithm, one solid curve per normaliser trained into every head, dashed "
            "where a normaliser was applied at inference only; shaded: 95% t-interval across seeds "
            "(one seed: Wilson interval of its samples); grey ticks: training lengths (beyond 16: "
            "extrapolation)."),),
        tables=("text_paired",)),
    Section(
        "text-study", "The text study", "the-text-study-pre-registered",
        ("train-text.h5", "eval-text.h5"),
        "Does adaptive temperature, trained into every head, help beyond the training lengths? A "
        "pre-registered study on minimum (trained on lengths 4-16, RoPE): softmax against adaptive "
        "trained in, SSMax with learned s, ASEntmax per query and adaptive at inference only, three "
        "seeds each, judged only on models that pass the competence gate, at lengths 24 and 32 on the "
        "answers whose index lies below 16. The primary lengths are read from eval-text-primary.h5 "
        "beside eval-text.h5 when it is there.",
        figures=(
            Figure("text_study_curves_pilot", "train-text-pilot.h5", "The pilot's learning curves",
                   "Seed 1 of every arm (the pilot, before the other seeds are trained): exact match on "
                   "the fixed evaluation set at the training lengths and the losses against the step; "
                   "dotted, the gate's 95% (judged on the greedy evaluation, not on this curve)."),
            Figure("text_study_curves", "train-text.h5", "Learning curves",
                   "Every model's training curve, one colour per arm, seed 1 (the pilot) thick: exact "
                   "match on the fixed evaluation set at the training lengths (left) and training "
                   "(solid) and evaluation (dashed) loss (right) against the step; dotted, the gate's "
                   "95%. Compare where each arm levels off with the gate."),
            Figure("text_study_accuracy", "eval-text.h5", "Exact match against length, every sample",
                   "Mean over seeds with a 95% interval, per arm, beside chance 1/L (dotted); grey "
                   "lines mark the training lengths. Beyond 16 part of each curve's fall is output "
                   "extrapolation (answers naming an index the models never wrote), which the primary "
                   "endpoint removes."),
            Figure("text_study_entropy", "eval-text.h5", "The answer rows' heads",
                   "Attention entropy of the rows that write the answer after (solid) and before "
                   "(dashed) the normaliser's β, beside uniform attention's ln k, and their logit "
                   "spread δ, per arm against length: learned sharpness (low entropy before β) told "
                   "apart from the multiplier's."),
        ),
        tables=("text_study_pilot", "text_study"),
        optional=("train-text-pilot.h5", "eval-text-pilot.h5")),
    Section(
        "remedies", "Every remedy on one protocol", "remedies", ("eval-remedies.h5",),
        "Remedies (of temperature, log-n scaling, top-k, sparsemax, entmax, ASEntmax, Stieltjes, "
        "adaptive temperature: those the file holds) trained into the max-retrieval head at "
        "n = 16 and tested at larger n on the same sets.",
        figures=(Figure(
            "remedies", "eval-remedies.h5", "Every remedy trained in, against n",
            "Left: accuracy of each remedy, mean over seeds with a 95% interval, beside the "
            "paper's softmax and adaptive points and the best public number at 16384. Middle: "
            "accuracy (solid), ranking rate (dashed) and oracle rate (dotted) per remedy. Right: "
            "accuracy as a fraction of the ranking rate: how much of the ceiling a remedy "
            "reaches."),),
        tables=("remedies", "remedies_leaderboard")),
)
