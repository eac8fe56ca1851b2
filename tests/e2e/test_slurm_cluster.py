"""sharp-submit on a real scheduler: runners/slurm/local-cluster.sh starts munged, slurmctld and
slurmd under a temporary state directory; a dispersion sweep goes through a 4-task array plus merge
job and through a 2-rank MPI job (srun --mpi=pmix), and both merged files must equal a local run; an
array cancelled halfway is completed by --resubmit-missing, which submits only the shards whose
points are incomplete. The cluster is stopped and every daemon pid checked dead also when a test
fails (tearDownModule, atexit, SIGTERM). Each wait is bounded; the whole file takes about a minute.
ctest runs it with SHARP_BIN_DIR and SHARP_SOURCE_DIR set; standalone (as root):
    SHARP_BIN_DIR=build/bin /usr/bin/python3 tests/e2e/test_slurm_cluster.py
"""
import atexit
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import BIN, ResultDirCase, finished_parts, last_point_id, run  # noqa: E402

SOURCE = os.environ.get("SHARP_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
SUBMIT = os.path.join(SOURCE, "runners", "sharp-submit")
CLUSTER_SCRIPT = os.path.join(SOURCE, "runners", "slurm", "local-cluster.sh")
DAEMONS = ["/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd"]
JOB_TIMEOUT = 120  # seconds for any submission to leave the queue


def mpi_in_binaries():
    """True once the experiment binaries are MPI programs (MPI_Init linked in)."""
    try:
        out = subprocess.run(["nm", "-C", os.path.join(BIN, "sharp-bounds")], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "MPI_Init" in out


def why_no_cluster():
    missing = [d for d in DAEMONS if not os.access(d, os.X_OK)]
    if missing:
        return f"Slurm/munge not installed ({', '.join(missing)} missing; make deps installs slurm-wlm and munge)"
    if os.geteuid() != 0:
        return "the local Slurm cluster runs as root (munged as the munge user, jobs as their owner)"
    return None


class LocalCluster:
    """runners/slurm/local-cluster.sh under a temporary state directory, stopped exactly once."""

    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="sharp-slurm-")
        os.chmod(self.tmp, 0o755)  # munged (the munge user) must reach its socket directory
        self.dir = os.path.join(self.tmp, "cluster")
        self.env = dict(os.environ, SLURM_CONF=os.path.join(self.dir, "slurm.conf"),
                        PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
        self.pids = {}
        self.stopped = False

    def script(self, action, timeout):
        return subprocess.run(["bash", CLUSTER_SCRIPT, "--dir", self.dir, action], env=self.env,
                              capture_output=True, text=True, timeout=timeout)

    def pid_files(self):
        return {"munged": os.path.join(self.dir, "munge", "munged.pid"),
                "slurmctld": os.path.join(self.dir, "run", "slurmctld.pid"),
                "slurmd": os.path.join(self.dir, "run", "slurmd.pid")}

    def record_pids(self):
        for name, path in self.pid_files().items():
            if os.path.exists(path):
                with open(path) as f:
                    self.pids[name] = int(f.read().strip())

    def start(self):
        try:
            p = self.script("start", timeout=120)
        finally:
            self.record_pids()  # whatever started, so that stop() can check it is gone
        if p.returncode != 0:
            raise RuntimeError(f"local-cluster.sh start failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
        return p

    def stop(self):
        """Stops the cluster; returns the daemons still alive afterwards (killed by pid, SIGKILL)."""
        if self.stopped:
            return []
        self.stopped = True
        self.record_pids()
        try:
            self.script("stop", timeout=90)
        except subprocess.TimeoutExpired:
            pass
        survivors = []
        deadline = time.time() + 10
        for name, pid in self.pids.items():
            while alive(pid) and time.time() < deadline:
                time.sleep(0.1)
            if alive(pid):
                survivors.append(f"{name} (pid {pid})")
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if not survivors:
            shutil.rmtree(self.tmp, ignore_errors=True)
        return survivors


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


CLUSTER = None


def stop_cluster_once():
    return CLUSTER.stop() if CLUSTER else []


def on_sigterm(*_):
    """ctest's timeout (or a developer's kill): stop the daemons before dying."""
    stop_cluster_once()
    os._exit(143)


def setUpModule():
    global CLUSTER
    reason = why_no_cluster()
    if reason:
        raise unittest.SkipTest(reason)
    CLUSTER = LocalCluster()
    atexit.register(stop_cluster_once)  # also on an exception that escapes unittest
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        CLUSTER.start()
    except BaseException:
        stop_cluster_once()
        raise


def tearDownModule():
    survivors = stop_cluster_once()
    if survivors:
        raise AssertionError("daemons survived local-cluster.sh stop (killed now): " + ", ".join(survivors))


class OnTheScheduler(ResultDirCase):
    # A dispersion sweep (docs/science.md#dispersion-lemma): 13 sizes x 2 temperatures x 2 logit laws = 52 points.
    GRID = ["--n", "2^4..2^16", "--theta", "0.5,1", "--logits", "uniform,gaussian", "--trials", "2"]

    def submit(self, *args, check=0, env=None):
        p = subprocess.run([SUBMIT, *args], cwd=self.dir, env=dict(CLUSTER.env, **(env or {})), capture_output=True,
                           text=True, timeout=300)
        if check is not None and p.returncode != check:
            raise AssertionError(f"sharp-submit {' '.join(args)} exited {p.returncode}, expected {check}\n"
                                 f"stdout: {p.stdout}\nstderr: {p.stderr}")
        return p

    def slurm(self, *cmd):
        p = subprocess.run(list(cmd), env=CLUSTER.env, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, f"{' '.join(cmd)}: {p.stderr}")
        return p.stdout

    def job_ids(self, stdout):
        ids = {}
        for label, pattern in [("array", r"array job (\d+):"), ("merge", r"merge job (\d+)"),
                               ("mpi", r"MPI job (\d+):")]:
            m = re.search(pattern, stdout)
            if m:
                ids[label] = m.group(1)
        return ids

    def wait_for_jobs(self, ids, timeout=JOB_TIMEOUT):
        """Until none of these jobs (array jobs by their id) is pending, running or completing."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            queued = set(self.slurm("squeue", "-h", "-o", "%F").split())
            if not queued & set(ids):
                return
            time.sleep(0.5)
        self.fail(f"jobs {ids} still queued after {timeout} s:\n" + self.slurm("squeue") + self.logs_text())

    def job_state(self, job_id):
        text = self.slurm("scontrol", "show", "job", job_id)
        state = re.search(r"JobState=(\S+)", text).group(1)
        code = re.search(r"\bExitCode=(\d+):", text).group(1)
        return state, int(code)

    def logs_text(self):
        text = ""
        for root, _, files in os.walk(self.dir):
            for name in sorted(files):
                if name.endswith(".out"):
                    with open(os.path.join(root, name), errors="replace") as f:
                        text += f"\n--- {name}\n" + f.read()[-2000:]
        return text

    def reference(self, grid):
        ref = self.path("local.h5")
        run("sharp-bounds", *grid, "--out", ref, "--threads", "1", "--quiet", check=0)
        return ref

    def test_cluster_is_up_on_this_host(self):
        p = CLUSTER.script("status", timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        for daemon in ("munged", "slurmctld", "slurmd"):
            self.assertIn(f"{daemon}: running", p.stdout)
        nodes = self.slurm("sinfo", "-h", "-N", "-o", "%N").split()
        self.assertEqual(nodes, [socket.gethostname().split(".")[0]])

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
