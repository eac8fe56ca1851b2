"""Issue 26 item 10: sharp-text-sample's given inputs and numbers. A sample from --keys (--s/--f,
--priority/--value) obeys the 2048-token cap of drawn samples (400 keys with traces used to print
188 M tokens, 1.3 GB), refused before the trace is run; a word that belongs to no flag is refused,
not ignored; --seed, --index and --count take only non-negative integers (-1 used to wrap around to
2^64 - 1), and --index plus --count may not run past the last index. Each refusal is exit 2 with one
line on stderr and nothing on stdout; runs are capped at 1 GB of address space."""
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faults_support import BIN, capped  # noqa: E402

EXE = os.path.join(BIN, "sharp-text-sample")
LAST = str(2**64 - 1)


def sample(*args):
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=30, preexec_fn=capped(1))


def keys(n, value="0.5"):
    return ",".join([value] * n)


class TextSampleInput(unittest.TestCase):
    def assertRefused(self, p, *words):
        self.assertEqual(p.returncode, 2, p.stderr[-1000:])
        self.assertEqual(p.stdout, "")
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr[-1000:])
        for w in words:
            self.assertIn(w, p.stderr)

    def test_given_inputs_obey_the_token_cap(self):
        for args, why in [
            (["--algorithm", "heapsort", "--keys", keys(400), "--trace"], "400 keys with trace"),
            (["--algorithm", "minimum", "--keys", keys(400, "0.555")], "400 keys"),
            (["--algorithm", "minimum", "--keys", keys(5000)], "5000 keys"),
            (["--algorithm", "minimum", "--keys", keys(250, "-999.999")], "wide numbers"),
            (["--algorithm", "activity_selector", "--s", keys(400, "0.1"), "--f", keys(400, "0.2"), "--trace"], "s/f"),
            (["--algorithm", "max_value", "--priority", keys(400), "--value", keys(400)], "priority/value"),
        ]:
            with self.subTest(why):
                self.assertRefused(sample(*args), "2048")

    def test_given_inputs_under_the_cap_are_printed(self):
        p = sample("--algorithm", "minimum", "--keys", keys(300), "--tokens")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertLessEqual(len(p.stdout.split()), 2048)
        self.assertEqual(sample("--algorithm", "heapsort", "--keys", keys(6), "--trace").returncode, 0)

    def test_stray_words_are_refused(self):
        for args in [["--algorithm", "minimum", "--length", "5", "stray"],
                     ["minimum", "--length", "5"],
                     ["--algorithm", "minimum", "--keys", "0.1,0.2", "0.3"]]:
            with self.subTest(args=args):
                self.assertRefused(sample(*args), "unexpected word")

    def test_seed_index_and_count_are_non_negative_and_do_not_wrap(self):
        draw = ["--algorithm", "minimum", "--length", "5"]
        for args, words in [
            (["--seed", "-1"], ["--seed"]),
            (["--seed", str(2**64)], ["--seed"]),
            (["--seed", "1.5"], ["--seed"]),
            (["--index", "-1"], ["--index"]),
            (["--count", "-1"], ["--count"]),
            (["--index", LAST, "--count", "2"], ["--index", "--count"]),
            (["--index", str(2**64 - 3), "--count", "5"], ["--index", "--count"]),
        ]:
            with self.subTest(args=args):
                self.assertRefused(sample(*draw, *args), *words)
        for args in [["--seed", LAST], ["--index", LAST], ["--index", str(2**64 - 2), "--count", "2"]]:
            with self.subTest(args=args):
                self.assertEqual(sample(*draw, *args).returncode, 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
