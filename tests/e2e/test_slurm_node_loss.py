"""A node lost in the middle of an array sweep, on a local cluster of three slurmd
(runners/slurm/local-cluster.sh --nodes 3): each array task runs on its own node; the last point of
one shard stalls (SHARP_INJECT_STALL) so that, on any machine speed, that shard is caught midway;
then its node dies -- slurmd, slurmstepd and the task's process SIGKILLed (local-cluster.sh
kill-node). The test waits until sinfo shows the node down (SlurmdTimeout = 10 s) and squeue no
longer lists its task (NODE_FAIL, not requeued: JobRequeue = 0); the merge job then finds the
shard's points missing (exit 3), `sharp-submit --resubmit-missing` runs that shard alone on a node
that is still up, and the merged file equals a local run bit for bit. The timeline (kill, node
down, resubmission, completion) is printed. About a minute; the daemons are stopped by pid also
when the test fails.
ctest runs it with SHARP_BIN_DIR and SHARP_SOURCE_DIR set; standalone (as root):
    SHARP_BIN_DIR=build/bin /usr/bin/python3 tests/e2e/test_slurm_node_loss.py
"""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import finished_parts, last_point_id, run  # noqa: E402
import slurm_support  # noqa: E402
from slurm_support import SchedulerCase  # noqa: E402

NODES = 3


def setUpModule():
    slurm_support.start_cluster(nodes=NODES)


def tearDownModule():
    slurm_support.stop_cluster()


def processes_with(*words):
    """Pids of processes whose command line contains every word (a test's own paths)."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().decode(errors="replace").replace("\0", " ")
        except OSError:
            continue
        if int(pid) != os.getpid() and all(w in cmd for w in words):
            pids.append(int(pid))
    return pids


class NodeLoss(SchedulerCase):
    # 12 dispersion points (docs/science.md#dispersion-lemma), 4 per shard.
    GRID = ["--n", "2^16", "--spread", ",".join(str(s) for s in range(1, 13)), "--trials", "1"]
    VICTIM_SHARD = 1

    def test_array_sweep_survives_a_node_killed_midway(self):
        out = self.path("swept.h5")
        shard = f"{self.VICTIM_SHARD}/{NODES}"
        stall = last_point_id("sharp-bounds", *self.GRID, "--shard", shard)
        p = self.submit("--array", str(NODES), "--", "sharp-bounds", *self.GRID, "--out", out,
                        env={"SHARP_INJECT_STALL": stall})
        ids = self.job_ids(p.stdout)
        self.assertEqual(set(ids), {"array", "merge"}, p.stdout)
        self.mark(f"submitted array job {ids['array']} ({NODES} tasks) and merge job {ids['merge']}")

        # Every point but the stalled one finished: the victim's task is midway.
        points = len(self.GRID[3].split(","))
        self.wait_until(f"{points - 1} of {points} points finished",
                        lambda: len(finished_parts(out + ".parts")) >= points - 1)
        task = f"{ids['array']}_{self.VICTIM_SHARD}"
        nodes_of_tasks = {i: self.job_nodes(f"{ids['array']}_{i}") for i in range(NODES)}
        self.assertEqual(sorted(n for ns in nodes_of_tasks.values() for n in ns),
                         [f"node{k}" for k in range(1, NODES + 1)], "each array task on its own node")
        victim = nodes_of_tasks[self.VICTIM_SHARD][0]
        stalled = processes_with(out, "--shard", f'{self.VICTIM_SHARD}/{NODES}')
        self.assertEqual(len(stalled), 1, f"the stalled shard's process: {stalled}")
        self.mark(f"{points - 1} points done; shard {shard} stalled on {victim}")

        killed = slurm_support.CLUSTER.kill_node(victim)
        self.mark(f"killed {victim}: {killed.strip()}")
        self.assertFalse(slurm_support.alive(stalled[0]), "the task's process died with its node")

        self.wait_until(f"sinfo shows {victim} down", lambda: self.node_state(victim).startswith("down"))
        self.mark(f"sinfo: {victim} {self.node_state(victim)}")
        self.wait_until(f"squeue no longer lists task {task}",
                        lambda: str(self.VICTIM_SHARD) not in
                        self.slurm("squeue", "-h", "-r", "-j", ids["array"], "-o", "%K").split())
        self.assertEqual(self.job_state(task)[0], "NODE_FAIL")
        self.mark(f"squeue: task {task} gone ({self.job_state(task)[0]})")

        # The merge job (afterany) ran on a node still up and found the shard's points missing.
        self.wait_for_jobs([ids["array"], ids["merge"]])
        self.assertEqual(self.job_state(ids["merge"]), ("FAILED", 3), self.logs_text())
        self.assertFalse(os.path.exists(out))
        incomplete = [i for i in range(NODES)
                      if run("sharp-bounds", *self.GRID, "--out", out, "--status", "--shard", f"{i}/{NODES}")
                      .returncode == 3]
        self.assertEqual(incomplete, [self.VICTIM_SHARD], "the killed shard, and only it, is incomplete")
        self.mark(f"merge job {ids['merge']} exited 3: shard {shard} incomplete")

        p = self.submit("--resubmit-missing", "--", "sharp-bounds", *self.GRID, "--out", out)
        again = self.job_ids(p.stdout)
        self.assertEqual(set(again), {"array", "merge"}, p.stdout)
        with open(out + ".slurm/submissions.json") as f:
            self.assertEqual(json.load(f)[-1]["array"]["tasks"], [self.VICTIM_SHARD])
        self.mark(f"resubmitted: array job {again['array']} (task {self.VICTIM_SHARD}), merge job {again['merge']}")
        self.wait_for_jobs(again.values())
        self.assertEqual(self.job_state(again["merge"]), ("COMPLETED", 0), self.logs_text())
        rerun_on = self.job_nodes(f"{again['array']}_{self.VICTIM_SHARD}")
        self.assertNotIn(victim, rerun_on)
        self.mark(f"merged: shard {shard} rerun on {rerun_on[0]}")

        self.assertSameData(self.reference(self.GRID), out)
        self.assertFalse(os.path.exists(out + ".parts"))
        p = self.submit("--resubmit-missing", "--", "sharp-bounds", *self.GRID, "--out", out)
        self.assertIn("nothing to submit", p.stdout)
        self.mark("bit-identical to a local run")
        self.print_timeline("node-loss timeline")


class KillNodeInput(SchedulerCase):
    def test_kill_node_names_a_node_of_this_cluster(self):
        for args in (["kill-node", "node9"], ["kill-node"], ["kill-node", "node1", "node2"], ["--nodes", "0", "start"],
                     ["--nodes", "2", "status"]):
            with self.subTest(args=args):
                p = slurm_support.CLUSTER.script(*args, timeout=60)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        p = slurm_support.CLUSTER.script("status", timeout=60)
        for k in range(1, NODES + 1):
            self.assertIn(f"slurmd node{k}: running", p.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
