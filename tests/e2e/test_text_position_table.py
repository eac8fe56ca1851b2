"""Issue 26 item 9: a model with a learned positional table is evaluated up to the table's end, not past
it (docs/science.md#algorithmic-text). Trained with --positional learned --max-length 42 --lengths 4,
sharp-eval-text used to decode up to 16 tokens beyond the answer and exit 1 on every rerun; it now
stops decoding where question plus answer fill the table, scores the sample as generated (unterminated,
so wrong) and counts it in position_table_end; a question longer than the table (length 16) gets no
tokens at all. A rope model, which has no table, is never cut. The run and its rerun exit 0.
ctest runs it with SHARP_BIN_DIR set; standalone: SHARP_BIN_DIR=build/bin /usr/bin/python3 <this>."""
import os
import sys
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ResultDirCase, run  # noqa: E402

TINY = ["--layers", "1", "--heads", "2", "--d-model", "16", "--batch", "4", "--warmup", "1", "--lengths", "4",
        "--eval-samples", "8", "--steps", "4", "--eval-every", "2", "--max-length", "42", "--quiet"]
EVAL = ["--length", "4,16", "--samples", "20", "--quiet"]


def column(path, name):
    with h5py.File(path, "r") as f:
        order = np.argsort(f["points/params/length"][()])
        return f["points/" + name][()][order]


class PositionTable(ResultDirCase):
    def test_decoding_stops_at_the_table_end(self):
        model = self.path("learned.h5")
        run("sharp-train-text", *TINY, "--positional", "learned", "--out", model, check=0)
        out = self.path("eval.h5")
        run("sharp-eval-text", "--checkpoint", model, *EVAL, "--out", out, check=0)
        run("sharp-eval-text", "--checkpoint", model, *EVAL, "--out", out, check=0)   # the rerun: up to date
        ended, terminated = column(out, "position_table_end.trained"), column(out, "terminated.trained")
        self.assertTrue(np.all(ended + terminated <= 1.0), (ended, terminated))
        # Length 16: the question alone is longer than 42 tokens; nothing is generated, all wrong.
        q16 = len(run("sharp-text-sample", "--algorithm", "minimum", "--length", "16", "--tokens", check=0).stdout.split())
        self.assertGreater(q16, 42)
        self.assertEqual(ended[1], 1.0)
        self.assertEqual(column(out, "exact_final.trained")[1], 0.0)
        # A 4-step model never writes the blank line: at length 4 every sample runs into the table.
        self.assertEqual(terminated[0] + ended[0], 1.0)

    def test_a_model_without_a_table_is_never_cut(self):
        model = self.path("rope.h5")
        run("sharp-train-text", *TINY, "--positional", "rope", "--out", model, check=0)
        out = self.path("eval.h5")
        run("sharp-eval-text", "--checkpoint", model, *EVAL, "--out", out, check=0)
        self.assertEqual(list(column(out, "position_table_end.trained")), [0.0, 0.0])


if __name__ == "__main__":
    unittest.main(verbosity=2)
