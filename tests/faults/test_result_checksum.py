"""Issue 26 item 4: a merged result file carries a checksum of its data (root attribute `checksum`),
and what reads it verifies it. One flipped byte in a trained model's weights is refused as input
(exit 2, naming the file and the reason) instead of being evaluated; a rerun of the command that made
the file does not call it "up to date" but refuses it with what to do; --overwrite regenerates it."""
import os
import sys
import unittest

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faults_support import ResultDirCase, run  # noqa: E402

TRAIN = ["--width", "8", "--batch", "16", "--steps", "20", "--eval-samples", "32", "--threads", "1", "--quiet"]
EVAL = ["--n", "16", "--samples", "8", "--map-samples", "0", "--normaliser", "softmax", "--threads", "1", "--quiet"]
MISMATCH = "checksum mismatch: the file was modified or damaged after it was written"


def flip_a_weight_byte(path):
    """Flips an exponent bit of the first weight of the first point, in the file's bytes."""
    with h5py.File(path, "r") as f:
        group = f["arrays"][next(iter(f["arrays"]))]
        name = next(n for n in group if n.startswith("param.") and group[n].id.get_offset() is not None)
        offset = group[name].id.get_offset()
    with open(path, "r+b") as fh:
        fh.seek(offset + 6)
        b = fh.read(1)[0]
        fh.seek(offset + 6)
        fh.write(bytes([b ^ 0x40]))


class MergedChecksum(ResultDirCase):
    def test_a_damaged_model_file_is_refused_and_not_up_to_date(self):
        models, scores = self.path("models.h5"), self.path("eval.h5")
        run("sharp-train-max", *TRAIN, "--out", models, check=0)
        run("sharp-eval-max", "--checkpoint", models, *EVAL, "--out", scores, check=0)  # the sound file is read
        with h5py.File(models, "r") as f:
            self.assertEqual(len(f.attrs["checksum"]), 64)

        flip_a_weight_byte(models)
        p = run("sharp-eval-max", "--checkpoint", models, *EVAL, "--out", self.path("eval2.h5"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(f"'{models}': {MISMATCH}; rerun to regenerate", p.stderr)
        self.assertFalse(os.path.exists(self.path("eval2.h5")))

        p = run("sharp-train-max", *TRAIN, "--out", models)  # not "up to date"
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(MISMATCH, p.stderr)
        self.assertIn("move it aside, or pass --overwrite", p.stderr)
        run("sharp-train-max", *TRAIN, "--out", models, "--overwrite", check=0)
        run("sharp-eval-max", "--checkpoint", models, *EVAL, "--out", self.path("eval3.h5"), check=0)
        self.assertSameData(scores, self.path("eval3.h5"))

    def test_a_file_without_a_checksum_is_read_with_a_note(self):
        models = self.path("old.h5")
        run("sharp-train-max", *TRAIN, "--out", models, check=0)
        with h5py.File(models, "a") as f:
            del f.attrs["checksum"]
        p = run("sharp-eval-max", "--checkpoint", models, *EVAL, "--out", self.path("eval.h5"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("no checksum", p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
