"""scripts/paper.sh runs every sweep of a scale, a sweep that reads another's results after it and
with its --checkpoint pointing into the results directory ('# input:' lines); a missing input or a
cycle is an error (exit 2) before anything runs. Fake experiment binaries log their arguments."""
import os
import re
import stat
import subprocess
import unittest

from e2e_support import ResultDirCase

SOURCE = os.environ.get("SHARP_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
SCRIPT = os.path.join(SOURCE, "scripts", "paper.sh")


class PaperScript(ResultDirCase):
    def make_scale(self, configs):
        os.makedirs(self.path("sweeps/t"), exist_ok=True)
        os.makedirs(self.path("bin"), exist_ok=True)
        for name, text in configs.items():
            with open(self.path(f"sweeps/t/{name}.cfg"), "w") as fh:
                fh.write(text)
            exe = self.path(f"bin/sharp-{name}")
            with open(exe, "w") as fh:
                fh.write(f'#!/bin/sh\necho "{name} $*" >> "{self.path("calls.log")}"\n')
            os.chmod(exe, os.stat(exe).st_mode | stat.S_IEXEC)

    def run_script(self, *options, env=None):
        return subprocess.run(["bash", SCRIPT, *options, "bin", "res", "t"], cwd=self.dir, capture_output=True,
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


if __name__ == "__main__":
    unittest.main()
