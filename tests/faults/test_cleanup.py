"""Item 5 of the fault list: removing the parts directory after a merge is resumable. The directory is
renamed PATH.h5.parts.deleting before it is emptied, so a kill halfway leaves nothing that a later run
takes for parts; the next run finishes the deletion, and --overwrite clears parts of another
configuration that an older version left half-deleted."""
import os
import signal
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faults_support import ResultDirCase, run  # noqa: E402

A = ["--n", "2^2..2^6", "--threads", "1", "--quiet"]
B = ["--n", "2^2..2^5", "--theta", "2", "--threads", "1", "--quiet"]


class Cleanup(ResultDirCase):
    def test_a_kill_during_cleanup_then_another_configuration(self):
        out = self.path("r.h5")
        p = run("sharp-bounds", *A, "--out", out, env={"SHARP_INJECT_KILL": "cleanup"})
        self.assertEqual(p.returncode, -signal.SIGKILL, p.stderr)
        self.assertTrue(os.path.exists(out))  # merged before the cleanup began
        self.assertFalse(os.path.exists(out + ".parts"))
        self.assertTrue(os.path.isdir(out + ".parts.deleting"))
        run("sharp-bounds", *A, "--out", out, check=0)  # up to date
        run("sharp-bounds", *B, "--out", out, "--overwrite", check=0)
        self.assertFalse(os.path.exists(out + ".parts.deleting"))
        self.assertFalse(os.path.exists(out + ".parts"))

    def test_overwrite_clears_half_deleted_parts_of_another_configuration(self):
        out = self.path("h.h5")
        run("sharp-bounds", *A, "--out", out, "--keep-parts", check=0)
        parts = out + ".parts"
        for name in sorted(os.listdir(parts))[::2]:  # what a kill in an older version's cleanup left
            os.remove(os.path.join(parts, name))
        p = run("sharp-bounds", *B, "--out", out)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--overwrite", p.stderr)
        run("sharp-bounds", *B, "--out", out, "--overwrite", check=0)
        self.assertFalse(os.path.exists(parts))


if __name__ == "__main__":
    unittest.main(verbosity=2)
