"""Every figure and table whose input file exists in RESULTS_DIR (nothing is recomputed).

    /usr/bin/python3 analysis/make_figures.py RESULTS_DIR [--out DIR]     (make figures)

Prints one line per figure written (with its files) and one per figure skipped because its input
is missing. An input missing in RESULTS_DIR is taken from the shipped results
(results/published/<scale>/, checked against their manifest) when they have it.
Exit status: 0 when every present input was drawn (skips are fine), 1 when a present input was
refused (incomplete, unknown schema, wrong experiment, malformed, columns of the wrong type: one
line on stderr per figure, naming the file and the reason) or a figure failed (a bug of the
analysis: its traceback and "this figure failed: ... — please report it"); the other figures are
still drawn. A new figure is one more line in FIGURES.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # works from any cwd

import common  # noqa: E402
import fig_attention_maps  # noqa: E402
import fig_beta_polynomial  # noqa: E402
import fig_dispersion  # noqa: E402
import fig_entropy_temperature  # noqa: E402
import fig_text_accuracy  # noqa: E402
import fig_head_entropy  # noqa: E402
import fig_max_accuracy  # noqa: E402
import fig_remedies  # noqa: E402
import fig_transformer_alpha  # noqa: E402
import fig_transformer_entropy  # noqa: E402
import fig_transformer_logit_spread  # noqa: E402
import fig_transformer_trained  # noqa: E402
import fig_weight_bound  # noqa: E402
import max_accuracy_table  # noqa: E402
import published  # noqa: E402
import remedies_table  # noqa: E402
import text_paired_table  # noqa: E402
import text_study  # noqa: E402
import transformer_theorem  # noqa: E402

# (figure name, input file in RESULTS_DIR, make(path, outdir) -> list of paths written)
FIGURES = [
    ("dispersion", fig_dispersion.INPUT_FILE, fig_dispersion.make),
    ("weight_bound", fig_weight_bound.INPUT_FILE, fig_weight_bound.make),
    ("entropy_temperature", fig_entropy_temperature.INPUT_FILE, fig_entropy_temperature.make),
    ("attention_maps", fig_attention_maps.INPUT_FILE, fig_attention_maps.make),
    ("max_accuracy", fig_max_accuracy.INPUT_FILE, fig_max_accuracy.make),
    ("max_accuracy_table", max_accuracy_table.INPUT_FILE, max_accuracy_table.make),
    ("head_entropy", fig_head_entropy.INPUT_FILE, fig_head_entropy.make),
    ("remedies", fig_remedies.INPUT_FILE, fig_remedies.make),
    ("remedies_leaderboard", remedies_table.INPUT_FILE, remedies_table.make),
    ("beta_polynomial", fig_beta_polynomial.INPUT_FILE, fig_beta_polynomial.make),
    ("transformer_alpha", fig_transformer_alpha.INPUT_FILE, fig_transformer_alpha.make),
    ("transformer_entropy", fig_transformer_entropy.INPUT_FILE, fig_transformer_entropy.make),
    ("transformer_logit_spread", fig_transformer_logit_spread.INPUT_FILE, fig_transformer_logit_spread.make),
    ("transformer_theorem", transformer_theorem.INPUT_FILE, transformer_theorem.make),
    ("transformer_entropy_trained", fig_transformer_trained.INPUT_FILE, fig_transformer_trained.make),
    ("text_accuracy", fig_text_accuracy.INPUT_FILE, fig_text_accuracy.make),
    ("text_paired", text_paired_table.INPUT_FILE, text_paired_table.make),
    ("text_study", text_study.INPUT_FILE, text_study.make),
]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results_dir", metavar="RESULTS_DIR",
                        help="directory holding the merged result files (*.h5)")
    parser.add_argument("--out", help="output directory (default: RESULTS_DIR/figures)")
    parser.add_argument("--published", default=None,
                        help="shipped results to fall back to for an input missing in RESULTS_DIR "
                             "(default: results/published of this repository)")
    args = parser.parse_args(argv)
    outdir = args.out or os.path.join(args.results_dir, "figures")

    refused = failed = 0
    for name, input_file, make in FIGURES:
        try:
            path, label = published.resolve(args.results_dir, input_file, args.published)
        except published.ManifestError as err:
            print(f"error: {name}: {err}", file=sys.stderr)
            refused += 1
            continue
        if path is None:
            print(f"skipped {name}: {os.path.join(args.results_dir, input_file)} not found")
            continue
        if label:
            print(f"{name}: {args.results_dir} has no {input_file}, drawn from {path} ({label})")
        written, problem = common.attempt(lambda: make(path, outdir), "figure")
        if problem is not None:
            # a refusal's reason names the file; a failure's does not, so name it here
            where = "" if problem.kind == "refused" else f"{path}: "
            print(f"error: {name}: {where}{problem.text}", file=sys.stderr)
            refused += problem.kind == "refused"
            failed += problem.kind == "failed"
            continue
        print(f"wrote {name}: {', '.join(written)}")
    if refused or failed:
        print(f"make_figures: {refused} figure(s) refused their input file, {failed} failed; see "
              f"above", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
