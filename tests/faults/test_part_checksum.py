"""Item 4 of the fault list: a part file whose data were damaged on disk (one flipped byte in a
probability) is never merged. Each part carries a checksum of its data, verified before it counts as
complete; a bad part is reported, set aside as <id>.h5.bad and computed again."""
import os
import sys
import unittest

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faults_support import ResultDirCase, run  # noqa: E402

GRID = ["--n", "2^2..2^6", "--spread", "1,4", "--threads", "1", "--quiet"]


def flip_a_byte(part, dataset):
    with h5py.File(part, "r") as f:
        offset = f[dataset].id.get_offset()
        before = float(f[dataset][()])
    with open(part, "r+b") as fh:
        fh.seek(offset + 6)  # the exponent's low bits of a little-endian double
        b = fh.read(1)[0]
        fh.seek(offset + 6)
        fh.write(bytes([b ^ 0x40]))
    with h5py.File(part, "r") as f:
        assert float(f[dataset][()]) != before
    return before


class DamagedParts(ResultDirCase):
    def test_a_flipped_byte_is_reported_and_recomputed(self):
        ref, out = self.path("ref.h5"), self.path("r.h5")
        run("sharp-bounds", *GRID, "--out", ref, check=0)
        run("sharp-bounds", *GRID, "--out", out, "--shard", "0/1", check=0)
        parts = out + ".parts"
        victim = sorted(os.listdir(parts))[3]
        flip_a_byte(os.path.join(parts, victim), "metrics/alpha_max")

        p = run("sharp-bounds", *GRID, "--out", out, "--merge-only")
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)  # the damaged point is missing, nothing merged
        self.assertIn(victim[:16], p.stderr)
        self.assertIn("damaged", p.stderr)
        self.assertFalse(os.path.exists(out))
        self.assertTrue(os.path.exists(os.path.join(parts, victim + ".bad")))

        run("sharp-bounds", *GRID, "--out", out, check=0)  # computes that point again and merges
        self.assertSameData(ref, out)

    def test_a_damaged_array_is_caught_too(self):
        grid = ["--n", "16,64", "--trials", "5", "--threads", "1", "--quiet"]
        ref, out = self.path("wref.h5"), self.path("w.h5")
        run("sharp-weight-bound", *grid, "--out", ref, check=0)
        run("sharp-weight-bound", *grid, "--out", out, "--shard", "0/1", check=0)
        parts = out + ".parts"
        victim = sorted(os.listdir(parts))[0]
        with h5py.File(os.path.join(parts, victim), "r+") as f:
            ratio = f["arrays/ratio"][()]
            ratio[2] *= 3.0
            f["arrays/ratio"][...] = ratio
        p = run("sharp-weight-bound", *grid, "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("damaged", p.stderr)
        self.assertSameData(ref, out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
