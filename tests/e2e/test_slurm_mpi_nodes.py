"""An MPI job across two nodes of a local cluster of three slurmd (runners/slurm/local-cluster.sh
--nodes 3, one CPU each, so `sharp-submit --ntasks 2` is `srun --mpi=pmix -n 2` over 2 nodes):
its merged file equals a local run bit for bit; and a job whose second node dies midway (its slurmd,
slurmstepd and rank SIGKILLed while the last point stalls, SHARP_INJECT_STALL) ends when Slurm marks
the node down, and `sharp-submit --resubmit-missing` runs it again on the two nodes left, which
resumes from the finished points to the same bits. About a minute; the daemons are stopped by pid
also when a test fails.
ctest runs it with SHARP_BIN_DIR and SHARP_SOURCE_DIR set; standalone (as root):
    SHARP_BIN_DIR=build/bin /usr/bin/python3 tests/e2e/test_slurm_mpi_nodes.py
"""
import os
import re
import sys
import unittest

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import finished_parts, last_point_id  # noqa: E402
import slurm_support  # noqa: E402
from slurm_support import SchedulerCase, mpi_in_binaries  # noqa: E402


def setUpModule():
    if not mpi_in_binaries():
        raise unittest.SkipTest("the experiment binaries are not MPI programs (no MPI_Init symbol in sharp-bounds)")
    slurm_support.start_cluster(nodes=3)


def tearDownModule():
    slurm_support.stop_cluster()


class MpiAcrossNodes(SchedulerCase):
    # 12 dispersion points (docs/science.md#dispersion-lemma) of equal cost: dealt in grid order.
    GRID = ["--n", "2^16", "--spread", ",".join(str(s) for s in range(1, 13)), "--trials", "1"]

    def submit_mpi(self, out, env=None):
        p = self.submit("--ntasks", "2", "--cpus-per-task", "1", "--", "sharp-bounds", *self.GRID, "--out", out,
                        env=env)
        ids = self.job_ids(p.stdout)
        self.assertEqual(set(ids), {"mpi"}, p.stdout)
        return ids["mpi"]

    def assert_two_rank_result(self, job, out, ref):
        self.assertEqual(self.job_state(job), ("COMPLETED", 0), self.logs_text())
        self.assertEqual(len(self.job_nodes(job)), 2, "one rank on each of two nodes")
        self.assertSameData(ref, out)
        with h5py.File(out, "r") as f:
            self.assertEqual(int(f.attrs["mpi_size"]), 2)

    def test_a_job_across_two_nodes_equals_a_local_run(self):
        out = self.path("mpi.h5")
        job = self.submit_mpi(out)
        self.wait_for_jobs([job])
        self.assert_two_rank_result(job, out, self.reference(self.GRID))

    def test_a_job_whose_node_dies_resumes_to_the_same_bits(self):
        out = self.path("killed.h5")
        job = self.submit_mpi(out, env={"SHARP_INJECT_STALL": last_point_id("sharp-bounds", *self.GRID)})
        points = len(self.GRID[3].split(","))
        self.wait_until(f"{points - 1} of {points} points finished",
                        lambda: len(finished_parts(out + ".parts")) >= points - 1)
        nodes = self.job_nodes(job)
        self.assertEqual(len(nodes), 2, nodes)
        batch_host = re.search(r"BatchHost=(\S+)", self.slurm("scontrol", "show", "job", job)).group(1)
        victim = next(n for n in nodes if n != batch_host)  # rank 1's node: the job loses a rank
        self.mark(f"{points - 1} points done; MPI job {job} on {nodes}")
        slurm_support.CLUSTER.kill_node(victim)
        self.mark(f"killed {victim} (rank 1's node)")
        self.wait_until(f"sinfo shows {victim} down", lambda: self.node_state(victim).startswith("down"))
        self.mark(f"sinfo: {victim} down")
        self.wait_for_jobs([job])
        self.assertEqual(self.job_state(job)[0], "NODE_FAIL")
        self.assertFalse(os.path.exists(out))
        self.mark(f"job {job} left the queue (NODE_FAIL)")

        p = self.submit("--resubmit-missing", "--", "sharp-bounds", *self.GRID, "--out", out)
        again = self.job_ids(p.stdout)["mpi"]
        self.mark(f"resubmitted: MPI job {again}")
        self.wait_for_jobs([again])
        self.mark(f"job {again} done")
        self.assertNotIn(victim, self.job_nodes(again))
        self.assert_two_rank_result(again, out, self.reference(self.GRID))
        with open(os.path.join(out + ".slurm", "logs", f"mpi-{again}.out")) as f:
            self.assertIn(f"1 run now, {points - 1} resumed", f.read())
        self.print_timeline("MPI node-loss timeline")


if __name__ == "__main__":
    unittest.main(verbosity=2)
