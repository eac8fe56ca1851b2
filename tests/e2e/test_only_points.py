"""--only NAME=VALUES and --only-out (runners/point_filter.hpp): a run of some points of a grid (a
pilot) writes only their part files under the whole grid's fingerprint and never merges --out; a
later run without --only resumes them (runs only the others) and merges the same data as one run of
the whole grid; --only-out merges the selected points into a result file of their own, which
sharp-eval-text reads as checkpoints (the text study's pilot); --status and --dry-run see only the selected points; bad selections are exit 2 with
nothing written. ctest runs it with SHARP_BIN_DIR set. About 5 s.
"""
import os
import sys
import unittest

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ResultDirCase, finished_parts, run  # noqa: E402

GRID = ["--n", "4,8", "--trials", "1", "--seed", "1,2,3", "--quiet"]


class OnlyPoints(ResultDirCase):
    def test_a_pilot_then_the_whole_grid_resumes_it(self):
        out, pilot, whole = self.path("r.h5"), self.path("pilot.h5"), self.path("whole.h5")
        p = run("sharp-bounds", *GRID, "--only", "seed=1", "--only-out", pilot, "--out", out, check=0)
        self.assertFalse(os.path.exists(out))                          # --out is never merged
        self.assertEqual(len(finished_parts(out + ".parts")), 2)      # seed 1 at n = 4, 8
        with h5py.File(pilot, "r") as f:
            self.assertEqual(list(f["points/params/seed"][()]), [1, 1])
            self.assertEqual(f.attrs["complete"], 1)
            pilot_ids = list(f["points/id"].asstr()[()])
        status = run("sharp-bounds", *GRID, "--only", "seed=1", "--status", "--out", out, check=0)
        self.assertIn("2 of 2 points complete", status.stdout)
        self.assertEqual(run("sharp-bounds", *GRID, "--status", "--out", out).returncode, 3)   # 2 of 6
        dry = run("sharp-bounds", *GRID, "--only", "seed=2,3", "--dry-run", "--out", out, check=0)
        self.assertEqual(len(dry.stdout.splitlines()) - 1, 4)
        # The whole grid runs only the four other points and merges what one run makes.
        p = run("sharp-bounds", *[a for a in GRID if a != "--quiet"], "--out", out, check=0)
        self.assertIn("4 run now, 2 resumed", p.stdout)
        run("sharp-bounds", *GRID, "--out", whole, check=0)
        self.assertSameData(out, whole)
        with h5py.File(out, "r") as f:
            self.assertEqual(list(f["points/id"].asstr()[()])[:2], pilot_ids)
        with h5py.File(pilot, "r") as a, h5py.File(whole, "r") as b:
            self.assertEqual(list(a["points/alpha_max"][()]), list(b["points/alpha_max"][()])[:2])

    def test_a_pilots_models_are_read_by_eval_text(self):
        # The text study's pilot: seed 1 of every arm, merged into its own file for the gate check.
        train = ["--layers", "1", "--heads", "2", "--d-model", "16", "--batch", "4", "--warmup", "1", "--steps", "3",
                 "--eval-every", "3", "--lengths", "4,5", "--eval-samples", "4", "--seed", "1,2",
                 "--normaliser", "softmax,adaptive", "--quiet"]
        pilot = self.path("train-text-pilot.h5")
        run("sharp-train-text", *train, "--only", "seed=1", "--only-out", pilot, "--out", self.path("train-text.h5"),
            check=0)
        ev = self.path("eval-text-pilot.h5")
        run("sharp-eval-text", "--checkpoint", pilot, "--length", "4,5", "--samples", "3", "--out", ev, "--quiet",
            check=0)
        with h5py.File(ev, "r") as f:
            self.assertEqual(len(f["points/id"]), 4)                  # 2 models x 2 lengths
            self.assertEqual(set(f["points/in_training_lengths"][()]), {1})

    def test_bad_selections_are_bad_input_with_nothing_written(self):
        for args, needle in [(["--only", "seed=4"], "seed takes 1, 2, 3"),
                             (["--only", "bogus=1"], "not a parameter"),
                             (["--only", "seed"], "NAME=VALUES"),
                             (["--only-out", self.path("p.h5")], "needs --only"),
                             (["--only", "seed=1", "--shard", "0/2"], "excludes --shard"),
                             (["--only", "seed=1", "--only-out", self.path("x.h5")], "--out itself")]:
            with self.subTest(args=args):
                p = run("sharp-bounds", *GRID, *args, "--out", self.path("x.h5"))
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(needle, p.stderr)
                self.assertEqual(os.listdir(self.dir), [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
