"""ASEntmax learned per query (docs/science.md#asentmax) end to end: sharp-train-text trains
asentmax_query:b=learn:gamma=learn bit-identically with one and two threads, the model file holds
c [heads] and w [heads, d_model] per layer and parameter (moved off their start), sharp-eval-text
evaluates it with `trained` (the same data with one and two threads) and refuses another normaliser
for it, sharp-transformer-dispersion measures it through --checkpoint, and sharp-train-max refuses a
per-query spec in one line with exit 2.
ctest runs it with SHARP_BIN_DIR set; standalone: SHARP_BIN_DIR=build/bin /usr/bin/python3 <this>.
"""
import os
import sys
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ResultDirCase, run  # noqa: E402

SPEC = "asentmax_query:b=learn:gamma=learn"
TINY = ["--layers", "2", "--heads", "2", "--d-model", "16", "--batch", "8", "--warmup", "2", "--lr", "3e-3",
        "--lengths", "4,5", "--eval-samples", "8", "--steps", "60", "--eval-every", "30", "--positional", "rope",
        "--normaliser", SPEC, "--quiet"]


class AsentmaxQueryText(ResultDirCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.model = cls.class_path("model.h5")
        run("sharp-train-text", *TINY, "--threads", "1", "--out", cls.model, check=0)

    def test_training_is_bit_identical_for_two_threads_and_stores_c_and_w(self):
        other = self.path("model2.h5")
        run("sharp-train-text", *TINY, "--threads", "2", "--out", other, check=0)
        self.assertSameData(self.model, other)
        with h5py.File(self.model, "r") as f:
            self.assertEqual(f["points/params/normaliser"].asstr()[0], SPEC)
            arrays = f["arrays"][f["points/id"].asstr()[0]]
            for layer in (0, 1):
                for p in ("b", "gamma"):
                    c = arrays[f"param.layers.{layer}.norm.{p}"][()]
                    w = arrays[f"param.layers.{layer}.norm.{p}.weight"][()]
                    self.assertEqual(c.shape, (2,))
                    self.assertEqual(w.shape, (2, 16))
                    self.assertTrue(np.all(c != 0.0), f"c of {p} did not move: {c}")   # start: c = 0
                    self.assertTrue(np.all(w != 0.0), f"w of {p} did not move")        # start: w = 0

    def test_evaluated_with_trained_and_measured_by_dispersion(self):
        a, b = self.path("e1.h5"), self.path("e2.h5")
        grid = ["--checkpoint", self.model, "--length", "4,8", "--samples", "16", "--quiet"]
        run("sharp-eval-text", *grid, "--threads", "1", "--out", a, check=0)
        run("sharp-eval-text", *grid, "--threads", "2", "--out", b, check=0)
        self.assertSameData(a, b)
        with h5py.File(a, "r") as f:
            exact = f["points/exact_final.trained"][()]
            entropy = f["points/answer_entropy.trained"][()]
            uniform = f["points/answer_entropy_uniform.trained"][()]
        self.assertTrue(np.all((exact >= 0) & (exact <= 1)))
        self.assertTrue(np.all((entropy >= 0) & (entropy <= uniform)))
        p = run("sharp-eval-text", "--checkpoint", self.model, "--length", "4", "--samples", "2",
                "--normaliser", "asentmax:b=1:gamma=1", "--out", self.path("x.h5"), "--quiet")
        self.assertEqual(p.returncode, 2, p.stderr)   # refused before any work (issue 26 item 8)
        self.assertIn("learned scalars", p.stderr)

        out = self.path("dispersion.h5")
        run("sharp-transformer-dispersion", "--checkpoint", self.model, "--n", "16,64", "--out", out, "--quiet",
            check=0)
        with h5py.File(out, "r") as f:
            ids = f["points/id"].asstr()[()]
            self.assertEqual(len(ids), 2)
            for i in ids:
                delta = f["arrays"][i]["delta_max"][()]
                self.assertEqual(delta.shape, (2, 2))   # [layer, head]
                self.assertTrue(np.all(np.isfinite(delta) & (delta > 0)))

    def test_the_max_retrieval_trainer_refuses_a_per_query_spec(self):
        p = run("sharp-train-max", "--normaliser", SPEC, "--out", self.path("m.h5"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("learned per query", p.stderr)
        self.assertFalse(os.path.exists(self.path("m.h5")))


if __name__ == "__main__":
    unittest.main(verbosity=2)
