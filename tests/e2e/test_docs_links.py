"""Every citation of a docs section must land on a heading.

Code comments, --help texts, result-file notes, the README and the docs themselves cite sections as
`docs/<page>.md#<anchor>` (and the docs link each other as `<page>.md#<anchor>` or `#<anchor>`). A
renamed heading would silently break them, so this test collects every such citation in the tracked
files and checks that the page exists and has a heading with that GitHub-style anchor. It also checks
that the anchors other code relies on (docs/architecture.md#testing) exist, and that the checker
itself reports an unknown anchor.
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.environ.get("SHARP_SOURCE_DIR",
                        os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..")))

# The anchors the codebase agreed to cite; a heading rename must not remove one of them.
REQUIRED = {
    "science.md": """notation dispersion-lemma transformers-disperse weight-norm-bound entropy-falls-with-beta
        logit-spread-in-llms adaptive-temperature streaming-entropy refitting-the-polynomial max-retrieval
        max-retrieval-reconstructed published-numbers remedies temperature ssmax top-k sparsemax entmax
        asentmax stieltjes learned-scalars figures algorithmic-text clrs-text-format measuring-heads
        reference-implementation""".split(),
    "architecture.md": """layers experiment-contract declared-outputs checkpoints points-parts-merge-resume
        locking determinism mpi-dealer slurm hdf5-schema errors-and-exit-codes interrupts testing
        benchmarks""".split(),
}

# docs/<page>.md#<anchor> anywhere; inside docs/ also (<page>.md#<anchor>) and (#<anchor>) links.
CITATION = re.compile(r"docs/([\w.-]+\.md)#([\w-]+)")
RELATIVE_LINK = re.compile(r"\]\(([\w.-]+\.md)?#([\w-]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def github_anchor(heading):
    """The anchor GitHub gives a heading: link and code markup dropped, lower case, punctuation
    removed (letters, digits, '_', '-' and spaces kept), each space a hyphen."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors_of(markdown_text):
    """Every heading anchor of a page, duplicates numbered as GitHub does (x, x-1, x-2, ...)."""
    anchors, seen, in_fence = set(), {}, False
    for line in markdown_text.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        m = None if in_fence else HEADING.match(line)
        if not m:
            continue
        base = github_anchor(m.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        anchors.add(base if count == 0 else f"{base}-{count}")
    return anchors


def tracked_files(root):
    """The repository's tracked files (git ls-files); every file but build/ and .git/ without git."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True).stdout
        return [os.path.join(root, p) for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if x not in (".git", "build")]
            files += [os.path.join(d, n) for n in names]
        return files


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def broken_citations(root):
    """['file:line: docs/PAGE#ANCHOR: why', ...] for every citation that does not resolve."""
    docs = os.path.join(root, "docs")
    pages = {}

    def page_anchors(page):
        if page not in pages:
            path = os.path.join(docs, page)
            pages[page] = anchors_of(read_text(path)) if os.path.isfile(path) else None
        return pages[page]

    problems = []
    for path in tracked_files(root):
        if not os.path.isfile(path):
            continue
        try:
            text = read_text(path)
        except (UnicodeDecodeError, OSError):
            continue  # binary files cite nothing
        rel = os.path.relpath(path, root)
        in_docs = os.path.dirname(rel) == "docs" and rel.endswith(".md")
        for number, line in enumerate(text.splitlines(), 1):
            found = [(page, anchor) for page, anchor in CITATION.findall(line)]
            if in_docs:
                found += [(page or os.path.basename(rel), anchor) for page, anchor in RELATIVE_LINK.findall(line)]
            for page, anchor in found:
                anchors = page_anchors(page)
                if anchors is None:
                    problems.append(f"{rel}:{number}: docs/{page}#{anchor}: no such page docs/{page}")
                elif anchor not in anchors:
                    problems.append(f"{rel}:{number}: docs/{page}#{anchor}: no heading with this anchor in docs/{page}")
    return problems


class DocsLinks(unittest.TestCase):
    def test_every_cited_anchor_is_a_heading(self):
        problems = broken_citations(SOURCE)
        self.assertEqual(problems, [], "citations of docs sections that do not exist:\n" + "\n".join(problems))

    def test_agreed_anchors_exist(self):
        for page, required in REQUIRED.items():
            with open(os.path.join(SOURCE, "docs", page), encoding="utf-8") as f:
                missing = sorted(set(required) - anchors_of(f.read()))
            self.assertEqual(missing, [], f"docs/{page} lacks headings for these agreed anchors")

    def test_github_anchor_rules(self):
        self.assertEqual(github_anchor("Points, parts, merge, resume"), "points-parts-merge-resume")
        self.assertEqual(github_anchor("Max retrieval, reconstructed"), "max-retrieval-reconstructed")
        self.assertEqual(github_anchor("Top-k"), "top-k")
        self.assertEqual(github_anchor("The `sharp` [docs](x.md)"), "the-sharp-docs")
        self.assertEqual(anchors_of("# A\n```\n# not a heading\n```\n## A\n"), {"a", "a-1"})

    def test_an_unknown_anchor_is_reported(self):
        # The citations are assembled at run time so that this file itself cites nothing broken.
        page, good, bad = "page.md", "real-section", "no-such-section"
        with tempfile.TemporaryDirectory(prefix="sharp-docs-links-") as root:
            os.makedirs(os.path.join(root, "docs"))
            with open(os.path.join(root, "docs", page), "w") as f:
                f.write("# Title\n\n## Real section\n\nSee [below](#" + bad + ").\n")
            with open(os.path.join(root, "code.cpp"), "w") as f:
                f.write("// docs/" + page + "#" + good + "\n// docs/" + page + "#" + bad + "\n"
                        "// docs/" + "missing.md#" + good + "\n")
            problems = broken_citations(root)
        self.assertEqual(len(problems), 3, problems)
        self.assertTrue(problems[0].startswith("code.cpp:2: ") or problems[1].startswith("code.cpp:2: "), problems)
        self.assertTrue(any("no such page docs/missing.md" in p for p in problems), problems)
        self.assertTrue(any(p.startswith(os.path.join("docs", page) + ":5: ") for p in problems), problems)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
