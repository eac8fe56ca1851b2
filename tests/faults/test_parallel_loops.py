"""Item 6 of the fault list: an error inside a parallel loop must come out as the run's error (exit 1,
the lowest failing index), never abort the process (exit 134) or depend on completion order. Every
parallel loop of lib/ and experiments/ is a sharp::parallel_for; a failure is injected into each
(SHARP_INJECT_LOOP_FAILURE=<loop>[@index]): library loops by tests/unit/test_parallel_for.cpp,
experiment loops here through the binaries."""
import glob
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faults_support import ResultDirCase, run  # noqa: E402

SOURCE = os.environ.get("SHARP_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
UNIT_TEST = os.path.join(SOURCE, "tests", "unit", "test_parallel_for.cpp")
# Loops inside experiments: reached through their binary (args, and a model file when needed).
EXPERIMENT_LOOPS = {
    "weight-bound/trials": ("sharp-weight-bound", ["--n", "16", "--trials", "12", "--threads", "2"]),
    "fit-adaptive/pairs": ("sharp-fit-adaptive", ["--n-min", "16", "--n-max", "32", "--samples", "8", "--bins", "5",
                                                  "--threads", "2"]),
}


def sources():
    for pattern in ("lib/**/*.cpp", "lib/**/*.hpp", "experiments/*.cpp", "experiments/*.hpp"):
        yield from glob.glob(os.path.join(SOURCE, pattern), recursive=True)


def loop_names():
    names = {}
    for path in sources():
        with open(path) as fh:
            for name in re.findall(r'Loop\{"([^"]+)"', fh.read()):
                names[name] = os.path.relpath(path, SOURCE)
    return names


class ParallelLoops(ResultDirCase):
    def test_every_parallel_loop_is_a_parallel_for(self):
        stray = []
        for path in sources():
            if path.endswith(os.path.join("core", "parallel_for.hpp")):
                continue
            with open(path) as fh:
                for number, line in enumerate(fh, 1):
                    if re.search(r"#\s*pragma\s+omp\s+parallel", line):
                        stray.append(f"{os.path.relpath(path, SOURCE)}:{number}")
        self.assertEqual(stray, [], "OpenMP loops outside sharp::parallel_for (core/parallel_for.hpp)")

    def test_every_loop_has_an_injection_test(self):
        with open(UNIT_TEST) as fh:
            unit = fh.read()
        names = loop_names()
        self.assertGreaterEqual(len(names), 10, names)
        untested = [f"{name} ({where})" for name, where in sorted(names.items())
                    if f'"{name}"' not in unit and name not in EXPERIMENT_LOOPS]
        self.assertEqual(untested, [], "parallel loops without a failure-injection test")

    def test_a_failure_in_an_experiment_loop_is_exit_1_naming_it(self):
        model = self.path("model.h5")
        run("sharp-train-max", "--steps", "2", "--width", "8", "--batch", "16", "--eval-every", "1",
            "--eval-samples", "16", "--threads", "1", "--out", model, "--quiet", check=0)
        for loop, (binary, args) in EXPERIMENT_LOOPS.items():
            with self.subTest(loop=loop):
                extra = ["--checkpoint", model] if binary == "sharp-fit-adaptive" else []
                out = self.path(loop.replace("/", "-") + ".h5")
                p = run(binary, *args, *extra, "--out", out, "--quiet", env={"SHARP_INJECT_LOOP_FAILURE": loop + "@3"})
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertIn(f"injected failure in parallel loop '{loop}' at index 3", p.stderr)
                run(binary, *args, *extra, "--out", out, "--quiet", check=0)  # and without the fault it completes


if __name__ == "__main__":
    unittest.main(verbosity=2)
