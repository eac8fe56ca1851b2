"""Issue 26 item 13, inputs left from the first trial. sharp-normalise accepts a UTF-8 byte order mark
and blank lines after its last row (a blank line before a row, or an input of blank lines only, is
still an empty row, refused), and an
--output in a missing directory is exit 2 saying so, before any work. --status only reads, so it works
where the output's directory is read-only (a read-only tmpfs in a private mount namespace; skipped,
with the reason, where one cannot be mounted). A grid list that gives one value twice in two
spellings is refused (exit 2) naming both, as an exact repeat always was: numbers by value (0,-0;
16,2^4; 1.0,1), normaliser specs by their canonical text with defaults filled (softmax and
softmax:beta=1; softmax:theta=2 and softmax:beta=0.5), also inside a point's list; -0 is read as 0,
so it never gives a second point id for the same value."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faults_support import BIN, ResultDirCase, listing, namespaces_allowed, run  # noqa: E402

NORMALISE = os.path.join(BIN, "sharp-normalise")


def normalise(args, data):
    return subprocess.run([NORMALISE, *args], input=data, capture_output=True, timeout=60)


class NormaliseInput(ResultDirCase):
    def test_a_byte_order_mark_is_accepted(self):
        plain = normalise(["--normaliser", "softmax"], b"1 2 3\n4 5 6\n")
        self.assertEqual(plain.returncode, 0, plain.stderr)
        for data in [b"\xef\xbb\xbf1 2 3\n4 5 6\n", b"\xef\xbb\xbf1 2 3\r\n4 5 6\r\n"]:
            with self.subTest(data=data):
                p = normalise(["--normaliser", "softmax"], data)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stdout, plain.stdout)
        # Only at the very start: a mark inside a line is no number.
        p = normalise(["--normaliser", "softmax"], b"1 2 3\n\xef\xbb\xbf4 5 6\n")
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"line 2", p.stderr)

    def test_trailing_blank_lines_are_accepted(self):
        plain = normalise(["--normaliser", "softmax"], b"1 2 3\n4 5 6\n")
        for data in [b"1 2 3\n4 5 6\n\n", b"1 2 3\n4 5 6\n\n\n", b"1 2 3\n4 5 6\n  \t\n", b"1 2 3\r\n4 5 6\r\n\r\n"]:
            with self.subTest(data=data):
                p = normalise(["--normaliser", "softmax"], data)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stdout, plain.stdout)
        p = normalise(["--normaliser", "softmax"], b"1 2 3\n\n4 5 6\n")   # inside: still an empty row
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"line 2", p.stderr)
        for data in [b"\n", b"\xef\xbb\xbf\n", b" \n\n"]:   # blank lines only: an empty row, as before
            with self.subTest(data=data):
                p = normalise(["--normaliser", "softmax"], data)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(b"line 1: empty row", p.stderr)
        p = normalise(["--normaliser", "softmax"], b"")   # no input: no output, as before
        self.assertEqual((p.returncode, p.stdout), (0, b""), p.stderr)

    def test_an_output_in_a_missing_directory_says_so(self):
        out = self.path("missing/dir/p.txt")
        p = normalise(["--normaliser", "softmax", "--output", out], b"1 2 3\n")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(b"does not exist", p.stderr)
        self.assertIn(self.path("missing/dir").encode(), p.stderr)
        self.assertEqual(listing(self.dir), [])
        with open(self.path("file"), "w") as fh:
            fh.write("x")
        p = normalise(["--normaliser", "softmax", "--output", self.path("file/p.txt")], b"1 2 3\n")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(b"not a directory", p.stderr)


class StatusReadOnly(ResultDirCase):
    def test_status_on_a_read_only_location(self):
        ok, why = namespaces_allowed()
        if not ok:
            self.skipTest("needs a private read-only tmpfs (unshare -m, mount): " + (why or "not permitted"))
        script = textwrap.dedent("""
            set -u
            DISK=$LOG/disk; mkdir -p $DISK
            mount -t tmpfs -o size=4m tmpfs $DISK
            $BIN/sharp-bounds --n 4,8 --quiet --out $DISK/r.h5 --shard 0/2 >/dev/null 2>&1
            mount -o remount,ro $DISK
            $BIN/sharp-bounds --n 4,8 --out $DISK/r.h5 --status >$LOG/out1 2>$LOG/err1; echo $? >$LOG/rc1
            $BIN/sharp-bounds --n 4,8 --out $DISK/r.h5 --quiet >$LOG/out2 2>$LOG/err2; echo $? >$LOG/rc2
        """)
        p = subprocess.run(["unshare", "-m", "bash", "-c", script], capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, LOG=self.dir, BIN=BIN))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

        def read(name):
            with open(self.path(name)) as fh:
                return fh.read()
        self.assertEqual(read("rc1").strip(), "3", read("err1"))   # one of two points missing
        self.assertIn("1 of 2", read("out1") + read("err1"))
        self.assertEqual(read("rc2").strip(), "2", read("err2"))   # a run still needs to write
        self.assertIn("--out: cannot write", read("err2"))


class GridDuplicates(unittest.TestCase):
    def assertSameValue(self, binary, args, first, second):
        p = run(binary, *args, "--dry-run")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        if first == second:   # an exact repeat, refused as it always was
            self.assertIn("value %s is repeated" % first, p.stderr)
        else:
            self.assertIn("'%s' and '%s' are the same value" % (first, second), p.stderr)
        self.assertEqual(p.stdout, "")

    def test_numbers_are_compared_by_value(self):
        self.assertSameValue("sharp-bounds", ["--n", "16,2^4"], "16", "2^4")
        self.assertSameValue("sharp-bounds", ["--n", "16,+16"], "16", "+16")
        self.assertSameValue("sharp-bounds", ["--n", "16,2^2..2^5"], "16", "2^4 of 2^2..2^5")
        self.assertSameValue("sharp-bounds", ["--n", "2^2..2^4,2^3..2^5"], "2^3 of 2^2..2^4", "2^3 of 2^3..2^5")
        self.assertSameValue("sharp-bounds", ["--n", "4", "--spread", "0,-0"], "0", "-0")
        self.assertSameValue("sharp-bounds", ["--n", "4", "--spread", "1.0,2,1"], "1.0", "1")
        self.assertSameValue("sharp-bounds", ["--n", "4", "--spread", "1e0,1"], "1e0", "1")
        self.assertEqual(run("sharp-bounds", "--n", "16,17", "--dry-run").returncode, 0)

    def test_minus_zero_is_zero(self):
        a = run("sharp-bounds", "--n", "4", "--spread", "-0", "--dry-run", check=0).stdout.split("\n")[1].split()[1]
        b = run("sharp-bounds", "--n", "4", "--spread", "0", "--dry-run", check=0).stdout.split("\n")[1].split()[1]
        self.assertEqual(a, b)

    def test_normaliser_specs_are_compared_with_defaults_filled(self):
        d = ["--n", "16"]
        self.assertSameValue("sharp-transformer-dispersion", [*d, "--normaliser", "softmax,softmax:beta=1"],
                             "softmax", "softmax:beta=1")
        self.assertSameValue("sharp-transformer-dispersion", [*d, "--normaliser", "softmax:theta=2,softmax:beta=0.5"],
                             "softmax:theta=2", "softmax:beta=0.5")
        self.assertSameValue("sharp-train-max", ["--normaliser", "ssmax:s=learn,ssmax:s=learn"],
                             "ssmax:s=learn", "ssmax:s=learn")
        self.assertSameValue("sharp-train-text", ["--normaliser", "softmax,softmax:beta=1"], "softmax", "softmax:beta=1")
        ok = run("sharp-transformer-dispersion", *d, "--normaliser", "softmax,softmax:beta=2", "--dry-run")
        self.assertEqual(ok.returncode, 0, ok.stderr)
        ok = run("sharp-train-max", "--normaliser", "ssmax:s=learn,ssmax:s=0.5", "--dry-run")
        self.assertEqual(ok.returncode, 0, ok.stderr)

    def test_inside_a_point(self):
        with tempfile.TemporaryDirectory(prefix="sharp-e2e-") as d:
            model = os.path.join(d, "m.h5")
            run("sharp-train-text", "--layers", "1", "--heads", "2", "--d-model", "16", "--batch", "4", "--warmup", "1",
                "--lengths", "4", "--eval-samples", "8", "--steps", "2", "--eval-every", "2", "--quiet", "--out", model,
                check=0)
            grid = ["--checkpoint", model, "--length", "4"]
            self.assertSameValue("sharp-eval-text", [*grid, "--normaliser", "trained,softmax,softmax:beta=1"],
                                 "softmax", "softmax:beta=1")
            self.assertSameValue("sharp-eval-text", [*grid, "--normaliser", "trained+adaptive+trained"],
                                 "trained", "trained")
            ok = run("sharp-eval-text", *grid, "--normaliser", "trained,softmax:beta=2,softmax", "--dry-run")
            self.assertEqual(ok.returncode, 0, ok.stderr)

if __name__ == "__main__":
    unittest.main(verbosity=2)
