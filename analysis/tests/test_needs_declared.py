"""Every name a figure or table module needs of a result file (its common.Needs) is one the
experiment's binary declares (`sharp-<experiment> --describe`): a parameter, a metric or an array.
A misspelt or renamed output fails here, not on a paper-scale file an hour into `make paper`.

Needs the built binaries (build/bin, or SHARP_BIN_DIR); skipped, saying so, without them. A planted
misspelt name must be reported, so the check cannot pass by not looking.
"""
from __future__ import annotations

import importlib
import json
import os
import pkgutil
import re
import subprocess

import pytest

import common

ANALYSIS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN_DIR = os.environ.get("SHARP_BIN_DIR", os.path.join(os.path.dirname(ANALYSIS_DIR), "build", "bin"))


def declared(experiment: str) -> dict:
    """{"params": names, "metric": names, "array": names} the binary declares (names may hold a
    placeholder such as `accuracy.<normaliser>`)."""
    binary = os.path.join(BIN_DIR, f"sharp-{experiment}")
    if not os.access(binary, os.X_OK):
        pytest.skip(f"{binary} is not built (make build, or set SHARP_BIN_DIR); the declared names come from its --describe")
    d = json.loads(subprocess.run([binary, "--describe"], capture_output=True, text=True, check=True,
                                  timeout=60).stdout)
    out = {"params": {p["name"] for p in d["parameters"]}, "metric": set(), "array": set()}
    for o in d["outputs"]:
        out[o["kind"]].add(o["name"])
    return out


def is_declared(name: str, names: set) -> bool:
    """`name` is one of `names`, a placeholder `<...>` standing for one dot-free word."""
    return any(name == n or re.fullmatch(re.sub(r"<[^>]+>", "[^.]+", re.escape(n).replace(r"\<", "<")
                                                .replace(r"\>", ">")), name) for n in names)


def undeclared(needs: common.Needs) -> list:
    have = declared(needs.experiment)
    return ([f"parameter {p}" for p in needs.params if p not in have["params"]]
            + [f"metric {m}" for m in needs.metrics if not is_declared(m, have["metric"])]
            + [f"array {a}" for a in needs.arrays if not is_declared(a, have["array"])])


def all_needs() -> list:
    """(module.NAME, Needs) of every analysis module."""
    found = []
    for info in pkgutil.iter_modules([ANALYSIS_DIR]):
        module = importlib.import_module(info.name)
        found += [(f"{info.name}.{k}", v) for k, v in vars(module).items() if isinstance(v, common.Needs)]
    return sorted(found, key=lambda x: x[0])


NEEDS = all_needs()


def test_the_modules_declare_needs():
    # the figure modules that read named outputs: more than a dozen declarations
    assert len(NEEDS) >= 12, [n for n, _ in NEEDS]


@pytest.mark.parametrize("name,needs", NEEDS, ids=[n for n, _ in NEEDS])
def test_needs_are_declared_by_the_binary(name, needs):
    assert undeclared(needs) == [], f"{name} needs what sharp-{needs.experiment} does not declare"


def test_a_misspelt_name_is_reported():
    planted = common.Needs("bounds", params=("n", "spred"), metrics=("alpha_max", "alpha_maxx"), arrays=("beta",))
    assert undeclared(planted) == ["parameter spred", "metric alpha_maxx", "array beta"]


def test_a_placeholder_stands_for_one_word():
    assert is_declared("accuracy.softmax", {"accuracy.<normaliser>"})
    assert not is_declared("accuracy.soft.max", {"accuracy.<normaliser>"})
    assert not is_declared("accuracy", {"accuracy.<normaliser>"})
