"""Every fault-injection hook is in the one registry (runners/fault_injection.hpp, kFaultHooks).

A hook is an environment variable SHARP_INJECT_* that a test sets to make one chosen thing go wrong.
This test collects the names the tests set (tests/) and the names the C++ sources mention (lib/,
runners/, experiments/, tools/), and checks that each is registered, that each registered hook is used
by some test, and that no C++ code reads a hook with getenv() except the registry itself (which reads
through its FaultHook constants) and lib/core/parallel_for.cpp (lib cannot see runners/). The scanner
is first run on planted text, which it must read, so the test fails when it could not see a hook.
"""
import os
import re
import unittest

SOURCE = os.environ.get("SHARP_SOURCE_DIR",
                        os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..")))
REGISTRY = "runners/fault_injection.hpp"
GETENV_ALLOWED = {"lib/core/parallel_for.cpp"}  # lib/ reads its own hook: it cannot include runners/
HOOK = re.compile(r"SHARP_INJECT_[A-Z0-9_]+")
REGISTERED = re.compile(r'FaultHook\s+k\w+\s*\{\s*"(SHARP_INJECT_[A-Z0-9_]+)"')
GETENV = re.compile(r'getenv\(\s*"(SHARP_INJECT_[A-Z0-9_]+)"')


def files(top, suffixes):
    """Relative paths of the files under SOURCE/top with one of the suffixes."""
    for root, dirs, names in os.walk(os.path.join(SOURCE, top)):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", "build")]
        for name in names:
            if name.endswith(suffixes):
                yield os.path.relpath(os.path.join(root, name), SOURCE)


def read(path):
    with open(os.path.join(SOURCE, path), encoding="utf-8", errors="replace") as f:
        return f.read()


def hooks_in(paths):
    """{hook name: [paths that mention it]}."""
    found = {}
    for path in paths:
        for name in set(HOOK.findall(read(path))):
            found.setdefault(name, []).append(path)
    return found


class FaultHooksRegistered(unittest.TestCase):
    def setUp(self):
        self.registered = REGISTERED.findall(read(REGISTRY))

    def test_the_scanner_sees_planted_hooks(self):
        planted = 'inline constexpr FaultHook kPlantedHook{\n    "SHARP_INJECT_PLANTED", "x", "y"};'
        self.assertEqual(REGISTERED.findall(planted), ["SHARP_INJECT_PLANTED"])
        self.assertEqual(GETENV.findall('std::getenv("SHARP_INJECT_PLANTED")'), ["SHARP_INJECT_PLANTED"])
        self.assertEqual(HOOK.findall('env={"SHARP_INJECT_PLANTED": "a"}'), ["SHARP_INJECT_PLANTED"])
        self.assertGreaterEqual(len(self.registered), 5, self.registered)

    def test_every_hook_the_tests_set_is_registered_and_every_registered_hook_is_tested(self):
        used = hooks_in(files("tests", (".py", ".sh", ".cpp")))
        used.pop("SHARP_INJECT_PLANTED", None)  # this file's planted text
        for name, paths in sorted(used.items()):
            self.assertIn(name, self.registered, f"{name} (set by {', '.join(paths)}) is not in {REGISTRY}")
        for name in self.registered:
            self.assertIn(name, used, f"{name} is registered in {REGISTRY} but no test under tests/ uses it")

    def test_every_hook_the_code_names_is_registered(self):
        code = [p for top in ("lib", "runners", "experiments", "tools") for p in files(top, (".cpp", ".hpp"))]
        for name, paths in sorted(hooks_in(code).items()):
            self.assertIn(name, self.registered, f"{name} (in {', '.join(paths)}) is not in {REGISTRY}")

    def test_no_code_reads_a_hook_but_the_registry(self):
        code = [p for top in ("lib", "runners", "experiments", "tools") for p in files(top, (".cpp", ".hpp"))]
        readers = sorted(p for p in code if GETENV.search(read(p)) and p not in GETENV_ALLOWED)
        self.assertEqual(readers, [], f"read a SHARP_INJECT_* variable themselves; read it through {REGISTRY}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
