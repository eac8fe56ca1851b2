"""The experiment binaries under mpirun: identical data for 1, 2 and 3 ranks (3 oversubscribed),
resume after SIGKILL of the whole job or of one rank, a failing point aborts every rank within
seconds naming the rank and the point, and a bad command line is reported once with exit 2.
"""
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import (BIN, ResultDirCase, dry_run_points, finished_parts, last_point_id, run, stalled,  # noqa: E402
                          wait_for_parts)

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")


def mpirun(ranks, binary, *args, env=None, timeout=300):
    cmd = ["mpirun", "-np", str(ranks), "--oversubscribe"]
    for k in (env or {}):
        cmd += ["-x", k]
    cmd += [os.path.join(BIN, binary), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=dict(ENV, **(env or {})))


def live_ranks(marker):
    """Pids of sharp binaries whose command line contains `marker` (the test's own directory, so
    tests running at the same time do not see each other's processes)."""
    out = subprocess.run(["pgrep", "-f", "sharp-.*" + marker], capture_output=True, text=True).stdout
    return [int(x) for x in out.split() if int(x) != os.getpid()]


class Mpi(ResultDirCase):
    GRID = ["--n", "2^2..2^18", "--spread", "1,4", "--logits", "uniform,two-point,gaussian", "--trials", "2",
            "--threads", "1", "--quiet"]

    def test_one_two_three_ranks_give_identical_data(self):
        ref = self.path("r1.h5")
        p = run("sharp-bounds", *self.GRID, "--out", ref)
        self.assertEqual(p.returncode, 0, p.stderr)
        for ranks in (1, 2, 3):
            out = self.path(f"mpi{ranks}.h5")
            p = mpirun(ranks, "sharp-bounds", *self.GRID, "--out", out)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertSameData(ref, out)
        wref, w3 = self.path("w1.h5"), self.path("w3.h5")
        wgrid = ["--n", "16,256", "--d-model", "8,32", "--trials", "10", "--threads", "1", "--quiet"]
        self.assertEqual(run("sharp-weight-bound", *wgrid, "--out", wref).returncode, 0)
        self.assertEqual(mpirun(3, "sharp-weight-bound", *wgrid, "--out", w3).returncode, 0)
        self.assertSameData(wref, w3)

    def _kill_midway(self, whole_job):
        # The last point stalls (SHARP_INJECT_STALL) until the kill, so the job is caught midway
        # however fast the machine: every other point is finished, that one is not.
        grid = ["--n", "2^16", "--spread", ",".join(str(s) for s in range(1, 13)), "--trials", "2",
                "--threads", "1", "--quiet"]
        ref, out = self.path("ref.h5"), self.path("killed.h5")
        self.assertEqual(run("sharp-bounds", *grid, "--out", ref).returncode, 0)
        parts = out + ".parts"
        victim, total = last_point_id("sharp-bounds", *grid), len(dry_run_points("sharp-bounds", *grid))
        proc = subprocess.Popen(["mpirun", "-np", "2", "-x", "SHARP_INJECT_STALL", os.path.join(BIN, "sharp-bounds"),
                                 *grid, "--out", out], env=stalled(victim, base=ENV),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        wait_for_parts(parts, total - 1)
        self.assertEqual(len(finished_parts(parts)), total - 1, "the points before the stalled one did not finish")
        if whole_job:
            # mpirun puts its ranks in process groups of their own, so a SIGKILL of mpirun alone
            # leaves them running: the whole job is mpirun and every rank at once (as a node crash).
            for pid in live_ranks(self.dir):
                os.kill(pid, signal.SIGKILL)
        else:
            ranks = [p for p in live_ranks(self.dir) if p != proc.pid]
            self.assertTrue(ranks)
            os.kill(max(ranks), signal.SIGKILL)  # one rank dies; mpirun must end the rest
        proc.wait(timeout=60)
        for _ in range(100):
            if not live_ranks(self.dir):
                break
            time.sleep(0.1)
        self.assertEqual(live_ranks(self.dir), [], "ranks survived the kill")
        self.assertFalse(os.path.exists(out))
        p = mpirun(2, "sharp-bounds", *grid, "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertSameData(ref, out)

    def test_sigkill_of_the_whole_job_then_rerun(self):
        self._kill_midway(whole_job=True)

    def test_sigkill_of_one_rank_then_rerun(self):
        self._kill_midway(whole_job=False)

    def test_failing_point_aborts_all_ranks_naming_rank_and_point(self):
        grid = ["--n", "2^2..2^20", "--spread", "1,2,3,4", "--threads", "1", "--quiet"]
        dry = run("sharp-bounds", *grid, "--dry-run").stdout.splitlines()
        victim = dry[-1].split()[1]  # the cheapest point: dealt last, so a worker or rank 0 has it
        t0 = time.time()
        p = mpirun(3, "sharp-bounds", *grid, "--out", self.path("f.h5"), env={"SHARP_INJECT_FAILURE": victim},
                   timeout=120)
        elapsed = time.time() - t0
        self.assertNotEqual(p.returncode, 0)
        self.assertRegex(p.stderr, r"rank \d, point " + victim)
        self.assertLess(elapsed, 30)
        self.assertEqual(live_ranks(self.dir), [])
        self.assertFalse(os.path.exists(self.path("f.h5")))

    def test_bad_command_line_reported_once_exit_2(self):
        p = mpirun(3, "sharp-bounds", "--theta", "-1", "--out", self.path("b.h5"))
        self.assertNotEqual(p.returncode, 0)
        self.assertEqual(p.stderr.count("sharp-bounds: error:"), 1, p.stderr)
        self.assertIn("Exit code:    2", p.stderr)
        self.assertEqual(os.listdir(self.dir), [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
