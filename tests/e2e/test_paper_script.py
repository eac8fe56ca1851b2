"""scripts/paper.sh runs every sweep of a scale, a sweep that reads another's results after it and
with its --checkpoint pointing into the results directory ('# input:' lines); a missing input or a
cycle is an error (exit 2) before anything runs. Fake experiment binaries log their arguments."""
import os
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

    def run_script(self):
        return subprocess.run(["bash", SCRIPT, "bin", "res", "t"], cwd=self.dir, capture_output=True, text=True,
                              timeout=60)

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


if __name__ == "__main__":
    unittest.main()
