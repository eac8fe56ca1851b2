"""Interrupts (docs/architecture.md#interrupts): SIGINT or SIGTERM stops a run cleanly with
"interrupted: K of N points done, rerun the same command to resume" and exit 3, never merges, and the
rerun completes with the data of an uninterrupted run; a training point saves its checkpoint and stops
at once; under MPI every rank stops."""
import os
import re
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faults_support import BIN, ResultDirCase, finished_parts, last_point_id, run, stalled, wait_for_parts  # noqa: E402

GRID = ["--n", "2^16", "--spread", ",".join(str(s) for s in range(1, 31)), "--trials", "2", "--threads", "1"]


def last_point_of_grid():
    """The point of GRID that runs last, held still until the signal (tests/e2e/e2e_support.py)."""
    return last_point_id("sharp-bounds", *GRID)


MESSAGE = re.compile(r"interrupted: (\d+) of (\d+) points done, rerun the same command to resume")
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")


class Interrupts(ResultDirCase):
    def interrupt_halfway(self, sig, out):
        parts = out + ".parts"
        # The last point stalls until the signal (SHARP_INJECT_STALL): midway on any machine.
        proc = subprocess.Popen([os.path.join(BIN, "sharp-bounds"), *GRID, "--out", out, "--quiet"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=stalled(last_point_of_grid()))
        wait_for_parts(parts, 29)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
        return proc.returncode, err

    def check_stopped(self, status, err, out, total):
        self.assertEqual(status, 3, err)
        m = MESSAGE.search(err)
        self.assertIsNotNone(m, err)
        self.assertEqual(int(m.group(2)), total)
        self.assertEqual(int(m.group(1)), len(finished_parts(out + ".parts")))
        self.assertLess(int(m.group(1)), total, "finished before the signal; grow the grid")
        self.assertFalse(os.path.exists(out), "an interrupted run must not merge")

    def test_sigint_and_sigterm_then_rerun(self):
        ref = self.path("ref.h5")
        run("sharp-bounds", *GRID, "--out", ref, "--quiet", check=0)
        for sig in (signal.SIGINT, signal.SIGTERM):
            with self.subTest(signal=sig.name):
                out = self.path(sig.name + ".h5")
                status, err = self.interrupt_halfway(sig, out)
                self.check_stopped(status, err, out, 30)
                self.assertFalse(os.path.exists(out + ".lock"))
                p = run("sharp-bounds", *GRID, "--out", out, check=0)
                self.assertIn("resumed", p.stdout)
                self.assertSameData(ref, out)

    def test_a_training_saves_its_checkpoint_and_stops(self):
        out = self.path("t.h5")
        grid = ["--width", "32", "--batch", "64", "--eval-samples", "256", "--steps", "200000", "--threads", "1"]
        proc = subprocess.Popen([os.path.join(BIN, "sharp-train-max"), *grid, "--out", out, "--quiet"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        proc.send_signal(signal.SIGTERM)
        t0 = time.time()
        _, err = proc.communicate(timeout=60)
        self.assertLess(time.time() - t0, 30, "the point did not stop at its next checkpoint")
        self.assertEqual(proc.returncode, 3, err)
        self.assertIsNotNone(re.search(r"interrupted: 0 of 1 points done", err), err)
        ckpts = [f for f in os.listdir(out + ".parts") if f.endswith(".ckpt.h5")]
        self.assertEqual(len(ckpts), 1, os.listdir(out + ".parts"))

    def test_under_mpi_every_rank_stops(self):
        # Slurm's scancel and srun signal every task; a signal to one rank alone must stop all of them
        # too, at once: whichever rank holds the stalled point, the other one is signalled in one case.
        for which in ("first rank", "second rank", "every rank"):
            with self.subTest(signalled=which):
                out = self.path(which.replace(" ", "-") + ".h5")
                proc = subprocess.Popen(["mpirun", "-np", "2", "--oversubscribe", "-x", "SHARP_INJECT_STALL",
                                         os.path.join(BIN, "sharp-bounds"), *GRID, "--out", out, "--quiet"],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env=stalled(last_point_of_grid(), base=MPI_ENV))
                try:
                    wait_for_parts(out + ".parts", 29)
                    ranks = [int(x) for x in subprocess.run(["pgrep", "-f", "^[^ ]*/sharp-bounds .*" + out],
                                                             capture_output=True, text=True).stdout.split()]
                    self.assertEqual(len(ranks), 2, ranks)
                    for pid in {"first rank": ranks[:1], "second rank": ranks[1:]}.get(which, ranks):
                        os.kill(pid, signal.SIGTERM)
                    _, err = proc.communicate(timeout=120)
                finally:
                    if proc.poll() is None:
                        proc.kill()
                        proc.communicate()
                self.assertEqual(proc.returncode, 3, err)
                m = MESSAGE.search(err)
                self.assertIsNotNone(m, err)
                self.assertEqual(int(m.group(1)), len(finished_parts(out + ".parts")))
                self.assertFalse(os.path.exists(out))
                p = run("sharp-bounds", *GRID, "--out", out, "--quiet")
                self.assertEqual(p.returncode, 0, p.stderr)

if __name__ == "__main__":
    unittest.main(verbosity=2)
