"""`make` on a machine that lacks a package says in one line to run `make deps`.

Without the check CMake stops on the first missing package with a multi-line "could not find xtl"
that does not say what to do. The machine running the tests has every package, so a missing one is
simulated with SHARP_DEPS_INSTALLED, a fake package list that scripts/deps.sh reads instead of the
dpkg database (docs/architecture.md#layers).
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.environ.get("SHARP_SOURCE_DIR",
                        os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..")))
DEPS = os.path.join(SOURCE, "scripts", "deps.sh")


def suite_packages():
    """The package list of scripts/deps.sh (the words of its `packages=( ... )` array)."""
    with open(DEPS, encoding="utf-8") as f:
        body = re.search(r"^packages=\((.*?)^\)", f.read(), re.S | re.M).group(1)
    return body.split()


def clean_env(**extra):
    # A make started by `make test` exports its jobserver; the make under test must not inherit it.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    env.update(extra)
    return env


class MakeDepsHint(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="sharp-deps-hint-")
        self.dir = self._tmp.name
        self.packages = suite_packages()
        self.assertIn("xtl-dev", self.packages)

    def tearDown(self):
        self._tmp.cleanup()

    def fake_list(self, without=()):
        path = os.path.join(self.dir, "installed.txt")
        with open(path, "w") as f:
            f.write("".join(p + "\n" for p in self.packages if p not in without))
        return path

    def check(self, installed):
        return subprocess.run(["bash", DEPS, "--check"], capture_output=True, text=True, timeout=60,
                              env=clean_env(SHARP_DEPS_INSTALLED=installed))

    def test_all_present_is_silent(self):
        p = self.check(self.fake_list())
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))

    def test_one_missing_package_is_one_line_naming_make_deps(self):
        p = self.check(self.fake_list(without=("xtl-dev",)))
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(p.stdout, "")
        lines = p.stderr.splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn("xtl-dev", lines[0])
        self.assertIn("make deps", lines[0])

    def test_make_stops_before_cmake(self):
        # `make` (the default goal) in a fresh build directory: the hint, and CMake never runs.
        build = os.path.join(self.dir, "build")
        p = subprocess.run(["make", "-C", SOURCE, "--no-print-directory", f"BUILD={build}"],
                           capture_output=True, text=True, timeout=300,
                           env=clean_env(SHARP_DEPS_INSTALLED=self.fake_list(without=("xtl-dev",))))
        out = p.stdout + p.stderr
        self.assertNotEqual(p.returncode, 0, out)
        hint = [line for line in out.splitlines() if "make deps" in line]
        self.assertEqual(len(hint), 1, out)
        self.assertIn("xtl-dev", hint[0])
        self.assertNotIn("cmake -S", out)
        self.assertNotIn("Could not find", out)
        self.assertFalse(os.path.exists(os.path.join(build, "CMakeCache.txt")))

    def test_unknown_argument_is_bad_input(self):
        p = subprocess.run(["bash", DEPS, "--chek"], capture_output=True, text=True, timeout=60, env=clean_env())
        self.assertEqual(p.returncode, 2)
        self.assertIn("--check", p.stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
