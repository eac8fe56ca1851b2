#!/usr/bin/python3
"""End-to-end test of sharp-normalise (docs/science.md#remedies): output layout and precision,
--input/--output, --entropy, --list (the registry), the generated golden file through the tool
(docs/science.md#reference-implementation), and bad input (exit 2, one line naming the line or
parameter, no output file written or overwritten). Run by ctest with SHARP_BIN_DIR and
SHARP_GOLDEN_DIR set, after the fixture golden_normalisers has written the golden file."""
import os
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import BIN as BIN_DIR, run as run_binary  # noqa: E402

BIN = os.path.join(BIN_DIR, "sharp-normalise")
GOLDEN = os.path.join(os.environ.get("SHARP_GOLDEN_DIR", "build/golden"), "normalisers.h5")
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def run(args, stdin=""):
    return run_binary("sharp-normalise", *args, input=stdin, timeout=120)


def parse(text):
    return [[float(t) for t in line.split()] for line in text.splitlines()]


def softmax(z, beta=1.0):
    z = np.asarray(z, dtype=float)
    e = np.exp(beta * (z - z[np.isfinite(z)].max()))
    return e / e.sum()


def entropy(p):
    p = np.asarray(p)
    q = p[p > 0]
    return float(-(q * np.log(q)).sum())


def adaptive_beta(h):
    b = -0.037 * h**4 + 0.481 * h**3 - 2.3 * h**2 + 4.917 * h - 1.791
    return max(b, 1.0) if h > 0.5 else 1.0


def test_softmax_layout_and_precision():
    rows = [[1.0, 2.0, 3.0], [0.5, float("-inf"), 4.0, -2.25], [7.0], [1e6 + 0.1, 1e6, 1e6 - 3]]
    text = "\n".join(" ".join(repr(x) if np.isfinite(x) else "-inf" for x in r) for r in rows) + "\n"
    res = run(["--normaliser", "softmax"], text)
    check(res.returncode == 0, f"softmax exit {res.returncode}: {res.stderr}")
    out = parse(res.stdout)
    check([len(r) for r in out] == [len(r) for r in rows], "layout differs from input")
    for z, p in zip(rows, out):
        ref = softmax(z)
        check(np.max(np.abs(np.array(p) - ref)) <= 1e-15, f"softmax {z}: {p} vs {ref}")
        check(abs(sum(p) - 1.0) < 1e-14, "row does not sum to 1")
    first = res.stdout.split()[0]
    digits = len(first.replace(".", "").replace("-", "").split("e")[0].lstrip("0"))
    check(digits == 17, f"expected 17 significant digits, got {first}")
    check(out[1][1] == 0.0, "masked entry must be 0")


def test_files_and_entropy():
    rng = np.random.default_rng(3)
    rows = [rng.normal(0, s, n) for s, n in [(1, 16), (0.3, 40), (3, 5), (0.01, 500)]]
    with tempfile.TemporaryDirectory() as tmp:
        inp = os.path.join(tmp, "in.txt")
        out = os.path.join(tmp, "out.txt")
        with open(inp, "w") as f:
            for r in rows:
                f.write(" ".join(f"{x:.17g}" for x in r) + "\n")
        res = run(["--normaliser", "adaptive", "--input", inp, "--output", out, "--entropy"])
        check(res.returncode == 0 and res.stdout == "", f"adaptive --entropy exit {res.returncode}: {res.stderr}")
        check(sorted(os.listdir(tmp)) == ["in.txt", "out.txt"], f"stray files: {os.listdir(tmp)}")
        got = parse(open(out).read())
        check(all(len(g) == 2 for g in got), "adaptive --entropy must write entropy and beta")
        for z, (h, beta) in zip(rows, got):
            b = adaptive_beta(entropy(softmax(z)))
            check(abs(beta - b) < 1e-12, f"beta {beta} vs {b}")
            check(abs(h - entropy(softmax(z, b))) < 1e-12, f"entropy {h}")
        check(any(g[1] > 1.0 for g in got) and any(g[1] == 1.0 for g in got), "want rows with and without correction")
        res = run(["--normaliser", "sparsemax", "--input", inp, "--entropy"])
        check(all(len(g) == 1 for g in parse(res.stdout)), "non-adaptive --entropy writes one column")


def golden_agreement(got, want):
    """Per row ||got - want||_1 <= 1e-9 and relative 1e-9 wherever want >= 1e-200; a message or None."""
    l1 = np.abs(got - want).sum(axis=1)
    big = np.abs(want) >= 1e-200
    rel = np.where(big, np.abs(got - want) / np.where(big, np.abs(want), 1.0), 0.0)
    if l1.max() > 1e-9 or rel.max() > 1e-9:
        return f"row L1 {l1.max():.3g}, relative {rel.max():.3g}"
    return None


