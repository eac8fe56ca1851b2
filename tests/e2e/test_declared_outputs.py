"""Declared outputs, end to end, for every experiment binary (docs/architecture.md#declared-outputs):
a tiny run passes the runner's check of its records; a record damaged by SHARP_INJECT_OUTPUT_FAULT
(an undeclared, a missing, a mistyped output) fails the point with exit 1 and an error naming the
experiment and the output; --help lists every declared output; --describe is JSON whose outputs
are exactly the names the result file holds.
ctest runs it with SHARP_BIN_DIR set; standalone: SHARP_BIN_DIR=build/bin /usr/bin/python3 <this>.
About 10 s (tiny grids, a tiny trained model).
"""
import json
import os
import re
import sys
import unittest

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ResultDirCase, run  # noqa: E402

TINY = {
    "bounds": ["--n", "4,8", "--trials", "1"],
    "weight-bound": ["--n", "4", "--d-model", "4", "--d-head", "2", "--trials", "3"],
    "entropy-temperature": ["--n", "16", "--beta-steps", "4"],
    "train-max": ["--width", "8", "--batch", "8", "--steps", "20", "--eval-every", "10", "--eval-samples", "16"],
    "eval-max": ["--n", "16", "--samples", "8", "--map-samples", "2", "--normaliser", "softmax,adaptive"],
    "fit-adaptive": ["--n-min", "16", "--n-max", "32", "--samples", "8", "--bins", "5"],
    "transformer-dispersion": ["--layers", "1", "--heads", "2", "--d-model", "8", "--vocab", "8", "--n", "8,16"],
    "train-text": ["--layers", "1", "--heads", "2", "--d-model", "8", "--batch", "2", "--steps", "4", "--warmup", "1",
                   "--eval-every", "2", "--eval-samples", "2", "--lengths", "4"],
    "eval-text": ["--length", "4", "--samples", "2", "--normaliser", "trained,adaptive"],
}
# The experiments that read a trained model, and the trainer that makes it.
NEEDS_MODEL = {"eval-max": "train-max", "fit-adaptive": "train-max", "eval-text": "train-text"}


class DeclaredOutputs(ResultDirCase):
    def test_every_experiment_has_a_tiny_grid_here(self):
        source = os.environ.get("SHARP_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
        names = sorted(f[:-4].replace("_", "-") for f in os.listdir(os.path.join(source, "experiments"))
                       if f.endswith(".cpp"))
        self.assertEqual(names, sorted(TINY), "add the new experiment to TINY (a grid of a second at most)")

    def args(self, exp):
        extra = []
        if exp in NEEDS_MODEL:
            trainer = NEEDS_MODEL[exp]
            model = self.path(f"model-{trainer}.h5")
            if not os.path.exists(model):
                run(f"sharp-{trainer}", *TINY[trainer], "--out", model, "--quiet", check=0)
            extra = ["--checkpoint", model]
        return [*TINY[exp], *extra]

    def test_every_experiment_refuses_damaged_records(self):
        for exp in TINY:
            for fault, needle in [("undeclared", "' (a metric) is not declared"), ("missing", "' is missing"),
                                  ("mistyped", "' is an integer metric")]:
                with self.subTest(experiment=exp, fault=fault):
                    out = self.path(f"{exp}-{fault}.h5")
                    p = run(f"sharp-{exp}", *self.args(exp), "--out", out, "--quiet",
                            env={"SHARP_INJECT_OUTPUT_FAULT": fault})
                    self.assertEqual(p.returncode, 1, p.stderr)
                    self.assertRegex(p.stderr, re.escape(f"experiment {exp}: output '") + r"[^']+" + re.escape(needle))
                    self.assertFalse(os.path.exists(out))

    def test_help_describe_and_the_file_agree_with_the_declarations(self):
        for exp in TINY:
            with self.subTest(experiment=exp):
                desc = json.loads(run(f"sharp-{exp}", "--describe", check=0).stdout)
                self.assertEqual(desc["experiment"], exp)
                help_text = run(f"sharp-{exp}", "--help", check=0).stdout
                for o in desc["outputs"]:
                    self.assertIn(o["name"], help_text)
                    self.assertTrue(o["meaning"])
                out = self.path(f"{exp}.h5")
                run(f"sharp-{exp}", *self.args(exp), "--out", out, "--quiet", check=0)
                declared = {o["kind"]: [] for o in desc["outputs"]}
                for o in desc["outputs"]:
                    declared[o["kind"]].append(re.compile(re.sub(r"<[a-z_]+>", "[^/]+", re.escape(o["name"])
                                                                 .replace(r"\<", "<").replace(r"\>", ">")) + "$"))
                with h5py.File(out, "r") as f:
                    columns = [k for k in f["points"] if k not in ("id", "params")]
                    arrays = list(f["arrays"].get(f["points/id"].asstr()[0], {}))
                for name, kind in [(c, "metric") for c in columns] + [(a, "array") for a in arrays]:
                    self.assertTrue(any(r.match(name) for r in declared.get(kind, [])), f"{exp}: {kind} {name}")

    def test_describe_is_refused_in_a_config_file(self):
        cfg = self.path("x.cfg")
        with open(cfg, "w") as fh:
            fh.write("describe = 1\n")
        p = run("sharp-bounds", "--config", cfg, "--out", self.path("x.h5"))
        self.assertEqual(p.returncode, 2, p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
