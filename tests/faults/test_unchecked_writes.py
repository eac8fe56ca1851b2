"""Issue 26 item 1: the filters sharp-normalise and sharp-text-sample check every write to stdout and
the final flush. Output to /dev/full, to a closed stdout or to a full disk is exit 1 with "cannot write
to stdout", never exit 0 with the output cut. Both sizes matter: a small output stays in stdio's buffer
until the flush, a large one (4096 rows) is written past the buffer by fwrite itself. The full disk is a
tiny tmpfs in a private mount namespace (skipped, with the reason, where one cannot be mounted)."""
import os
import subprocess
import sys
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faults_support import BIN, ResultDirCase, namespaces_allowed  # noqa: E402

NORMALISE = os.path.join(BIN, "sharp-normalise")
TEXT_SAMPLE = os.path.join(BIN, "sharp-text-sample")
SMALL = "1 2 3\n"
LARGE = "1 2 3\n" * 4096

# (name, command line, stdin): each writes to stdout and nothing else.
WRITERS = [
    ("normalise small", [NORMALISE, "--normaliser", "softmax"], SMALL),
    ("normalise 4096 lines", [NORMALISE, "--normaliser", "softmax"], LARGE),
    ("normalise --entropy", [NORMALISE, "--normaliser", "softmax", "--entropy"], LARGE),
    ("normalise --list", [NORMALISE, "--list"], ""),
    ("normalise --help", [NORMALISE, "--help"], ""),
    ("text-sample one", [TEXT_SAMPLE, "--algorithm", "minimum", "--length", "5"], ""),
    ("text-sample 2000", [TEXT_SAMPLE, "--algorithm", "minimum", "--length", "5", "--count", "2000"], ""),
    ("text-sample tokens", [TEXT_SAMPLE, "--algorithm", "minimum", "--length", "5", "--count", "2000", "--tokens"], ""),
    ("text-sample --help", [TEXT_SAMPLE, "--help"], ""),
]


def with_stdout_closed(argv, stdin=""):
    return subprocess.run(["bash", "-c", 'exec >&-; exec "$@"', "bash", *argv], input=stdin, capture_output=True,
                          text=True, timeout=120)


class UncheckedWrites(ResultDirCase):
    def assertRefusedWrite(self, p, why):
        self.assertEqual(p.returncode, 1, why + ": " + p.stderr)
        self.assertIn("cannot write to stdout", p.stderr, why)

    def test_dev_full(self):
        for name, argv, stdin in WRITERS:
            with self.subTest(name):
                with open("/dev/full", "w") as full:
                    p = subprocess.run(argv, input=stdin, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
                self.assertRefusedWrite(p, name)

    def test_closed_stdout(self):
        for name, argv, stdin in WRITERS:
            with self.subTest(name):
                self.assertRefusedWrite(with_stdout_closed(argv, stdin), name)

    def test_closed_stdout_with_an_input_file(self):
        # The input file then takes descriptor 1 (read-only): the output must still fail, not vanish.
        rows = self.path("rows.txt")
        with open(rows, "w") as fh:
            fh.write(LARGE)
        p = with_stdout_closed([NORMALISE, "--normaliser", "softmax", "--input", rows])
        self.assertRefusedWrite(p, "input file on descriptor 1")
        with open(rows) as fh:
            self.assertEqual(fh.read(), LARGE)

    def test_a_full_disk(self):
        ok, why = namespaces_allowed()
        if not ok:
            self.skipTest("needs a private tmpfs (unshare -m, mount): " + (why or "not permitted"))
        rows = self.path("rows.txt")
        with open(rows, "w") as fh:
            fh.write(LARGE)
        # A 64 KB tmpfs filled up to its last 1 KB (tmpfs counts whole pages: 1 KB short of full is full
        # for any new page); each tool's output (>100 KB) cannot fit.
        script = textwrap.dedent("""
            set -u
            DISK=$LOG/disk; mkdir -p $DISK
            mount -t tmpfs -o size=64k tmpfs $DISK
            head -c $(( $(df --output=avail -B1 $DISK | tail -1) - 1024 )) /dev/zero >$DISK/filler 2>/dev/null
            $NORMALISE --normaliser softmax --input $LOG/rows.txt >$DISK/out1 2>$LOG/err1; echo $? >$LOG/rc1
            $TEXT_SAMPLE --algorithm minimum --length 5 --count 2000 >$DISK/out2 2>$LOG/err2; echo $? >$LOG/rc2
            $NORMALISE --normaliser softmax --input $LOG/rows.txt --output $DISK/out3 2>$LOG/err3; echo $? >$LOG/rc3
            ls $DISK >$LOG/listing
        """)
        p = subprocess.run(["unshare", "-m", "bash", "-c", script], capture_output=True, text=True, timeout=240,
                           env=dict(os.environ, LOG=self.dir, NORMALISE=NORMALISE, TEXT_SAMPLE=TEXT_SAMPLE))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

        def read(name):
            with open(self.path(name)) as fh:
                return fh.read()
        for k, tool in [(1, "normalise"), (2, "text-sample")]:
            with self.subTest(tool):
                self.assertEqual(read(f"rc{k}").strip(), "1", read(f"err{k}"))
                self.assertIn("cannot write to stdout", read(f"err{k}"))
        with self.subTest("normalise --output"):
            self.assertEqual(read("rc3").strip(), "1", read("err3"))
            self.assertIn("cannot write", read("err3"))
            self.assertEqual(sorted(read("listing").split()), ["filler", "out1", "out2"])  # no temporary left


if __name__ == "__main__":
    unittest.main(verbosity=2)
