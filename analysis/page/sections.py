"""What the paper page shows, in the order of docs/science.md: one table mapping each section to the
result files it reads, where its figures go (results/figures/<png>.png, by the PNG name; the module
that draws one declares its title, caption and result file: analysis/products.py) and its tables.

A new experiment is one more Section here (file names are the results directory's file names);
a figure not placed here still appears on the page, under "Other figures".
"""
from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Section:
    key: str       # HTML id
    title: str
    anchor: str    # heading of docs/science.md
    files: tuple   # result files the section reads
    intro: str
    figures: tuple = ()  # PNG names of page figures (analysis/products.py), in the page's order
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
        figures=("dispersion",),
        tables=("dispersion_thresholds",)),
    Section(
        "weight-bound", "Sharpness needs large weights", "weight-norm-bound", ("weight-bound.h5",),
        "For logits e_i = (Qy)ᵀ(Kx_i) the spread obeys δ ≤ 2·σmax(Q)·σmax(K)·‖y‖·max‖x_i‖: a "
        "sharp head needs large weights or inputs. Random Q, K, y, x_i test how tight it is.",
        figures=("weight_bound",)),
    Section(
        "entropy", "Entropy falls as β rises", "entropy-falls-with-beta",
        ("entropy-temperature.h5",),
        "H(softmax(β·e)) has derivative −β·Var_p(e) < 0: sharpening by temperature always "
        "lowers the entropy, which is what adaptive temperature relies on.",
        figures=("entropy_temperature",)),
    Section(
        "max-retrieval", "The trained max-retrieval head", "max-retrieval",
        ("train-max.h5", "eval-max.h5"),
        "One attention head trained on sets of 16 items to return the class of the "
        "highest-priority item, then tested on larger sets with softmax and with "
        "adaptive temperature applied at inference to the same weights, on the same sets. Parts "
        "of the protocol the paper does not state are reconstructed "
        "(docs/science.md#max-retrieval-reconstructed).",
        figures=(
            "attention_maps",
            "max_accuracy",
            "head_entropy",
        ),
        tables=("max_accuracy",)),
    Section(
        "beta-refit", "Refitting the entropy → β polynomial", "refitting-the-polynomial",
        ("fit-adaptive.h5",),
        "The paper fitted β(H) on max-retrieval data without saying how; the suite reconstructs "
        "it: per evaluation set the β* in [1, 20] that maximises the probability of the correct "
        "class, then a degree-4 least-squares fit (and a binned variant).",
        figures=("beta_polynomial",)),
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
            "transformer_alpha",
            "transformer_entropy",
            "transformer_entropy_trained",
            "transformer_logit_spread",
        ),
        tables=("transformer_theorem",)),
    Section(
        "algorithmic-text", "Algorithmic text", "algorithmic-text",
        ("train-text.h5", "eval-text.h5"),
        "Small transformers trained from scratch on algorithm traces written in the CLRS-Text "
        "format (generated here, not the released data), each remedy trained into every head, "
        "tested at unseen lengths: the offline analogue of the paper's Gemma fine-tuning.",
        figures=("text_accuracy",),
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
            "text_study_curves_pilot",
            "text_study_curves",
            "text_study_accuracy",
            "text_study_entropy",
        ),
        tables=("text_study_pilot", "text_study"),
        optional=("train-text-pilot.h5", "eval-text-pilot.h5")),
    Section(
        "remedies", "Every remedy on one protocol", "remedies", ("eval-remedies.h5",),
        "Remedies (of temperature, log-n scaling, top-k, sparsemax, entmax, ASEntmax, Stieltjes, "
        "adaptive temperature: those the file holds) trained into the max-retrieval head at "
        "n = 16 and tested at larger n on the same sets.",
        figures=("remedies",),
        tables=("remedies", "remedies_leaderboard")),
)
