#!/usr/bin/python3
"""Core-hours of a sweep before submitting it, measured on a sample of its own points.

    runners/slurm/core-hours.py [--sample-shards N] [--threads T] -- sharp-<experiment> --config sweeps/paper/X.cfg

Runs shard 0 of N of the sweep (the binary deals shards by estimated cost, so shard 0 holds about
1/N of the work in a mix of cheap and expensive points) with T threads into a temporary directory,
reads each finished point's /timing (wall seconds x threads = core-seconds), and scales by the
estimated costs the binary prints with --dry-run:

    core-hours = (sample core-seconds / sample estimated cost) x (total estimated cost) / 3600

Prints one Markdown table row: sweep | points | measured core-s/point (sample) | core-hours.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import h5py


def dry_run_costs(command):
    """{point id: estimated cost} from the binary's --dry-run listing."""
    p = subprocess.run([*command, "--dry-run"], capture_output=True, text=True, check=True)
    costs = {}
    for line in p.stdout.splitlines()[1:]:
        m = re.match(r"\s*\d+\s+([0-9a-f]{16})\s+cost\s+(\S+)", line)
        if m:
            costs[m.group(1)] = float(m.group(2))
    return costs


def sample_core_seconds(command, shards, threads, scratch):
    """{point id: core-seconds} for the points of shard 0/shards, run here and now."""
    out = os.path.join(scratch, "sample.h5")
    subprocess.run([*command, "--shard", f"0/{shards}", "--threads", str(threads), "--out", out, "--quiet"],
                   check=True)
    seconds = {}
    parts = out + ".parts"
    for name in os.listdir(parts):
        if not re.fullmatch(r"[0-9a-f]{16}\.h5", name):
            continue
        with h5py.File(os.path.join(parts, name), "r") as f:
            if int(f.attrs.get("complete", 0)) != 1:
                continue
            seconds[name[:16]] = float(f["timing/wall_seconds"][()]) * int(f["timing/threads"][()])
    return seconds


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
    costs = dry_run_costs(command)
    scratch = tempfile.mkdtemp(prefix="sharp-core-hours-")
    try:
        measured = sample_core_seconds(command, opts.sample_shards, opts.threads, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    sample_cost = sum(costs[i] for i in measured)
    rate = sum(measured.values()) / sample_cost  # core-seconds per unit of estimated cost
    total_core_s = rate * sum(costs.values())
    name = os.path.basename(command[0])
    config = next((command[i + 1] for i, a in enumerate(command[:-1]) if a == "--config"), "")
    print(f"| {name} {config} | {len(costs)} | {sum(measured.values()) / len(measured):.3g} "
          f"(sample of {len(measured)}) | {total_core_s / 3600:.3g} |")


if __name__ == "__main__":
    main()
