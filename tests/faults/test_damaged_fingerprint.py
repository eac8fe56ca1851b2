"""Issue 26 item 5: one damaged part does not condemn all. A part whose name is a point of this grid
but whose `fingerprint` attribute is damaged is a damaged part: set aside as <id>.h5.bad and computed
again, every other finished part kept (before, the whole directory was "another configuration", exit
2, and the advised --overwrite deleted every finished part). Only a part that names no point of this
grid means another configuration; that refusal moves nothing."""
import os
import shutil
import sys
import unittest

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faults_support import ResultDirCase, listing, run  # noqa: E402

GRID = ["--n", "2^2..2^5", "--spread", "1,4", "--threads", "1", "--quiet"]


class DamagedFingerprint(ResultDirCase):
    def test_a_damaged_fingerprint_is_a_damaged_part_not_another_configuration(self):
        ref, out = self.path("ref.h5"), self.path("r.h5")
        run("sharp-bounds", *GRID, "--out", ref, check=0)
        run("sharp-bounds", *GRID, "--out", out, "--shard", "0/1", check=0)
        parts = out + ".parts"
        names = sorted(os.listdir(parts))
        victim = names[2]
        with h5py.File(os.path.join(parts, victim), "a") as f:
            f.attrs["fingerprint"] = "0000000000000000"

        # A part of no point of this grid beside it: another configuration, refused, nothing moved.
        foreign = os.path.join(parts, "ffffffffffffffff.h5")
        shutil.copy(os.path.join(parts, names[0]), foreign)
        with h5py.File(foreign, "a") as f:
            f.attrs["fingerprint"] = "1111111111111111"
        before = listing(parts)
        p = run("sharp-bounds", *GRID, "--out", out)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("another configuration (fingerprint 1111111111111111", p.stderr)
        self.assertEqual(listing(parts), before)
        os.remove(foreign)
        written = {n: os.stat(os.path.join(parts, n)).st_mtime_ns for n in names if n != victim}

        p = run("sharp-bounds", *GRID, "--out", out, "--keep-parts")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"point {victim[:16]}: part file", p.stderr)
        self.assertIn("its fingerprint 0000000000000000 is not this configuration's", p.stderr)
        self.assertTrue(os.path.exists(os.path.join(parts, victim + ".bad")))
        for name, mtime in written.items():  # every other part kept as it was, not computed again
            self.assertEqual(os.stat(os.path.join(parts, name)).st_mtime_ns, mtime, name)
        self.assertSameData(ref, out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
