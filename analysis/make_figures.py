"""Every figure and table whose input file exists in RESULTS_DIR (nothing is recomputed).

    /usr/bin/python3 analysis/make_figures.py RESULTS_DIR [--out DIR]     (make figures)

Prints one line per figure written (with its files) and one per figure skipped because its input
is missing. An input missing in RESULTS_DIR is taken from the shipped results
(results/published/<scale>/, checked against their manifest) when they have it.
Exit status: 0 when every present input was drawn (skips are fine), 1 when a present input was
refused (incomplete, unknown schema, wrong experiment, malformed, columns of the wrong type: one
line on stderr per figure, naming the file and the reason) or a figure failed (a bug of the
analysis: its traceback and "this figure failed: ... — please report it"); the other figures are
still drawn. The figures are analysis/products.py's registry: a new figure is one more Product in
its module's PRODUCTS.
"""
from __future__ import annotations

import argparse
import os
import sys


import common
import products
import published


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
    for product in products.PRODUCTS:
        name, input_file, make = product.name, product.input_file, product.make
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
