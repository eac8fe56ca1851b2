"""No code outside the normaliser registry compares a normaliser's name.

A normaliser is known by name only to its registry entry (lib/normalisers/registry.hpp,
docs/architecture.md#adding-a-remedy): everything else asks the normaliser (its temperature, its
parameters, its entry). This test takes the registered names from `sharp-normalise --list` and scans
the C++ sources of lib/, runners/, experiments/, tools/ and bench/ (comments blanked) for

  - a name literal ("softmax", also "ssmax:s=1", std::string("...")) on either side of == or !=;
  - a string method given a name literal: .compare("adaptive"), .find("entmax"), .starts_with(...);
  - a spec's name compared with anything: spec.name == x, nz.spec().name != y, p->spec().name == ...;
  - a switch on names written as a table: {"softmax", Kind::Softmax};
  - a constant holding a name (const/constexpr/#define) that is then compared.

Default spec strings (`normaliser = "softmax"`) and lists of specs are fine. The detector is first run
on planted snippets, each of which it must flag (and on allowed ones it must not), so the test fails
when it could not see a comparison.
"""
import os
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import run  # noqa: E402

SOURCE = os.environ.get("SHARP_SOURCE_DIR",
                        os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..")))
SCANNED = ["lib", "runners", "experiments", "tools", "bench"]
SUFFIXES = (".cpp", ".hpp", ".h", ".cc", ".inc")


def registered_names():
    """The registry's names, from `sharp-normalise --list` (one unindented `name: ...` line each)."""
    out = run("sharp-normalise", "--list", check=0).stdout
    names = [line.split(":", 1)[0] for line in out.splitlines() if line and not line[0].isspace()]
    if len(names) < 5:
        raise AssertionError(f"sharp-normalise --list gave too few names: {names}")
    return names


def blank_comments(text, strings=False):
    """The text with // and /* */ comments replaced by spaces (line breaks kept); string literals
    kept, or with strings=True their contents blanked too (quotes kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (len(text[i + 1:j])) + text[j:j + 1] if strings else text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def detectors(names):
    alt = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    literal = rf'(?:std::string(?:_view)?\(\s*)?"(?:{alt})(?::[^"]*)?"(?:sv|s)?\)?'
    spec_name = r"\bspec\s*(?:\(\s*\))?\s*(?:\.|->)\s*name\b(?!\s*\()"
    # (what, pattern, whether it reads code with string contents blanked)
    return [
        ("name literal compared", re.compile(rf"(?:==|!=)\s*{literal}|{literal}\s*(?:==|!=)"), False),
        ("string method on a name literal",
         re.compile(rf"\.\s*(?:compare|find|rfind|starts_with|ends_with|contains)\s*\(\s*{literal}"), False),
        ("a spec's name compared",
         re.compile(rf"{spec_name}\s*(?:==|!=)|(?:==|!=)\s*[\w:.()\->\[\]]*{spec_name}"), True),
        ("switch on names (a table keyed by name)", re.compile(rf'\{{\s*"(?:{alt})"\s*,\s*[^"\s{{]'), False),
    ]


def constants_holding_names(text, names):
    alt = "|".join(re.escape(n) for n in names)
    found = set()
    for m in re.finditer(rf'\b(?:constexpr|const)\b[^;=(){{}}]*?\b(\w+)\s*(?:\[\s*\])?\s*(?:=|\{{)\s*"(?:{alt})"', text):
        found.add(m.group(1))
    for m in re.finditer(rf'#\s*define\s+(\w+)\s+"(?:{alt})"', text):
        found.add(m.group(1))
    return found


def findings_in(text, names, path="<text>"):
    """(path, line, what, source line) for every comparison in one file's text."""
    code, bare = blank_comments(text), blank_comments(text, strings=True)
    lines = code.splitlines()
    out = []
    for what, rx, no_strings in detectors(names):
        for m in rx.finditer(bare if no_strings else code):
            line = code.count("\n", 0, m.start()) + 1
            out.append((path, line, what, lines[line - 1].strip()))
    for const in constants_holding_names(code, names):
        rx = re.compile(rf"(?:==|!=)\s*{re.escape(const)}\b|\b{re.escape(const)}\s*(?:==|!=)")
        for m in rx.finditer(bare):
            line = code.count("\n", 0, m.start()) + 1
            out.append((path, line, f"constant {const} holding a name compared", lines[line - 1].strip()))
    merged = {}   # one finding per line, its reasons joined
    for p, line, what, src in sorted(out):
        key = (p, line)
        merged[key] = (p, line, merged[key][2] + "; " + what if key in merged else what, src)
    return list(merged.values())


def scan(root, names):
    out = []
    for top in SCANNED:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith(SUFFIXES):
                    path = os.path.join(dirpath, f)
                    with open(path, encoding="utf-8", errors="replace") as fh:
                        out += findings_in(fh.read(), names, os.path.relpath(path, root))
    return out


PLANTED = [
    'if (spec.name == "softmax") beta = 1;',
    'if ("adaptive" != nz.spec().name) return;',
    'const bool a = normaliser.spec().name == "ssmax";',
    'return p->spec().name != other;',
    'if (text == "entmax:alpha=1.5") {}',
    'if (std::string(spec) == "adaptive") {}',
    'if (s == std::string("stieltjes")) {}',
    'if (name.rfind("ssmax", 0) == 0) {}',
    'if (item.starts_with("topk:")) {}',
    'const std::map<std::string, Kind> kinds = {{"softmax", Kind::Softmax}, {"ssmax", Kind::Ssmax}};',
    'constexpr const char* kAdaptive = "adaptive";\nbool f(const std::string& n) { return n == kAdaptive; }',
    '#define SOFTMAX_NAME "softmax"\nbool g(const std::string& n) { return SOFTMAX_NAME == n; }',
    'if (x.name == y.spec().name) {}',
]
ALLOWED = [
    'std::string normaliser = "softmax";   // the default spec',
    'runner::text_param("normaliser", "softmax+adaptive", "head normalisers", {});',
    'for (const char* s : {"softmax", "adaptive", "ssmax:s=1"}) run(s);',
    '// if (spec.name == "softmax") this comment is not code',
    '/* spec.name == "adaptive" */ int x = 0;',
    'const char* help = "compare spec.name == \\"softmax\\" nowhere";',
    'if (t.name == kTrainedNormaliser) {}',
    'auto e = normaliser_entry(spec.name);',
    'if (e.name() == "train-max") {}',
]


class NoNormaliserNameComparisons(unittest.TestCase):
    def setUp(self):
        self.names = registered_names()

    def test_detector_flags_every_planted_comparison(self):
        for snippet in PLANTED:
            self.assertTrue(findings_in(snippet, self.names), f"not flagged: {snippet}")
        for snippet in ALLOWED:
            self.assertEqual(findings_in(snippet, self.names), [], f"flagged: {snippet}")

    def test_planted_file_in_a_tree_is_found(self):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "lib", "transformer"))
            with open(os.path.join(root, "lib", "transformer", "planted.cpp"), "w") as f:
                f.write('// a planted comparison\nbool f(const X& n) {\n  return n.spec().name == "adaptive";\n}\n')
            found = scan(root, self.names)
            self.assertEqual([(p, line) for p, line, _, _ in found], [(os.path.join("lib", "transformer", "planted.cpp"), 3)])

    def test_sources_compare_no_normaliser_name(self):
        found = scan(SOURCE, self.names)
        self.assertEqual(found, [], "normaliser names compared outside the registry (ask the normaliser, "
                         "docs/architecture.md#adding-a-remedy):\n" +
                         "\n".join(f"  {p}:{line}: {what}: {src}" for p, line, what, src in found))


if __name__ == "__main__":
    unittest.main(verbosity=2)
