#!/usr/bin/python3
"""End-to-end test of sharp-text-sample (docs/science.md#clrs-text-format): the heapsort example with
traces reproduced character for character from --keys, a max_value record from --priority/--value
(a tie included) and drawn max_value samples whose answer is one of their values, a drawn sample reproducible from
(seed, algorithm, length, index), the notice that these are generated samples on stderr, and bad
command lines refused with exit status 2, one line on stderr and nothing on stdout."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import run  # noqa: E402

KEYS = "0.077,0.512,0.713,0.055,0.905,0.639"


class TextSampleCli(unittest.TestCase):
    def test_heapsort_example_with_trace(self):
        r = run("sharp-text-sample", "--algorithm", "heapsort", "--keys", KEYS, "--trace", check=0)
        lines = r.stdout.split("\n")
        self.assertEqual(lines[0], "heapsort:")
        self.assertEqual(lines[1], "key: [0.077 0.512 0.713 0.055 0.905 0.639], "
                                   "initial_trace: [0.077 0.512 0.713 0.055 0.905 0.639]")
        self.assertEqual(lines[2], "trace | pred:")
        self.assertEqual(len(lines[3].split(" | ")[0].split("], ")), 21)  # 21 states, as the released record
        self.assertTrue(r.stdout.endswith(" | [0.055 0.077 0.512 0.639 0.713 0.905]\n\n"))
        self.assertIn("not the released", r.stderr)

    def test_max_value_records_from_priority_and_value(self):
        # Ours, not CLRS's (docs/science.md#clrs-text-format); the tie of 0.8 goes to the lower index.
        r = run("sharp-text-sample", "--algorithm", "max_value", "--priority", "0.5,0.8,0.1,0.8",
                "--value", "0.1,0.25,0.9,0.75", check=0)
        self.assertEqual(r.stdout, "max_value:\npriority: [0.5 0.8 0.1 0.8], value: [0.1 0.25 0.9 0.75]\nvalue:\n0.25\n\n")
        d = run("sharp-text-sample", "--algorithm", "max_value", "--length", "6", "--count", "3", check=0)
        records = d.stdout.split("\n\n")[:-1]
        self.assertEqual(len(records), 3)
        for record in records:
            lines = record.split("\n")
            self.assertEqual(lines[0], "max_value:")
            values = lines[1].split("value: [")[1].rstrip("]").split(" ")
            self.assertEqual(len(values), 6)
            self.assertIn(lines[3], values)

    def test_drawn_samples_are_a_function_of_seed_algorithm_length_index(self):
        a = run("sharp-text-sample", "--algorithm", "quicksort", "--length", "9", "--seed", "4", "--index", "2", check=0)
        b = run("sharp-text-sample", "--algorithm", "quicksort", "--length", "9", "--seed", "4", "--index", "1",
                "--count", "2", check=0)
        self.assertTrue(b.stdout.endswith(a.stdout))
        self.assertNotEqual(b.stdout, a.stdout)
        t = run("sharp-text-sample", "--algorithm", "minimum", "--length", "5", "--tokens", check=0)
        self.assertTrue(all(x.isdigit() for x in t.stdout.split()))

    def test_bad_command_lines_exit_2_with_nothing_on_stdout(self):
        for args, why in [
            ([], "no algorithm"),
            (["--algorithm", "mergesort", "--length", "5"], "unknown algorithm"),
            (["--algorithm", "heapsort"], "neither length nor keys"),
            (["--algorithm", "heapsort", "--length", "6", "--trace"], "sorting trace outside 4, 5, 10"),
            (["--algorithm", "bubble_sort", "--length", "10", "--trace"], "over the token cap"),
            (["--algorithm", "minimum", "--length", "2"], "too short"),
            (["--algorithm", "minimum", "--keys", "0.1,abc"], "not a number"),
            (["--algorithm", "minimum", "--keys", "0.1234,0.5"], "more than 3 decimals"),
            (["--algorithm", "binary_search", "--keys", "0.5,0.1,0.7,0.9", "--target", "0.3"], "unsorted keys"),
            (["--algorithm", "binary_search", "--keys", "0.1,0.5,0.7,0.9"], "no target"),
            (["--algorithm", "activity_selector", "--s", "0.1,0.2"], "no --f"),
            (["--algorithm", "activity_selector", "--s", "0.5,0.2", "--f", "0.4,0.3"], "start after finish"),
            (["--algorithm", "minimum", "--keys", "0.1,0.2", "--length", "2"], "keys and length"),
            (["--algorithm", "minimum", "--length", "5", "--bogus"], "unknown flag"),
            (["--algorithm", "minimum", "--length", "five"], "non-numeric length"),
            (["--algorithm", "max_value", "--priority", "0.1,0.2"], "no --value"),
            (["--algorithm", "max_value", "--priority", "0.1,0.2", "--value", "0.3"], "counts differ"),
            (["--algorithm", "max_value", "--priority", "0.1,0.2", "--value", "0.3,0.4", "--trace"], "no trace"),
            (["--algorithm", "max_value", "--length", "6", "--trace"], "no trace, drawn"),
            (["--algorithm", "max_value", "--keys", "0.1,0.2"], "keys for max_value"),
            (["--algorithm", "minimum", "--priority", "0.1,0.2", "--value", "0.3,0.4"], "priority for minimum"),
        ]:
            with self.subTest(why):
                r = run("sharp-text-sample", *args)
                self.assertEqual(r.returncode, 2)
                self.assertEqual(r.stdout, "")
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


if __name__ == "__main__":
    unittest.main()
