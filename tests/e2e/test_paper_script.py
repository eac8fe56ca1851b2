"""scripts/paper.sh runs every sweep of a scale, a sweep that reads another's results after it and
with its --checkpoint pointing into the results directory ('# input:' lines); a missing input or a
cycle is an error (exit 2) before anything runs; Ctrl-C stops the running binary once (it exits 3)
and the script exits 3 without starting the next stage; --sweeps 'GLOB...' runs only the matching
sweeps (in dependency order; an input left out must exist); the cluster scale prints the sharp-submit
commands and runs nothing, and every shipped cluster sweep's command passes sharp-submit --dry-run.
Fake experiment binaries log their arguments."""
import glob
import os
import re
import signal
import stat
import subprocess
import sys
import tempfile
import time
import unittest

from e2e_support import BIN, ResultDirCase

# The script's --figures step falls back to shipped results for every file its fake sweeps do not
# write; the repository's own (paper scale, minutes to draw) are not what these tests are about.
os.environ["SHARP_PUBLISHED_DIR"] = tempfile.mkdtemp(prefix="sharp-no-published-")

SOURCE = os.environ.get("SHARP_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
SCRIPT = os.path.join(SOURCE, "scripts", "paper.sh")


class PaperScript(ResultDirCase):
    def make_scale(self, configs, scale="t"):
        os.makedirs(self.path(f"sweeps/{scale}"), exist_ok=True)
        os.makedirs(self.path("bin"), exist_ok=True)
        for name, text in configs.items():
            with open(self.path(f"sweeps/{scale}/{name}.cfg"), "w") as fh:
                fh.write(text)
            exe = self.path(f"bin/sharp-{name}")
            with open(exe, "w") as fh:
                fh.write(f'#!/bin/sh\necho "{name} $*" >> "{self.path("calls.log")}"\n')
            os.chmod(exe, os.stat(exe).st_mode | stat.S_IEXEC)

    def run_script(self, *options, env=None, scale="t"):
        return subprocess.run(["bash", SCRIPT, *options, "bin", "res", scale], cwd=self.dir, capture_output=True,
                              text=True, timeout=120, env=env)

    def calls(self):
        if not os.path.exists(self.path("calls.log")):
            return []
        with open(self.path("calls.log")) as fh:
            return fh.read().splitlines()

    def test_inputs_run_first_and_are_passed(self):
        self.make_scale({"a-eval": "# input: checkpoint = z-train\nn = 4\n",
                         "b-plain": "n = 1\n",
                         "z-train": "seed = 1\n"})
        p = self.run_script()
        self.assertEqual(p.returncode, 0, p.stderr)
        calls = self.calls()
        self.assertEqual([c.split()[0] for c in calls], ["b-plain", "z-train", "a-eval"])
        self.assertIn("--config sweeps/t/a-eval.cfg --checkpoint res/z-train.h5 --out res/a-eval.h5", calls[2])
        self.assertIn("--config sweeps/t/b-plain.cfg --out res/b-plain.h5", calls[0])

    def test_sweeps_runs_only_the_selected_in_order_and_needs_their_inputs(self):
        self.make_scale({"a-eval": "# input: checkpoint = z-train\nn = 4\n", "b-plain": "n = 1\n",
                         "z-train": "seed = 1\n", "z-other": "seed = 2\n"})
        # An input that is neither selected nor in the results directory: exit 2, nothing runs.
        p = self.run_script("--sweeps", "a-eval")
        self.assertEqual(p.returncode, 2)
        self.assertIn("add z-train to --sweeps", p.stderr)
        self.assertEqual(self.calls(), [])
        p = self.run_script("--sweeps", "nothing* b-plain")
        self.assertEqual(p.returncode, 2)
        self.assertIn("'nothing*' matches no", p.stderr)
        self.assertEqual(self.calls(), [])
        # Patterns select, the order stays the dependency order (z-train before a-eval).
        p = self.run_script("--sweeps", "a-* z-train.cfg")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([c.split()[0] for c in self.calls()], ["z-train", "a-eval"])
        # With the input's result present, the reader alone runs.
        os.remove(self.path("calls.log"))
        os.makedirs(self.path("res"), exist_ok=True)
        open(self.path("res/z-train.h5"), "w").close()
        p = self.run_script("--sweeps", "a-eval")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([c.split()[0] for c in self.calls()], ["a-eval"])
        self.assertIn("--checkpoint res/z-train.h5", self.calls()[0])

    def test_missing_input_and_cycle_are_errors_before_running(self):
        self.make_scale({"a": "n = 1\n", "b": "# input: checkpoint = nothing\n"})
        p = self.run_script()
        self.assertEqual(p.returncode, 2)
        self.assertIn("needs nothing", p.stderr)
        self.assertEqual(self.calls(), [])
        os.remove(self.path("sweeps/t/b.cfg"))
        self.make_scale({"x": "# input: checkpoint = y\n", "y": "# input: checkpoint = x\n"})
        p = self.run_script()
        self.assertEqual(p.returncode, 2)
        self.assertIn("cycle", p.stderr)
        self.assertEqual(self.calls(), [])

    def test_builds_only_the_binaries_it_runs_then_draws_and_times_every_stage(self):
        """--build builds the sweeps' binaries and nothing else (a fake cmake logs its arguments);
        --figures draws the figures and writes the page; every stage's time is printed."""
        self.make_scale({"a-eval": "# input: checkpoint = z-train\nn = 4\n", "z-train": "seed = 1\n"})
        os.makedirs(self.path("fakebin"))
        cmake = self.path("fakebin/cmake")
        with open(cmake, "w") as fh:
            fh.write(f'#!/bin/sh\necho "cmake $*" >> "{self.path("calls.log")}"\n')
        os.chmod(cmake, os.stat(cmake).st_mode | stat.S_IEXEC)
        env = dict(os.environ, PATH=self.path("fakebin") + os.pathsep + os.environ["PATH"])
        p = self.run_script("--build", "B", "--jobs", "3", "--figures", env=env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        calls = self.calls()
        self.assertEqual(calls[0], "cmake --build B -j 3 --target sharp-z-train sharp-a-eval")
        self.assertEqual([c.split()[0] for c in calls[1:]], ["z-train", "a-eval"])
        self.assertIn("paper: stage times (t scale)", p.stdout)
        for stage in ("build (2 binaries)", "sharp-z-train", "sharp-a-eval", "figures", "report"):
            self.assertRegex(p.stdout, rf"\n +\d+ s  {re.escape(stage)}\n")
        self.assertIn("paper: the report is res/report/index.html", p.stdout)
        self.assertTrue(os.path.isfile(self.path("res/report/index.html")))

    def test_a_failing_sweep_still_prints_the_stage_times(self):
        self.make_scale({"a": "n = 1\n", "b": "n = 2\n"})
        with open(self.path("bin/sharp-b"), "w") as fh:
            fh.write("#!/bin/sh\nexit 3\n")
        p = self.run_script()
        self.assertEqual(p.returncode, 3)
        self.assertIn("paper: stage times", p.stdout)
        self.assertRegex(p.stdout, r"\n +\d+ s  sharp-a\n")

    def test_ctrl_c_stops_the_binary_once_and_the_script_exits_3_before_the_next_stage(self):
        """SIGINT to the script's whole process group, as a terminal's Ctrl-C sends it: the binary
        gets exactly one SIGINT (a second would end it without its checkpoint), exits 3, and the
        script exits 3 without running the next stage; the stages done so far are timed."""
        self.make_scale({"a": "n = 1\n", "b": "n = 2\n", "c": "n = 3\n"})
        log = self.path("signals.log")
        # A Python fake: a background job of a non-interactive shell starts with SIGINT ignored,
        # which a bash script cannot trap but a program can override (the real binaries do).
        with open(self.path("bin/sharp-b"), "w") as fh:
            fh.write(f"""#!/usr/bin/python3
import signal, sys, time
got = []
signal.signal(signal.SIGINT, lambda *_: got.append(1) or open({log!r}, "a").write("INT\\n"))
open({self.path('b.started')!r}, "w").write("started")
for _ in range(600):
    if got:
        time.sleep(1)
        sys.exit(3)
    time.sleep(0.1)
""")
        p = subprocess.Popen(["bash", SCRIPT, "bin", "res", "t"], cwd=self.dir, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            deadline = time.time() + 60
            while not os.path.exists(self.path("b.started")) and time.time() < deadline:
                time.sleep(0.05)
            self.assertTrue(os.path.exists(self.path("b.started")), "sharp-b never started")
            os.killpg(p.pid, signal.SIGINT)
            out, err = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
        self.assertEqual(p.returncode, 3, out + err)
        with open(log) as fh:
            self.assertEqual(fh.read().split(), ["INT"])
        self.assertEqual([c.split()[0] for c in self.calls()], ["a"])  # c never started
        self.assertIn("interrupted during sharp-b", err)
        self.assertRegex(out, r"\n +\d+ s  sharp-a\n")
        with open(self.path("res/stage-times.tsv")) as fh:
            self.assertEqual([line.split("\t")[0] for line in fh], ["a.h5"])

    def test_the_cluster_scale_prints_submit_commands_in_order_and_runs_nothing(self):
        self.make_scale({"z-train": "# submit: --array 4 --time 01:00:00\nseed = 1\n",
                         "a-eval": "# input: checkpoint = z-train\n# submit: --array 2\nn = 4\n"},
                        scale="cluster")
        p = self.run_script(scale="cluster")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.calls(), [])
        lines = [line for line in p.stdout.splitlines() if line.startswith("runners/sharp-submit")]
        self.assertEqual(lines, [
            "runners/sharp-submit --array 4 --time 01:00:00 -- sharp-z-train --config sweeps/cluster/z-train.cfg --out res/z-train.h5",
            "runners/sharp-submit --array 2 -- sharp-a-eval --config sweeps/cluster/a-eval.cfg --checkpoint res/z-train.h5 --out res/a-eval.h5"])
        self.assertIn("after res/z-train.h5", p.stdout)
        with open(self.path("sweeps/cluster/z-train.cfg"), "w") as fh:
            fh.write("seed = 1\n")
        p = self.run_script(scale="cluster")
        self.assertEqual(p.returncode, 2)
        self.assertIn("no '# submit:' line", p.stderr)


class ClusterSweeps(ResultDirCase):
    """Every sweeps/cluster file says its scale, its cost and its sharp-submit options, and the
    command `make paper SCALE=cluster` prints for it passes sharp-submit --dry-run (a sweep whose
    input does not exist yet is refused only for that input)."""

    def test_every_cluster_sweep_submits_dry(self):
        p = subprocess.run(["bash", SCRIPT, BIN, self.path("res"), "cluster"], cwd=SOURCE,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = [line for line in p.stdout.splitlines() if line.startswith("runners/sharp-submit")]
        configs = sorted(glob.glob(os.path.join(SOURCE, "sweeps", "cluster", "*.cfg")))
        self.assertEqual(len(lines), len(configs))
        for cfg in configs:
            with open(cfg) as fh:
                text = fh.read()
            self.assertRegex(text, r"(?m)^# cost: about [0-9.]+ core-hours", cfg)
        env = dict(os.environ, PATH=BIN + os.pathsep + os.environ["PATH"])
        for line in lines:
            words = line.split()
            with self.subTest(line=line):
                q = subprocess.run([sys.executable, os.path.join(SOURCE, words[0]), "--dry-run",
                                    *words[1:]], cwd=SOURCE, capture_output=True, text=True,
                                   timeout=120, env=env)
                if "--checkpoint" in words:
                    source = words[words.index("--checkpoint") + 1]
                    if q.returncode != 0:
                        self.assertIn(os.path.basename(source), q.stderr + q.stdout)
                        continue
                self.assertEqual(q.returncode, 0, q.stdout + q.stderr)
                self.assertIn("sbatch", q.stdout)


if __name__ == "__main__":
    unittest.main()
