#!/usr/bin/python3
"""Core-hours of a sweep before submitting it, measured on a sample of its own points.

    runners/slurm/core-hours.py [--sample-shards N] [--threads T] -- sharp-<experiment> --config sweeps/cluster/X.cfg

Runs shard 0 of N of the sweep (the binary deals shards by estimated cost, so shard 0 holds about
1/N of the work in a mix of cheap and expensive points) with T threads into a temporary directory,
reads each finished point's /timing (wall seconds x threads = core-seconds), and scales by the
estimated costs the binary prints with --dry-run:

    core-hours = (sample core-seconds / sample estimated cost) x (total estimated cost) / 3600

Prints one Markdown table row: sweep | points | measured core-s/point (sample) | core-hours; and the
rate (core-seconds per unit of estimated cost) that runners/slurm/cost-rates.json keeps for
sharp-submit --array auto.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from point_costs import dry_run_costs, measured_core_seconds, measured_rate


def sample_core_seconds(command, shards, threads, scratch):
    """{point id: core-seconds} for the points of shard 0/shards, run here and now."""
    out = os.path.join(scratch, "sample.h5")
    subprocess.run([*command, "--shard", f"0/{shards}", "--threads", str(threads), "--out", out, "--quiet"],
                   check=True)
    return measured_core_seconds(out + ".parts")


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit(__doc__.strip())
    cut = argv.index("--")
    parser = argparse.ArgumentParser(prog="core-hours.py")
    parser.add_argument("--sample-shards", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    opts = parser.parse_args(argv[:cut])
    command = argv[cut + 1:]
    if "/" not in command[0]:
        command[0] = shutil.which(command[0]) or command[0]
    costs = dry_run_costs(subprocess.run([*command, "--dry-run"], capture_output=True, text=True, check=True).stdout)
    scratch = tempfile.mkdtemp(prefix="sharp-core-hours-")
    try:
        measured = sample_core_seconds(command, opts.sample_shards, opts.threads, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    rate = measured_rate(costs, measured)  # core-seconds per unit of estimated cost
    total_core_s = rate * sum(costs.values())
    name = os.path.basename(command[0])
    config = next((command[i + 1] for i, a in enumerate(command[:-1]) if a == "--config"), "")
    print(f"| {name} {config} | {len(costs)} | {sum(measured.values()) / len(measured):.3g} "
          f"(sample of {len(measured)}) | {total_core_s / 3600:.3g} |")
    print(f"rate: {rate:.3g} core-seconds per unit of estimated cost", file=sys.stderr)


if __name__ == "__main__":
    main()
