"""The end-to-end tests' one harness: where the binaries are (BIN), running one (run), a test case with
temporary directories for its result files (ResultDirCase: one per test, one per class for
fixtures made once), comparing result data, and waiting for a run to be partly done."""
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from h5compare import data_differences  # noqa: E402

BIN = os.environ.get("SHARP_BIN_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../build/bin"))


def run(binary, *args, check=None, env=None, timeout=600, input=None):
    """Runs build/bin/<binary> (stdin: `input`, text); with check=N, fails unless it exits with N."""
    p = subprocess.run([os.path.join(BIN, binary), *args], capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, **(env or {})), input=input)
    if check is not None and p.returncode != check:
        raise AssertionError(f"{binary} {' '.join(args)} exited {p.returncode}, expected {check}\n"
                             f"stdout: {p.stdout}\nstderr: {p.stderr}")
    return p


def finished_parts(parts_dir):
    if not os.path.isdir(parts_dir):
        return []
    return [f for f in os.listdir(parts_dir) if f.endswith(".h5") and ".tmp." not in f and ".ckpt." not in f]


def dry_run_points(binary, *grid):
    """(id, estimated cost) of every point of a grid, in grid order, from --dry-run."""
    lines = run(binary, *grid, "--dry-run", check=0).stdout.splitlines()[1:]
    return [(line.split()[1], float(line.split()[3])) for line in lines if line.strip()]


def last_point_id(binary, *grid):
    """The id of the point a run starts last (runs go most expensive first, ties in grid order): the
    one to stall with SHARP_INJECT_STALL, so that every other point can finish before the kill."""
    points = dry_run_points(binary, *grid)
    order = sorted(range(len(points)), key=lambda i: -points[i][1])  # stable, as the runner's
    return points[order[-1]][0]


def stalled(point_id, stage="", base=None):
    """The environment (`base`, default os.environ, plus the hook) that holds `point_id` still
    (runners/fault_injection.hpp): before it starts, or with stage "checkpoint" after its first
    checkpoint. A run so held can only end by a signal, so a test that kills it "midway" does not
    depend on the machine's speed. Under mpirun, also pass `-x SHARP_INJECT_STALL`."""
    return dict(os.environ if base is None else base, SHARP_INJECT_STALL=point_id + ("@" + stage if stage else ""))


def wait_for_parts(parts_dir, count, timeout=120):
    """Polls until `count` point files are finished (to kill a run halfway)."""
    deadline = time.time() + timeout
    while time.time() < deadline and len(finished_parts(parts_dir)) < count:
        time.sleep(0.005)


class ResultDirCase(unittest.TestCase):
    """A test case with a fresh temporary directory for its result files (self.dir, self.path), and
    one for the whole class (cls.class_dir, cls.class_path) where setUpClass makes what every test
    reads (a subclass's setUpClass calls super().setUpClass() first)."""

    @classmethod
    def setUpClass(cls):
        cls._class_tmp = tempfile.TemporaryDirectory(prefix="sharp-e2e-")
        cls.class_dir = cls._class_tmp.name

    @classmethod
    def tearDownClass(cls):
        cls._class_tmp.cleanup()

    @classmethod
    def class_path(cls, name):
        return os.path.join(cls.class_dir, name)

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="sharp-e2e-")
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def assertSameData(self, a, b):
        diffs = data_differences(a, b)
        self.assertEqual(diffs, [], "\n".join(diffs))
