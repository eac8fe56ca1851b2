"""What a sweep's points cost, for sharp-submit --array auto and core-hours.py.

Estimated: the binary's own estimate, one relative number per point printed by --dry-run (the unit
differs between experiments: elements, multiply-adds, ...). Measured: a finished point file's
/timing (wall seconds x threads = core-seconds). A rate -- core-seconds per unit of estimated cost --
turns estimates into time: measured on this run's finished points when there are any, else the
experiment's reference rate in cost-rates.json (from the README's cost table).
"""
import json
import os
import re

RATES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cost-rates.json")
_LISTING = re.compile(r"\s*\d+\s+([0-9a-f]{16})\s+cost\s+(\S+)")
_PART = re.compile(r"[0-9a-f]{16}\.h5")


def dry_run_costs(listing):
    """{point id: estimated cost} from a binary's --dry-run output (after its one summary line)."""
    costs = {}
    for line in listing.splitlines()[1:]:
        m = _LISTING.match(line)
        if m:
            costs[m.group(1)] = float(m.group(2))
    return costs


def measured_core_seconds(parts_dir):
    """{point id: core-seconds} of the finished point files in parts_dir (none when it is absent)."""
    if not os.path.isdir(parts_dir):
        return {}
    import h5py  # only here: sharp-submit needs it only to measure
    seconds = {}
    for name in os.listdir(parts_dir):
        if not _PART.fullmatch(name):
            continue
        try:
            with h5py.File(os.path.join(parts_dir, name), "r") as f:
                if int(f.attrs.get("complete", 0)) != 1:
                    continue
                seconds[name[:16]] = float(f["timing/wall_seconds"][()]) * int(f["timing/threads"][()])
        except (OSError, KeyError, ValueError, TypeError):
            continue  # damaged or foreign: the binary reports it when it runs; no measurement here
    return seconds


def measured_rate(costs, seconds):
    """Core-seconds per unit of estimated cost of the measured points `seconds` ({id: core-seconds},
    each a point of `costs`); None when there are none."""
    cost = sum(costs[i] for i in seconds)
    return sum(seconds.values()) / cost if seconds and cost > 0 else None


def reference_rate(experiment):
    """(core-seconds per unit of estimated cost, where it was measured) for sharp-<experiment> from
    cost-rates.json; None when the file has no entry for it."""
    try:
        with open(RATES_FILE) as f:
            entry = json.load(f)["rates"][experiment]
        return float(entry["core_seconds_per_cost"]), entry["measured"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
