"""Issue 26 item 3: a model replaced under an evaluation. A point of sharp-eval-max (as of every binary
taking --checkpoint FILE#ID) records which weights it scored: `model_fingerprint`, SHA-256 of the
model's param.* arrays, a part attribute and a /points/params column. When the training file is
replaced by other weights under the same ids (retrained by another build, edited), a resumed
evaluation reruns the points scored on the old weights, and a finished one is not "up to date": both
say why, and the result equals a fresh evaluation of the new model."""
import os
import sys
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faults_support import ResultDirCase, run  # noqa: E402

sys.path.insert(0, os.path.join(os.environ.get("SHARP_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "../..")),
                                "python"))
from sharp.results import data_checksum  # noqa: E402

TRAIN = ["--width", "8", "--batch", "16", "--steps", "20", "--eval-samples", "32", "--seed", "1,2",
         "--threads", "1", "--quiet"]
EVAL = ["--n", "16,32", "--samples", "16", "--map-samples", "0", "--normaliser", "softmax", "--threads", "1",
        "--quiet"]
WHY = "model changed since this point was scored: rerunning"


def replace_weights(models, point_index):
    """Other weights for one model under the same id (as a retraining by another build gives), the
    file's checksum stamped again: a sound file of other values."""
    with h5py.File(models, "a") as f:
        point = f["points/id"].asstr()[point_index]
        group = f["arrays"][point]
        name = sorted(n for n in group if n.startswith("param."))[0]
        group[name][...] = (group[name][()] * 1.5 + 0.25).astype(np.float32)  # weights are float32 values
        f.attrs["checksum"] = data_checksum(f)


def fingerprints(path):
    with h5py.File(path, "r") as f:
        return list(f["points/params/model_fingerprint"].asstr()[()])


class ModelReplaced(ResultDirCase):
    def test_an_interrupted_evaluation_reruns_the_points_of_the_replaced_model(self):
        models, out, old = self.path("models.h5"), self.path("eval.h5"), self.path("old.h5")
        run("sharp-train-max", *TRAIN, "--out", models, check=0)
        run("sharp-eval-max", "--checkpoint", models, *EVAL, "--out", old, check=0)
        run("sharp-eval-max", "--checkpoint", models, *EVAL, "--out", out, "--shard", "0/1", check=0)
        parts = out + ".parts"
        with h5py.File(os.path.join(parts, sorted(os.listdir(parts))[0]), "r") as f:
            self.assertEqual(len(f.attrs["model_fingerprint"]), 64)

        replace_weights(models, 0)
        p = run("sharp-eval-max", "--checkpoint", models, *EVAL, "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr.count(WHY), 2, p.stderr)  # the replaced model's two points, not the other's
        fresh = self.path("fresh.h5")
        run("sharp-eval-max", "--checkpoint", models, *EVAL, "--out", fresh, check=0)
        self.assertSameData(fresh, out)
        self.assertNotEqual(fingerprints(old), fingerprints(out))
        self.assertTrue(any(d.startswith("points/") for d in self.differences(old, out)))

    def test_a_finished_evaluation_of_a_replaced_model_is_not_up_to_date(self):
        models, out = self.path("models.h5"), self.path("eval.h5")
        run("sharp-train-max", *TRAIN, "--out", models, check=0)
        run("sharp-eval-max", "--checkpoint", models, *EVAL, "--out", out, check=0)
        p = run("sharp-eval-max", "--checkpoint", models, *EVAL, "--out", out, check=0)
        self.assertNotIn(WHY, p.stderr)

        replace_weights(models, 1)
        p = run("sharp-eval-max", "--checkpoint", models, *EVAL, "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(WHY, p.stderr)
        self.assertNotIn("up to date", p.stdout)
        fresh = self.path("fresh.h5")
        run("sharp-eval-max", "--checkpoint", models, *EVAL, "--out", fresh, check=0)
        self.assertSameData(fresh, out)

    def differences(self, a, b):
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
        from h5compare import data_differences
        return data_differences(a, b)


if __name__ == "__main__":
    unittest.main(verbosity=2)
