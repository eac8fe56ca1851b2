"""Item 12 of the fault list, sharp-normalise's input: CR-only line endings are rows, a number that
underflows (1e-400) is read as 0 (said in --help), a row whose logits span more than a double
(softmax:beta=1e-308 on +-1e308) is refused with its line or computed exactly, and a huge bad token
is cut in the message, which names its line and column."""
import math
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faults_support import BIN  # noqa: E402

EXE = os.path.join(BIN, "sharp-normalise")


def normalise(args, stdin):
    return subprocess.run([EXE, *args], input=stdin, capture_output=True, text=True, timeout=60)


class NormaliseInput(unittest.TestCase):
    def test_cr_line_endings_are_rows(self):
        for text in ["1 2 3\r4 5 6\r", "1 2 3\r\n4 5 6\r\n", "1 2 3\r4 5 6"]:
            with self.subTest(text=text):
                p = normalise(["--normaliser", "softmax"], text)
                self.assertEqual(p.returncode, 0, p.stderr)
                rows = p.stdout.splitlines()
                self.assertEqual(len(rows), 2, p.stdout)
                self.assertEqual(rows[0], rows[1])

    def test_an_underflowing_number_is_zero(self):
        p = normalise(["--normaliser", "softmax"], "1e-400 0\n-1e-5000 2.5e-330\n")
        self.assertEqual(p.returncode, 0, p.stderr)
        for row in p.stdout.splitlines():
            self.assertEqual([float(x) for x in row.split()], [0.5, 0.5])
        help_text = normalise(["--help"], "").stdout
        self.assertIn("underflow", help_text)
        p = normalise(["--normaliser", "softmax"], "1e400 0\n")  # overflow stays an error
        self.assertEqual(p.returncode, 2)
        self.assertIn("line 1, column 1", p.stderr)

    def test_a_span_beyond_a_double_is_exact_or_refused(self):
        p = normalise(["--normaliser", "softmax:beta=1e-308"], "0 0\n1e308 -1e308\n")
        if p.returncode == 0:
            rows = [[float(x) for x in r.split()] for r in p.stdout.splitlines()]
            e = math.exp(-2.0)
            self.assertAlmostEqual(rows[1][0], 1 / (1 + e), places=12)
            self.assertAlmostEqual(rows[1][1], e / (1 + e), places=12)
        else:
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("line 2", p.stderr)
            self.assertEqual(p.stdout, "")

    def test_a_huge_bad_token_is_cut(self):
        token = "x" * 3_000_000
        p = normalise(["--normaliser", "softmax"], "1 2\n3 4 " + token + " 5\n")
        self.assertEqual(p.returncode, 2)
        self.assertLess(len(p.stderr), 400, p.stderr[:400])
        self.assertIn("line 2, column 3", p.stderr)
        self.assertIn("3000000", p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
