"""The C++ of lib/, runners/, experiments/ and tools/ is formatted as .clang-format says.

Runs `clang-format --dry-run -Werror` (Debian's clang-format, installed by `make deps`) on every
.cpp and .hpp there; a file it would change fails the test, with clang-format's own message naming
the file and line. To fix: `clang-format -i FILE` (the style is the repository's .clang-format).
Before that, a planted misformatted snippet must be flagged and a formatted one must pass, so the
test cannot pass by not looking (a style file clang-format did not find, a flag it ignored).
Skipped (exit 77) where clang-format is not installed.
"""
import os
import shutil
import subprocess
import sys
import unittest

SOURCE = os.environ.get("SHARP_SOURCE_DIR",
                        os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..")))
CHECKED = ["lib", "runners", "experiments", "tools"]
CLANG_FORMAT = shutil.which("clang-format")


def checked_files():
    files = []
    for folder in CHECKED:
        for root, _dirs, names in os.walk(os.path.join(SOURCE, folder)):
            files += [os.path.join(root, n) for n in sorted(names) if n.endswith((".cpp", ".hpp"))]
    return sorted(files)


def dry_run(text: str, as_file: str) -> subprocess.CompletedProcess:
    """clang-format's verdict on `text` as if it were the file `as_file` of the repository."""
    return subprocess.run([CLANG_FORMAT, "--dry-run", "-Werror", "--style=file", f"--assume-filename={as_file}"],
                          input=text, capture_output=True, text=True, timeout=60)


class ClangFormat(unittest.TestCase):
    def test_detector_sees_a_misformatted_file(self):
        where = os.path.join(SOURCE, "lib", "planted.cpp")
        bad = "namespace sharp {\nint  twice(int x){return 2*x;}\n}  // namespace sharp\n"
        good = "namespace sharp {\nint twice(int x) { return 2 * x; }\n}  // namespace sharp\n"
        self.assertNotEqual(dry_run(bad, where).returncode, 0, "clang-format passed a misformatted snippet")
        self.assertEqual(dry_run(good, where).returncode, 0, dry_run(good, where).stderr)
        # the repository's style, not clang-format's default (which allows 80 columns, not 120)
        long_line = "int f(int a) { return a + " + " + ".join(["a"] * 20) + "; }\n"
        self.assertGreater(len(long_line), 100)
        self.assertEqual(dry_run(long_line, where).returncode, 0, "the repository's .clang-format was not used")

    def test_sources_are_formatted(self):
        files = checked_files()
        self.assertGreater(len(files), 100, "found too few sources: wrong SHARP_SOURCE_DIR?")
        result = subprocess.run([CLANG_FORMAT, "--dry-run", "-Werror", "--style=file", *files],
                                capture_output=True, text=True, timeout=600)
        bad = sorted({line.split(":")[0] for line in result.stderr.splitlines() if ": error:" in line})
        self.assertEqual(result.returncode, 0,
                         f"{len(bad)} file(s) not formatted as .clang-format says (fix: clang-format -i FILE):\n"
                         + "\n".join(os.path.relpath(f, SOURCE) for f in bad) + "\n" + result.stderr[:3000])


if __name__ == "__main__":
    if CLANG_FORMAT is None:
        print("skipped: clang-format is not installed (`make deps` installs it)")
        sys.exit(77)
    unittest.main()
