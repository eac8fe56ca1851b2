"""End to end through the real binaries: bad input, resume after SIGKILL, thread-count
independence, shards, no-op reruns, stale parts, --status / --dry-run / --merge-only exit codes.
ctest runs it with SHARP_BIN_DIR set; standalone: SHARP_BIN_DIR=build/bin /usr/bin/python3 <this>.
"""
import os
import signal
import subprocess
import sys
import time
import unittest

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import (BIN, ResultDirCase, dry_run_points, finished_parts, last_point_id, run, stalled,  # noqa: E402
                          wait_for_parts)


class BadInput(ResultDirCase):
    CASES = [
        (["--n", "0"], "--n"),
        (["--logits", "two-point", "--n", "1"], "--n"),
        (["--theta", "0"], "--theta"),
        (["--theta", "-2"], "--theta"),
        (["--spread", "-1"], "--spread"),
        (["--trials", "0"], "--trials"),
        (["--n", "2^4..2^2"], "reversed"),
        (["--n", ""], "empty"),
        (["--n", "sixteen"], "--n"),
        (["--logits", "cauchy"], "--logits"),
        (["--frobnicate"], "unknown flag"),
        (["--config", "/nonexistent/dir/sweep.cfg"], "--config"),
        (["--out", "/proc/sharp-denied/x.h5"], "--out"),
    ]

    def test_each_bad_input_is_one_line_exit_2_and_writes_nothing(self):
        out = self.path("r.h5")
        for args, needle in self.CASES:
            with self.subTest(args=args):
                p = run("sharp-bounds", *args, "--out", out) if "--out" not in args else run("sharp-bounds", *args)
                self.assertEqual(p.returncode, 2, p.stderr)
                lines = p.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertIn(needle, lines[0])
                self.assertEqual(os.listdir(self.dir), [])

    def test_unwritable_out_under_a_regular_file(self):
        blocker = self.path("file")
        open(blocker, "w").close()
        p = run("sharp-bounds", "--n", "4", "--out", os.path.join(blocker, "x.h5"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("--out", p.stderr)

    def test_existing_result_is_not_overwritten_by_bad_input(self):
        out = self.path("r.h5")
        run("sharp-bounds", "--n", "4,8", "--out", out, "--quiet", check=0)
        with open(out, "rb") as fh:
            before = fh.read()
        run("sharp-bounds", "--n", "4,8", "--theta", "-1", "--out", out, check=2)
        with open(out, "rb") as fh:
            self.assertEqual(fh.read(), before)

    def test_help_lists_every_parameter_with_default_and_range(self):
        p = run("sharp-bounds", "--help", check=0)
        for flag in ["--n", "--spread", "--theta", "--logits", "--trials", "--seed", "--threads", "--shard",
                     "--merge-only", "--status", "--dry-run", "--quiet", "--config", "--out"]:
            self.assertIn(flag, p.stdout)
        self.assertIn("default 2^1..2^20", p.stdout)
        self.assertIn("reals > 0", p.stdout)


class Runs(ResultDirCase):
    GRID = ["--n", "2^2..2^12", "--spread", "0,1,8", "--theta", "0.5,2", "--logits",
            "uniform,one-hot,two-point,gaussian", "--trials", "2"]

    def test_schema_metrics_and_the_lemma(self):
        out = self.path("b.h5")
        run("sharp-bounds", *self.GRID, "--out", out, "--quiet", check=0)
        with h5py.File(out, "r") as f:
            self.assertEqual(f.attrs["schema"], "sharp/1")
            self.assertEqual(f.attrs["complete"], 1)
            self.assertEqual(f.attrs["experiment"], "bounds")
            P = len(f["points/id"])
            self.assertEqual(P, 11 * 3 * 2 * 4)
            for name in ["n", "spread", "theta", "logits", "trials", "seed"]:
                self.assertEqual(len(f["points/params"][name]), P)
            for m in ["alpha_max", "alpha_min", "bound_upper", "bound_lower", "worst_case_alpha_max",
                      "n_alpha_max", "entropy", "violations"]:
                self.assertEqual(len(f["points"][m]), P, m)
            self.assertEqual(int(f["points/violations"][()].sum()), 0)
            amax, ub, wc = f["points/alpha_max"][()], f["points/bound_upper"][()], f["points/worst_case_alpha_max"][()]
            self.assertTrue((amax <= ub * (1 + 1e-12)).all())
            self.assertTrue((amax <= wc * (1 + 1e-12)).all())
            laws = f["points/params/logits"].asstr()[()]
            onehot = laws == "one-hot"
            rel = abs(amax[onehot] - wc[onehot]) / wc[onehot]
            self.assertLess(rel.max(), 1e-12)
            self.assertIn("wall_seconds", f["timing"])
        # Up to date: a second identical command is a no-op, --status says complete.
        mtime = os.stat(out).st_mtime_ns
        p = run("sharp-bounds", *self.GRID, "--out", out, check=0)
        self.assertIn("up to date", p.stdout)
        self.assertEqual(os.stat(out).st_mtime_ns, mtime)
        run("sharp-bounds", *self.GRID, "--out", out, "--status", check=0)
        # Another configuration is refused, and --overwrite replaces it.
        p = run("sharp-bounds", "--n", "4", "--out", out, check=2)
        self.assertIn("another configuration", p.stderr)
        run("sharp-bounds", "--n", "4", "--out", out, "--overwrite", "--quiet", check=0)
        with h5py.File(out, "r") as f:
            self.assertEqual(len(f["points/id"]), 1)

    def test_same_data_with_one_and_two_threads(self):
        grid = ["--n", "2^10,2^17", "--logits", "uniform,gaussian", "--trials", "3"]
        a, b, c = self.path("t1.h5"), self.path("t2.h5"), self.path("t2single.h5")
        run("sharp-bounds", *grid, "--threads", "1", "--out", a, "--quiet", check=0)
        run("sharp-bounds", *grid, "--threads", "2", "--out", b, "--quiet", check=0)
        # One point with two threads: the threads work inside the point.
        run("sharp-bounds", "--n", "2^17", "--logits", "gaussian", "--trials", "3", "--threads", "2",
            "--out", c, "--quiet", check=0)
        self.assertSameData(a, b)
        with h5py.File(a, "r") as fa, h5py.File(c, "r") as fc:
            ids = list(fa["points/id"].asstr()[()])
            i = ids.index(fc["points/id"].asstr()[0])
            for m in ["alpha_max", "alpha_min", "entropy"]:
                self.assertEqual(fa["points"][m][i], fc["points"][m][0], m)
        for exp, args in [("sharp-weight-bound", ["--n", "16,64", "--trials", "20"]),
                          ("sharp-entropy-temperature", ["--n", "64,1024", "--beta-steps", "8"])]:
            x, y = self.path(exp + "1.h5"), self.path(exp + "2.h5")
            run(exp, *args, "--threads", "1", "--out", x, "--quiet", check=0)
            run(exp, *args, "--threads", "2", "--out", y, "--quiet", check=0)
            self.assertSameData(x, y)

    def test_sigkill_halfway_then_rerun_equals_an_uninterrupted_run(self):
        # The last point stalls until the kill (SHARP_INJECT_STALL): midway on any machine.
        grid = ["--n", "2^16", "--spread", ",".join(str(s) for s in range(1, 11)), "--trials", "2",
                "--threads", "1"]
        ref, out = self.path("ref.h5"), self.path("killed.h5")
        run("sharp-bounds", *grid, "--out", ref, "--quiet", check=0)
        parts = out + ".parts"
        total = len(dry_run_points("sharp-bounds", *grid))
        proc = subprocess.Popen([os.path.join(BIN, "sharp-bounds"), *grid, "--out", out, "--quiet"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=stalled(last_point_id("sharp-bounds", *grid)))
        wait_for_parts(parts, total - 1)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        self.assertFalse(os.path.exists(out))
        self.assertEqual(len(finished_parts(parts)), total - 1)
        p = run("sharp-bounds", *grid, "--out", out, "--status")
        self.assertEqual(p.returncode, 3, p.stdout)
        self.assertIn("missing", p.stdout)
        p = run("sharp-bounds", *grid, "--out", out, check=0)
        self.assertIn("resumed", p.stdout)
        self.assertSameData(ref, out)
        self.assertFalse(os.path.exists(parts))
        self.assertEqual([f for f in os.listdir(self.dir) if ".tmp." in f], [])

    def test_shards_then_merge_only_equal_a_local_run(self):
        grid = ["--n", "2^3..2^10", "--theta", "0.5,1,2"]
        ref, out = self.path("ref.h5"), self.path("sharded.h5")
        run("sharp-bounds", *grid, "--out", ref, "--quiet", check=0)
        p = run("sharp-bounds", *grid, "--out", out, "--merge-only")
        self.assertEqual(p.returncode, 3)
        self.assertIn("missing", p.stderr)
        run("sharp-bounds", *grid, "--out", out, "--shard", "0/3", "--quiet", check=0)
        self.assertFalse(os.path.exists(out))  # a shard never merges
        p = run("sharp-bounds", *grid, "--out", out, "--shard", "2/3", "--status")
        self.assertEqual(p.returncode, 3)
        run("sharp-bounds", *grid, "--out", out, "--shard", "1/3", "--quiet", check=0)
        run("sharp-bounds", *grid, "--out", out, "--shard", "2/3", "--quiet", check=0)
        run("sharp-bounds", *grid, "--out", out, "--status", check=0)
        run("sharp-bounds", *grid, "--out", out, "--merge-only", "--quiet", check=0)
        self.assertSameData(ref, out)

    def test_parts_of_another_configuration_are_refused(self):
        out = self.path("s.h5")
        run("sharp-bounds", "--n", "4,8", "--out", out, "--shard", "0/1", "--quiet", check=0)
        before = sorted(os.listdir(out + ".parts"))
        # n=8's part names no point of this grid (n=4's does: alone it would be a damaged part, set
        # aside and recomputed): another configuration, refused before anything is moved.
        p = run("sharp-bounds", "--n", "4,16", "--out", out)
        self.assertEqual(p.returncode, 2)
        self.assertIn("another configuration", p.stderr)
        self.assertEqual(sorted(os.listdir(out + ".parts")), before)

    def test_dry_run_prints_the_grid_and_writes_nothing(self):
        out = self.path("d.h5")
        p = run("sharp-bounds", "--n", "2^1..2^5", "--theta", "1,2", "--out", out, "--dry-run", check=0)
        self.assertIn("10 points", p.stdout)
        self.assertEqual(len(p.stdout.strip().splitlines()), 11)
        self.assertEqual(os.listdir(self.dir), [])

    def test_other_experiments_check_their_theorems(self):
        w, e = self.path("w.h5"), self.path("e.h5")
        run("sharp-weight-bound", "--n", "8,512", "--d-model", "16,64", "--weight-scale", "0.5,4",
            "--trials", "30", "--out", w, "--quiet", check=0)
        with h5py.File(w, "r") as f:
            self.assertEqual(int(f["points/violations"][()].sum()), 0)
            r = f["points/ratio_max"][()]
            self.assertTrue(((r > 0) & (r <= 1)).all())
            first = f["points/id"].asstr()[0]
            self.assertEqual(len(f["arrays"][first]["ratio"]), 30)
        run("sharp-entropy-temperature", "--n", "16,4096", "--logits", "uniform,gaussian,one-hot",
            "--out", e, "--quiet", check=0)
        with h5py.File(e, "r") as f:
            self.assertTrue((f["points/monotone"][()] == 1).all())
            self.assertLess(f["points/max_rel_error"][()].max(), 1e-6)


if __name__ == "__main__":
    unittest.main(verbosity=2)
