"""sharp-submit on a real scheduler: runners/slurm/local-cluster.sh starts munged, slurmctld and
slurmd under a temporary state directory; a dispersion sweep goes through a 4-task array plus merge
job and through a 2-rank MPI job (srun --mpi=pmix), and both merged files must equal a local run; an
array cancelled halfway is completed by --resubmit-missing, which submits only the shards whose
points are incomplete. The cluster is stopped and every daemon pid checked dead also when a test
fails (tearDownModule, atexit, SIGTERM). Each wait is bounded; the whole file takes about a minute.
ctest runs it with SHARP_BIN_DIR and SHARP_SOURCE_DIR set; standalone (as root):
    SHARP_BIN_DIR=build/bin /usr/bin/python3 tests/e2e/test_slurm_cluster.py
"""
import json
import os
import socket
import sys
import time
import unittest

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import finished_parts, last_point_id, run  # noqa: E402
import slurm_support  # noqa: E402
from slurm_support import JOB_TIMEOUT, SchedulerCase, mpi_in_binaries  # noqa: E402


def setUpModule():
    slurm_support.start_cluster(nodes=1)


def tearDownModule():
    slurm_support.stop_cluster()


class OnTheScheduler(SchedulerCase):
    # A dispersion sweep (docs/science.md#dispersion-lemma): 13 sizes x 2 temperatures x 2 logit laws = 52 points.
    GRID = ["--n", "2^4..2^16", "--theta", "0.5,1", "--logits", "uniform,gaussian", "--trials", "2"]

    def test_cluster_is_up_on_this_host(self):
        p = slurm_support.CLUSTER.script("status", timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        host = socket.gethostname().split(".")[0]
        for daemon in ("munged", "slurmctld", f"slurmd {host}"):
            self.assertIn(f"{daemon}: running", p.stdout)
        self.assertEqual(self.slurm("sinfo", "-h", "-N", "-o", "%N").split(), [host])

    def test_array_and_merge_job_equal_a_local_run(self):
        ref = self.reference(self.GRID)
        out = self.path("array.h5")
        p = self.submit("--array", "4", "--", "sharp-bounds", *self.GRID, "--out", "array.h5")
        ids = self.job_ids(p.stdout)
        self.assertEqual(set(ids), {"array", "merge"}, p.stdout)
        self.assertIn(f"squeue -j {ids['array']},{ids['merge']}", p.stdout)
        self.wait_for_jobs(ids.values())
        self.assertEqual(self.job_state(ids["merge"]), ("COMPLETED", 0), self.logs_text())
        self.assertSameData(ref, out)
        self.assertFalse(os.path.exists(out + ".parts"))
        logs = sorted(os.listdir(out + ".slurm/logs"))
        self.assertEqual(logs, [f"array-{ids['array']}_{i}.out" for i in range(4)] + [f"merge-{ids['merge']}.out"])
        for i in range(4):
            with open(os.path.join(out + ".slurm/logs", f"array-{ids['array']}_{i}.out")) as f:
                self.assertIn(f"shard {i}/4 done", f.read())

    @unittest.skipUnless(mpi_in_binaries(), "the experiment binaries are not MPI programs yet (no MPI_Init "
                         "symbol in sharp-bounds): the MPI-mode submission cannot run")
    def test_mpi_job_equals_a_local_run(self):
        ref = self.reference(self.GRID)
        out = self.path("mpi.h5")
        p = self.submit("--ntasks", "2", "--cpus-per-task", "1", "--", "sharp-bounds", *self.GRID, "--out", out)
        ids = self.job_ids(p.stdout)
        self.assertEqual(set(ids), {"mpi"}, p.stdout)
        self.wait_for_jobs(ids.values())
        self.assertEqual(self.job_state(ids["mpi"]), ("COMPLETED", 0), self.logs_text())
        self.assertSameData(ref, out)
        with h5py.File(out, "r") as f:
            self.assertEqual(int(f.attrs["mpi_size"]), 2)

    def test_cancel_halfway_then_resubmit_missing(self):
        # 16 points, 4 per shard, one array task at a time (%1); the last point of the last shard
        # stalls (SHARP_INJECT_STALL) until the cancel, so whatever the machine's speed three shards
        # are complete and one is not.
        grid = ["--n", "2^16", "--spread", ",".join(str(s) for s in range(1, 17)), "--trials", "1"]
        out = self.path("cancelled.h5")
        victim = last_point_id("sharp-bounds", *grid, "--shard", "3/4")
        p = self.submit("--array", "4%1", "--", "sharp-bounds", *grid, "--out", out,
                        env={"SHARP_INJECT_STALL": victim})
        ids = self.job_ids(p.stdout)
        deadline = time.time() + JOB_TIMEOUT
        while time.time() < deadline and len(finished_parts(out + ".parts")) < 15:
            time.sleep(0.05)
        self.slurm("scancel", ids["array"])
        self.wait_for_jobs(ids.values())
        self.assertFalse(os.path.exists(out))
        # The merge job ran after the cancelled array (afterany), found points missing, said how to go on.
        self.assertEqual(self.job_state(ids["merge"]), ("FAILED", 3))
        with open(os.path.join(out + ".slurm/logs", f"merge-{ids['merge']}.out")) as f:
            merge_log = f.read()
        self.assertIn("points are missing", merge_log)
        self.assertIn("--resubmit-missing", merge_log)
        incomplete = [i for i in range(4)
                      if run("sharp-bounds", *grid, "--out", out, "--status", "--shard", f"{i}/4").returncode == 3]
        self.assertEqual(incomplete, [3], "the stalled shard, and only it, is incomplete")

        p = self.submit("--resubmit-missing", "--", "sharp-bounds", *grid, "--out", out)
        again = self.job_ids(p.stdout)
        self.assertEqual(set(again), {"array", "merge"}, p.stdout)
        with open(out + ".slurm/submissions.json") as f:
            self.assertEqual(json.load(f)[-1]["array"]["tasks"], incomplete)
        self.wait_for_jobs(again.values())
        self.assertEqual(self.job_state(again["merge"]), ("COMPLETED", 0), self.logs_text())
        logs = os.listdir(out + ".slurm/logs")
        self.assertEqual(sorted(n for n in logs if n.startswith(f"array-{again['array']}_")),
                         sorted(f"array-{again['array']}_{i}.out" for i in incomplete))
        self.assertSameData(self.reference(grid), out)
        p = self.submit("--resubmit-missing", "--", "sharp-bounds", *grid, "--out", out)
        self.assertIn("nothing to submit", p.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
