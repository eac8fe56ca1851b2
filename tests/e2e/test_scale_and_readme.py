"""The root attribute `scale` and the generated results/README.md.
- A sweep file line `# scale: quick` / `paper` / `cluster` becomes root attribute `scale`; without one
  it is `custom`; another word or a second line is bad input (exit 2, nothing written). Every sweep
  file under sweeps/quick, sweeps/paper and sweeps/cluster says its scale.
- scripts/results_readme.py --check passes on the committed README (ctest results_readme_current
  runs that too) and fails on a README whose generated part differs from the binaries' --describe.
ctest runs it with SHARP_BIN_DIR and SHARP_SOURCE_DIR set. About 2 s.
"""
import glob
import os
import shutil
import subprocess
import sys
import unittest

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import BIN, ResultDirCase, run  # noqa: E402

SOURCE = os.environ.get("SHARP_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
README_SCRIPT = os.path.join(SOURCE, "scripts", "results_readme.py")


class Scale(ResultDirCase):
    def config(self, text):
        path = self.path("sweep.cfg")
        with open(path, "w") as fh:
            fh.write(text)
        return path

    def scale_of(self, path):
        with h5py.File(path, "r") as f:
            return f.attrs["scale"]

    def test_the_sweep_files_scale_line_becomes_the_root_attribute(self):
        for line, expected in [("# scale: quick\n", "quick"), ("#scale:paper  \n", "paper"),
                               ("# scale: cluster\n", "cluster"), ("# a comment\n", "custom")]:
            with self.subTest(line=line):
                out = self.path(f"{expected}.h5")
                cfg = self.config(line + "n = 4,8\ntrials = 1\n")
                run("sharp-bounds", "--config", cfg, "--out", out, "--quiet", check=0)
                self.assertEqual(self.scale_of(out), expected)
        out = self.path("flags.h5")
        run("sharp-bounds", "--n", "4", "--out", out, "--quiet", check=0)
        self.assertEqual(self.scale_of(out), "custom")

    def test_an_unknown_or_repeated_scale_is_bad_input(self):
        for text, needle in [("# scale: huge\nn = 4\n", "scale 'huge'"),
                             ("# scale: quick\n# scale: paper\nn = 4\n", "second '# scale:'")]:
            with self.subTest(text=text):
                p = run("sharp-bounds", "--config", self.config(text), "--out", self.path("x.h5"))
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(needle, p.stderr)
                self.assertIn("line", p.stderr)
                self.assertFalse(os.path.exists(self.path("x.h5")))

    def test_every_sweep_file_says_its_scale(self):
        for scale in ("quick", "paper", "cluster"):
            files = glob.glob(os.path.join(SOURCE, "sweeps", scale, "*.cfg"))
            self.assertTrue(files)
            for cfg in files:
                with open(cfg) as fh:
                    lines = [ln.strip() for ln in fh]
                self.assertIn(f"# scale: {scale}", lines, cfg)


class Readme(ResultDirCase):
    def check(self, readme):
        return subprocess.run([sys.executable, README_SCRIPT, "--check", "--bin", BIN, "--readme", readme],
                              capture_output=True, text=True)

    def test_a_stale_readme_is_detected_and_make_readme_repairs_it(self):
        readme = self.path("README.md")
        shutil.copy(os.path.join(SOURCE, "results", "README.md"), readme)
        self.assertEqual(self.check(readme).returncode, 0)
        with open(readme) as fh:
            text = fh.read()
        with open(readme, "w") as fh:
            fh.write(text.replace("largest softmax coefficient over the trials", "largest coefficient"))
        p = self.check(readme)
        self.assertEqual(p.returncode, 1)
        self.assertIn("make readme", p.stderr)
        subprocess.run([sys.executable, README_SCRIPT, "--bin", BIN, "--readme", readme], check=True,
                       capture_output=True)
        with open(readme) as fh:
            self.assertEqual(fh.read(), text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