def test_golden_through_the_tool():
    """The generated golden file (tests/reference/make_golden.py) through text in and out: 17
    significant digits round-trip doubles, so the tool must agree as the library does."""
    with h5py.File(GOLDEN, "r") as f:
        for case in ["normal1_n16", "uniform8_n300", "ties", "masked_n50", "extreme_1e300", "extreme_1e5", "n1"]:
            g = f["cases"][case]
            logits = g["logits"][()]
            text = "\n".join(" ".join(f"{x:.17g}" if np.isfinite(x) else "-inf" for x in row) for row in logits) + "\n"
            for key in g:
                if not isinstance(g[key], h5py.Group):
                    continue
                spec = g[key].attrs["spec"]
                spec = spec.decode() if isinstance(spec, bytes) else spec
                res = run(["--normaliser", spec], text)
                check(res.returncode == 0, f"{case} {spec}: exit {res.returncode} {res.stderr}")
                if res.returncode != 0:
                    continue
                problem = golden_agreement(np.array(parse(res.stdout)), g[key]["p"][()])
                check(problem is None, f"{case} {spec}: {problem}")


def test_list():
    """--list prints every registered normaliser with its parameters; markdown for the docs tables."""
    res = run(["--list"])
    check(res.returncode == 0, f"--list exit {res.returncode}: {res.stderr}")
    names = [line.split(":", 1)[0] for line in res.stdout.splitlines() if line and not line[0].isspace()]
    check(names == sorted(names) and {"softmax", "adaptive", "ssmax", "entmax", "stieltjes"} <= set(names),
          f"--list names {names}")
    check("  beta: beta > 0, default 1; " in res.stdout, "softmax's beta with its range and default")
    check("  s=learn: " in res.stdout, "ssmax's learnable s")
    for name in names:   # every listed example is a spec the tool takes
        example = next(l for l in res.stdout.splitlines() if l.startswith(name + ":")).rsplit("e.g. ", 1)[1]
        ex = run(["--normaliser", example], "1 2 3\n")
        check(ex.returncode == 0, f"example {example}: exit {ex.returncode} {ex.stderr}")
    md = run(["--list", "markdown"])
    check(md.returncode == 0 and md.stdout.count("\n") == len(names) + 2, "one markdown row per normaliser")
    bad = run(["--list", "yaml"])
    check(bad.returncode == 2 and "unknown format" in bad.stderr, f"--list yaml: {bad.returncode} {bad.stderr}")


def test_bad_input():
    cases = [
        (["--normaliser", "softmax"], "1 2\n3 abc 4\n", ["line 2", "column 2", "'abc'"]),
        (["--normaliser", "softmax"], "1 2\n3 nan\n", ["line 2", "NaN"]),
        (["--normaliser", "softmax"], "1 2\n3 inf\n", ["line 2", "+inf"]),
        (["--normaliser", "softmax"], "1 2\n\n3\n", ["line 2", "empty row"]),
        (["--normaliser", "softmax"], "1 2\n   \n3\n", ["line 2", "empty row"]),   # blank lines at the end are accepted
        (["--normaliser", "softmax"], "-inf -inf\n", ["line 1", "masked"]),
        (["--normaliser", "softmix"], "1 2\n", ["unknown normaliser 'softmix'"]),
        (["--normaliser", "topk:j=2"], "1 2\n", ["unknown parameter 'j'"]),
        (["--normaliser", "entmax:alpha=2.5"], "1 2\n", ["alpha=2.5", "1 < alpha <= 2"]),
        (["--normaliser", "entmax:alpha=1"], "1 2\n", ["alpha=1", "out of range"]),
        (["--normaliser", "topk:k=0"], "1 2\n", ["k=0", "k an integer >= 1"]),
        (["--normaliser", "stieltjes:q=0.5"], "1 2\n", ["q=0.5", "q >= 1"]),
        (["--normaliser", "softmax", "--bogus"], "1 2\n", ["bogus"]),
        ([], "1 2\n", ["--normaliser"]),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.txt")
        fresh = os.path.join(tmp, "fresh.txt")
        with open(out, "w") as f:
            f.write("previous content\n")
        for args, stdin, needles in cases:
            for target in (out, fresh):
                res = run(args + ["--output", target], stdin)
                check(res.returncode == 2, f"{args} {stdin!r}: exit {res.returncode}, want 2")
                lines = res.stderr.strip().splitlines()
                check(len(lines) == 1, f"{args}: want one error line, got {res.stderr!r}")
                for needle in needles:
                    check(needle in res.stderr, f"{args}: {needle!r} not in {res.stderr!r}")
                check(res.stdout == "", f"{args}: wrote to stdout")
            check(open(out).read() == "previous content\n", f"{args}: existing output overwritten")
            check(not os.path.exists(fresh), f"{args}: partial output file created")
            check(sorted(os.listdir(tmp)) == ["out.txt"], f"{args}: stray files {os.listdir(tmp)}")
        res = run(["--normaliser", "softmax"], "1 2\n3 abc\n")
        check(res.returncode == 2 and res.stdout == "", "stdout must stay empty on bad input")
        res = run(["--normaliser", "softmax", "--input", os.path.join(tmp, "missing.txt")])
        check(res.returncode == 2 and "missing.txt" in res.stderr, "missing input file")


if __name__ == "__main__":
    if not os.path.exists(BIN):
        print("missing binary", BIN)
        sys.exit(1)
    for test in [test_softmax_layout_and_precision, test_files_and_entropy, test_list, test_golden_through_the_tool,
                 test_bad_input]:
        test()
        print("done:", test.__name__)
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("all passed")
