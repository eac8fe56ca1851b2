"""Item 3 of the fault list: a full disk is exit 1 with "the disk is full" and how many points are safe,
never a crash in HDF5's exit handler; the finished points survive and the rerun, once there is space,
completes with the same data as a run that never ran out of space. The disk is a tiny tmpfs mounted in
a private mount namespace (unshare -m), so nothing outside the test sees it; skipped, with the reason,
where mount namespaces are not allowed."""
import os
import subprocess
import sys
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faults_support import BIN, ResultDirCase, namespaces_allowed, run  # noqa: E402

GRID = ["--n", "2^2..2^5", "--spread", "1,2,3,4,5,6,7,8,9,10", "--threads", "1", "--quiet"]


class DiskFull(ResultDirCase):
    def setUp(self):
        super().setUp()
        ok, why = namespaces_allowed()
        if not ok:
            self.skipTest("needs a private tmpfs (unshare -m, mount): " + (why or "not permitted"))

    def in_full_disk(self, steps, size="200k"):
        """Runs `steps` (shell) with $DISK a small tmpfs and $LOG this test's directory; returns stdout."""
        script = textwrap.dedent("""
            set -u
            DISK=$LOG/disk; mkdir -p $DISK
            mount -t tmpfs -o size=%s tmpfs $DISK
        """ % size) + textwrap.dedent(steps)
        p = subprocess.run(["unshare", "-m", "bash", "-c", script], capture_output=True, text=True, timeout=240,
                           env=dict(os.environ, LOG=self.dir, BIN=BIN))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return p.stdout

    def read(self, name):
        with open(self.path(name)) as fh:
            return fh.read()

    def test_points_that_do_not_fit_then_a_rerun_with_space(self):
        ref = self.path("ref.h5")
        run("sharp-bounds", *GRID, "--out", ref, check=0)
        grid = " ".join(GRID)
        self.in_full_disk(f"""
            $BIN/sharp-bounds {grid} --out $DISK/r.h5 >$LOG/out1 2>$LOG/err1; echo $? >$LOG/rc1
            ls $DISK/r.h5.parts | grep -c '^[0-9a-f]*\\.h5$' >$LOG/parts1 || true
            mount -o remount,size=20m $DISK
            $BIN/sharp-bounds {grid} --out $DISK/r.h5 >$LOG/out2 2>$LOG/err2; echo $? >$LOG/rc2
            cp $DISK/r.h5 $LOG/r.h5
        """)
        err = self.read("err1")
        self.assertEqual(self.read("rc1").strip(), "1", err)
        self.assertIn("the disk is full", err)
        self.assertNotIn("infinite loop", err)
        safe = int(self.read("parts1"))
        self.assertGreater(safe, 0)
        self.assertIn(f"{safe} of 40 points are safe", err)
        self.assertEqual(self.read("rc2").strip(), "0", self.read("err2"))
        self.assertSameData(ref, self.path("r.h5"))

    def test_a_merge_that_does_not_fit(self):
        # Every point fits; the merged file does not: exit 1, all points safe, the rerun merges.
        grid = ["--n", "2^2..2^4", "--spread", "1,2,3", "--threads", "1", "--quiet"]
        ref = self.path("ref.h5")
        run("sharp-bounds", *grid, "--out", ref, check=0)
        g = " ".join(grid)
        self.in_full_disk(f"""
            $BIN/sharp-bounds {g} --out $DISK/r.h5 --shard 0/1 >/dev/null 2>&1
            head -c $(( $(df --output=avail -B1 $DISK | tail -1) - 4096 )) /dev/zero >$DISK/filler 2>/dev/null
            $BIN/sharp-bounds {g} --out $DISK/r.h5 >$LOG/out1 2>$LOG/err1; echo $? >$LOG/rc1
            rm $DISK/filler
            $BIN/sharp-bounds {g} --out $DISK/r.h5 >$LOG/out2 2>$LOG/err2; echo $? >$LOG/rc2
            cp $DISK/r.h5 $LOG/r.h5
        """, size="400k")
        err = self.read("err1")
        self.assertEqual(self.read("rc1").strip(), "1", err)
        self.assertIn("the disk is full", err)
        self.assertIn("9 of 9 points are safe", err)
        self.assertEqual(self.read("rc2").strip(), "0", self.read("err2"))
        self.assertSameData(ref, self.path("r.h5"))


if __name__ == "__main__":
    unittest.main(verbosity=2)
