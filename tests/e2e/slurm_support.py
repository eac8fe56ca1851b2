"""The scheduler tests' one harness: a cluster of runners/slurm/local-cluster.sh (one node, or N
slurmd on this machine) under a temporary directory, started once per test file and stopped -- every
daemon's pid checked dead -- also when a test fails (tearDownModule, atexit, SIGTERM from ctest's
timeout); sharp-submit and the Slurm clients pointed at it; bounded waits on jobs and nodes.

A test file uses it as
    def setUpModule(): start_cluster(nodes=3)
    def tearDownModule(): stop_cluster()
    class MyTest(SchedulerCase): ...
"""
import atexit
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import BIN, ResultDirCase, run  # noqa: E402

SOURCE = os.environ.get("SHARP_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
SUBMIT = os.path.join(SOURCE, "runners", "sharp-submit")
CLUSTER_SCRIPT = os.path.join(SOURCE, "runners", "slurm", "local-cluster.sh")
DAEMONS = ["/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd"]
JOB_TIMEOUT = 120  # seconds for any submission to leave the queue
# OpenMPI refuses to start as root without both (the tests run as root, like the cluster).
MPI_AS_ROOT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def why_no_cluster():
    missing = [d for d in DAEMONS if not os.access(d, os.X_OK)]
    if missing:
        return f"Slurm/munge not installed ({', '.join(missing)} missing; make deps installs slurm-wlm and munge)"
    if os.geteuid() != 0:
        return "the local Slurm cluster runs as root (munged as the munge user, jobs as their owner)"
    return None


def mpi_in_binaries():
    """True once the experiment binaries are MPI programs (MPI_Init linked in)."""
    try:
        out = subprocess.run(["nm", "-C", os.path.join(BIN, "sharp-bounds")], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "MPI_Init" in out


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


class LocalCluster:
    """runners/slurm/local-cluster.sh under a temporary state directory, stopped exactly once."""

    def __init__(self, nodes):
        self.nodes = nodes
        self.tmp = tempfile.mkdtemp(prefix="sharp-slurm-")
        os.chmod(self.tmp, 0o755)  # munged (the munge user) must reach its socket directory
        self.dir = os.path.join(self.tmp, "cluster")
        self.env = dict(os.environ, SLURM_CONF=os.path.join(self.dir, "slurm.conf"),
                        PATH=BIN + os.pathsep + os.environ.get("PATH", ""), **MPI_AS_ROOT)
        self.pids = {}  # every daemon pid ever seen: "slurmd-node2" -> pid
        self.stopped = False

    def script(self, *args, timeout):
        return subprocess.run(["bash", CLUSTER_SCRIPT, "--dir", self.dir, *args], env=self.env,
                              capture_output=True, text=True, timeout=timeout)

    def record_pids(self):
        files = [os.path.join(self.dir, "munge", "munged.pid"), os.path.join(self.dir, "run", "slurmctld.pid"),
                 *glob.glob(os.path.join(self.dir, "run", "slurmd-*.pid"))]
        for path in files:
            try:
                with open(path) as f:
                    self.pids[os.path.basename(path)[:-4]] = int(f.read().strip())
            except (OSError, ValueError):
                pass

    def start(self):
        try:
            p = self.script(*(["--nodes", str(self.nodes)] if self.nodes > 1 else []), "start", timeout=120)
        finally:
            self.record_pids()  # whatever started, so that stop() can check it is gone
        if p.returncode != 0:
            raise RuntimeError(f"local-cluster.sh start failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
        return p

    def kill_node(self, node):
        self.record_pids()
        p = self.script("kill-node", node, timeout=60)
        if p.returncode != 0:
            raise AssertionError(f"local-cluster.sh kill-node {node} failed: {p.stdout}{p.stderr}")
        return p.stdout

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


CLUSTER = None


def stop_cluster_once():
    return CLUSTER.stop() if CLUSTER else []


def on_sigterm(*_):
    """ctest's timeout (or a developer's kill): stop the daemons before dying."""
    stop_cluster_once()
    os._exit(143)


def start_cluster(nodes=1):
    """For setUpModule: skips the file without root or Slurm; a failed start leaves no daemon."""
    global CLUSTER
    reason = why_no_cluster()
    if reason:
        raise unittest.SkipTest(reason)
    CLUSTER = LocalCluster(nodes)
    atexit.register(stop_cluster_once)  # also on an exception that escapes unittest
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        CLUSTER.start()
    except BaseException:
        stop_cluster_once()
        raise
    return CLUSTER


def stop_cluster():
    """For tearDownModule: fails when a daemon survived local-cluster.sh stop."""
    survivors = stop_cluster_once()
    if survivors:
        raise AssertionError("daemons survived local-cluster.sh stop (killed now): " + ", ".join(survivors))


class SchedulerCase(ResultDirCase):
    """A test on the module's cluster: sharp-submit, the Slurm clients, bounded waits, and a timeline
    of what happened when (mark, then print_timeline)."""

    def setUp(self):
        super().setUp()
        self.started, self.timeline = time.time(), []

    def mark(self, what):
        self.timeline.append((time.time() - self.started, what))

    def print_timeline(self, title):
        sys.stderr.write(f"\n{title} (seconds since the test began):\n" +
                         "".join(f"  {t:6.1f}  {what}\n" for t, what in self.timeline))

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

    @staticmethod
    def job_ids(stdout):
        ids = {}
        for label, pattern in [("array", r"array job (\d+):"), ("merge", r"merge job (\d+)"),
                               ("mpi", r"MPI job (\d+):")]:
            m = re.search(pattern, stdout)
            if m:
                ids[label] = m.group(1)
        return ids

    def wait_until(self, what, condition, timeout=JOB_TIMEOUT):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if condition():
                return
            time.sleep(0.5)
        self.fail(f"{what}: not after {timeout} s\n" + self.slurm("sinfo", "-N") + self.slurm("squeue") +
                  self.logs_text())

    def wait_for_jobs(self, ids, timeout=JOB_TIMEOUT):
        """Until none of these jobs (array jobs by their id) is pending, running or completing."""
        self.wait_until(f"jobs {list(ids)} leave the queue",
                        lambda: not set(self.slurm("squeue", "-h", "-o", "%F").split()) & set(ids), timeout)

    def job_state(self, job_id):
        text = self.slurm("scontrol", "show", "job", job_id)
        state = re.search(r"JobState=(\S+)", text).group(1)
        code = re.search(r"\bExitCode=(\d+):", text).group(1)
        return state, int(code)

    def job_nodes(self, job_id):
        """The nodes of a job (or an array task, "J_I"), expanded: ["node1", "node2"]."""
        text = self.slurm("scontrol", "show", "job", job_id)
        nodes = re.search(r"\n\s*NodeList=(\S+)", text).group(1)
        return self.slurm("scontrol", "show", "hostnames", nodes).split()

    def node_state(self, node):
        return self.slurm("sinfo", "-h", "-N", "-n", node, "-o", "%T").strip()

    def logs_text(self):
        text = ""
        for root, _, files in os.walk(self.dir):
            for name in sorted(files):
                if name.endswith(".out"):
                    with open(os.path.join(root, name), errors="replace") as f:
                        text += f"\n--- {name}\n" + f.read()[-2000:]
        return text

    def reference(self, grid, name="local.h5"):
        """The same grid run here, in one process: what every scheduled run must equal bit for bit."""
        ref = self.path(name)
        run("sharp-bounds", *grid, "--out", ref, "--threads", "1", "--quiet", check=0)
        return ref
