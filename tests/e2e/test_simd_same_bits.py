"""Same bits on every ISA (docs/architecture.md#determinism): each experiment's tiny point and
sharp-normalise run with SHARP_SIMD=avx2 and SHARP_SIMD=avx512 give identical data, bit for bit; the
result file records which ISA ran (root attribute `simd`), sharp-simd names it; a bad SHARP_SIMD is
bad input (exit 2, nothing written). Skipped, with a message, on a CPU without AVX-512.
ctest runs it with SHARP_BIN_DIR set; standalone: SHARP_BIN_DIR=build/bin /usr/bin/python3 <this>.
"""
import os
import random
import sys
import unittest

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ResultDirCase, data_differences, run  # noqa: E402
from test_declared_outputs import NEEDS_MODEL, TINY  # noqa: E402


def cpu_has_avx512():
    with open("/proc/cpuinfo") as f:
        flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    return all(x in flags for x in ("avx512f", "avx512dq", "avx512bw", "avx512vl"))


ISAS = ("avx2", "avx512")


class SameBitsOnEveryIsa(ResultDirCase):
    def run_tiny(self, exp, isa):
        args = list(TINY[exp])
        if exp in NEEDS_MODEL:   # one model for both runs (the trainer itself is compared below)
            args += ["--checkpoint", self.model(NEEDS_MODEL[exp])]
        out = self.path(f"{exp}-{isa}.h5")
        run(f"sharp-{exp}", *args, "--out", out, "--quiet", check=0, env={"SHARP_SIMD": isa})
        return out

    def model(self, trainer):
        path = self.path(f"model-{trainer}.h5")
        if not os.path.exists(path):
            run(f"sharp-{trainer}", *TINY[trainer], "--out", path, "--quiet", check=0, env={"SHARP_SIMD": "avx2"})
        return path

    def test_every_experiment_gives_the_same_data(self):
        for exp in TINY:
            with self.subTest(experiment=exp):
                files = {isa: self.run_tiny(exp, isa) for isa in ISAS}
                self.assertEqual(data_differences(files["avx2"], files["avx512"]), [])
                for isa, path in files.items():
                    with h5py.File(path, "r") as f:
                        simd = f.attrs["simd"]
                        self.assertEqual(simd.decode() if isinstance(simd, bytes) else simd, isa)

    def test_normalise_gives_the_same_text(self):
        rng = random.Random(7)
        rows = []
        for n in (16, 100, 3000, 5000):
            for sigma in (0.5, 4.0):
                row = [f"{rng.gauss(0.0, sigma):.17g}" for _ in range(n)]
                row[3] = "-inf"
                rows.append(" ".join(row))
        text = "\n".join(rows) + "\n"
        for spec in ("softmax", "softmax:beta=3", "adaptive", "ssmax:s=0.43", "topk:k=3", "entmax15", "stieltjes:q=4"):
            for extra in ([], ["--entropy"]):
                with self.subTest(spec=spec, extra=extra):
                    outs = {isa: run("sharp-normalise", "--normaliser", spec, *extra, check=0, input=text,
                                     env={"SHARP_SIMD": isa}).stdout for isa in ISAS}
                    self.assertTrue(outs["avx2"])
                    self.assertEqual(outs["avx2"], outs["avx512"])

    def test_a_bad_setting_is_bad_input(self):
        out = self.path("bad.h5")
        p = run("sharp-bounds", "--n", "4", "--trials", "1", "--out", out, env={"SHARP_SIMD": "avx1024"})
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("SHARP_SIMD='avx1024': expected avx2, avx512 or auto", p.stderr)
        self.assertFalse(os.path.exists(out))
        p = run("sharp-normalise", "--normaliser", "softmax", input="1 2 3\n", env={"SHARP_SIMD": "sse"})
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("SHARP_SIMD='sse'", p.stderr)
        p = run("sharp-simd", env={"SHARP_SIMD": "avx3"})
        self.assertEqual(p.returncode, 2, p.stderr)

    def test_sharp_simd_names_the_isa(self):
        self.assertTrue(run("sharp-simd", check=0, env={"SHARP_SIMD": "auto"}).stdout.startswith("avx512 "))
        for isa in ISAS:
            self.assertTrue(run("sharp-simd", check=0, env={"SHARP_SIMD": isa}).stdout.startswith(isa + " "))


if __name__ == "__main__":
    if not cpu_has_avx512():
        print("skipped: this CPU lacks AVX-512 (F, DQ, BW, VL), so only SHARP_SIMD=avx2 can run here")
        sys.exit(77)
    unittest.main()
