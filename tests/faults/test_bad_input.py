"""Bad command lines are exit 2 with one line and nothing written (docs/architecture.md#errors-and-exit-codes):
stray words, configs that are not text, grids too large to build, values beyond a parameter's declared
maximum, and values that used to fail only after the run had written its parts directory."""
import os
import subprocess
import sys
import unittest

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faults_support import BIN, ResultDirCase, capped, listing, run  # noqa: E402


class RefusedBeforeWriting(ResultDirCase):
    def refused(self, binary, *args, needles=(), env=None, timeout=30):
        """Runs with a 2 GiB address-space cap; asserts exit 2, one stderr line holding every needle, no file."""
        before = listing(self.dir)
        p = subprocess.run([os.path.join(BIN, binary), *args], capture_output=True, text=True, timeout=timeout,
                           preexec_fn=capped(2), env=dict(os.environ, **(env or {})))
        self.assertEqual(p.returncode, 2, f"{args}: exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
        lines = p.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        for needle in needles:
            self.assertIn(needle, lines[0])
        self.assertEqual(listing(self.dir), before)
        return lines[0]

    # Item 7: positional words.
    def test_stray_words_are_refused(self):
        out = self.path("r.h5")
        line = self.refused("sharp-bounds", "--n", "16", "32", "--out", out, needles=["'32'"])
        self.assertIn("--n 16,32", line)  # says how a list is written
        self.refused("sharp-bounds", "stray", "--out", out, needles=["'stray'"])
        self.refused("sharp-bounds", "--out", out, "--n", "4", "extra", "words", needles=["'extra'"])

    def test_normalise_refuses_a_stray_file_name(self):
        logits = self.path("logits.txt")
        with open(logits, "w") as fh:
            fh.write("1 2 3\n")
        p = subprocess.run([os.path.join(BIN, "sharp-normalise"), "--normaliser", "softmax", logits],
                           input="", capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("logits.txt", p.stderr)
        self.assertIn("--input", p.stderr)
        self.assertEqual(p.stdout, "")

    # Item 8: configs that are not text files.
    def test_config_that_is_not_a_text_file(self):
        out = self.path("r.h5")
        sub = self.path("cfgdir")
        os.mkdir(sub)
        binary = self.path("binary.cfg")
        with open(binary, "wb") as fh:
            fh.write(b"n = 4\n\x00\x01\x02\xff\xfe garbage\n")
        before = listing(self.dir)
        for cfg in [sub, "/dev/zero", binary]:
            with self.subTest(config=cfg):
                p = subprocess.run([os.path.join(BIN, "sharp-bounds"), "--config", cfg, "--out", out],
                                   capture_output=True, text=True, timeout=30, preexec_fn=capped(2))
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertIn("--config", p.stderr)
                self.assertEqual(listing(self.dir), before)

    # Item 9: the grid's size, before any point is built.
    def test_a_grid_too_large_to_build_is_refused_at_once(self):
        out = self.path("r.h5")
        spreads = ",".join(str(i) for i in range(4000))
        # 21 x 4000 x 1000 = 84 M points: refused from the axis sizes, within the 2 GiB cap.
        thetas = ",".join(str(i + 1) for i in range(1000))
        self.refused("sharp-bounds", "--n", "2^1..2^21", "--spread", spreads, "--theta", thetas, "--out", out,
                     needles=["points", "at most"])

    def test_a_grid_beyond_64_bits_is_refused_not_wrapped(self):
        out = self.path("t.h5")
        # Every value within its parameter's maximum, the product beyond 2^64 (about 3e21 points).
        line = self.refused("sharp-train-max", "--seed", "2^0..2^61", "--lr", "2^-1000..2^3",
                            "--weight-decay", "2^-1000..2^3", "--clip", "2^-1000..2^3", "--final-lr", "2^-1000..2^0",
                            "--train-n", "2^0..2^16", "--width", "2^0..2^12", "--batch", "2^0..2^16",
                            "--steps", "2^1..2^23", "--eval-every", "2^0..2^23", "--out", out, needles=["points"])
        self.assertNotIn(" 0 points", line)

    # Item 10: declared maxima, shown by --help.
    def test_values_beyond_a_declared_maximum(self):
        out = self.path("r.h5")
        self.refused("sharp-bounds", "--n", "2^62", "--out", out, needles=["--n", "2^30"])
        self.refused("sharp-bounds", "--n", "4", "--shard", "0/2000000000", "--out", out, needles=["--shard"])
        self.refused("sharp-weight-bound", "--weight-scale", "1e160", "--out", out, needles=["--weight-scale"])
        self.refused("sharp-weight-bound", "--d-model", "2^40", "--out", out, needles=["--d-model"])
        help_text = run("sharp-bounds", "--help", check=0).stdout
        self.assertIn("2^30", help_text)
        for binary, flag in [("sharp-fit-adaptive", "--beta-max"), ("sharp-entropy-temperature", "--beta-max"),
                             ("sharp-weight-bound", "--d-model"), ("sharp-eval-max", "--n")]:
            text = run(binary, "--help", check=0).stdout
            row = text[text.index("  " + flag + " "):]
            row = " ".join(row[:row.index("\n  --", 1)].split())
            self.assertIn("at most", row, f"{binary} --help: {flag} shows no maximum")

    def test_fit_adaptive_refuses_an_endless_beta_search(self):
        model = self.path("m.h5")
        run("sharp-train-max", "--steps", "2", "--width", "4", "--batch", "4", "--eval-every", "1",
            "--eval-samples", "4", "--threads", "1", "--out", model, "--quiet", check=0)
        self.refused("sharp-fit-adaptive", "--checkpoint", model, "--beta-max", "1e300", "--out", self.path("f.h5"),
                     needles=["--beta-max"])

    # Item 11: refused before anything is written.
    def test_inputs_that_failed_after_writing(self):
        self.refused("sharp-bounds", "--theta", "1e-320", "--n", "4", "--out", self.path("t.h5"),
                     needles=["--theta"])
        blocker = self.path("p.h5.parts")
        with open(blocker, "w") as fh:
            fh.write("not a directory\n")
        self.refused("sharp-bounds", "--n", "4", "--out", self.path("p.h5"), needles=["p.h5.parts"])
        long_name = self.path("x" * 250 + ".h5")
        self.refused("sharp-bounds", "--n", "4", "--out", long_name, needles=["--out"])


class ForeignFilesAtOut(ResultDirCase):
    """Item 2: only a sharp result of the same experiment is ever replaced, and only with --overwrite
    when its configuration differs; anything else at --out is exit 2 and stays as it was."""

    def assertRefusedAndKept(self, out):
        with open(out, "rb") as fh:
            before = fh.read()
        p = run("sharp-bounds", "--n", "4", "--out", out)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("--out", p.stderr)
        self.assertIn("--overwrite", p.stderr)
        with open(out, "rb") as fh:
            self.assertEqual(fh.read(), before)
        self.assertFalse(os.path.exists(out + ".parts"))

    def test_a_text_file_is_not_replaced(self):
        out = self.path("notes.h5")
        with open(out, "w") as fh:
            fh.write("my notes, not a result\n")
        self.assertRefusedAndKept(out)

    def test_an_hdf5_file_of_another_tool_is_not_replaced(self):
        out = self.path("other.h5")
        with h5py.File(out, "w") as f:
            f["data"] = [1.0, 2.0, 3.0]
            f.attrs["complete"] = 1
        self.assertRefusedAndKept(out)

    def test_overwrite_replaces_a_foreign_file(self):
        out = self.path("notes.h5")
        with open(out, "w") as fh:
            fh.write("scratch\n")
        run("sharp-bounds", "--n", "4", "--out", out, "--overwrite", "--quiet", check=0)
        with h5py.File(out, "r") as f:
            self.assertEqual(f.attrs["experiment"], "bounds")


if __name__ == "__main__":
    unittest.main(verbosity=2)
