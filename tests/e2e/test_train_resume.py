"""sharp-train-max end to end: a training killed with SIGKILL after a checkpoint resumes and ends
with the same weights, curve and accuracy as an uninterrupted run; the data do not depend on
--threads; a list of seeds trains one model per seed; bad input is one line with exit 2.
ctest runs it with SHARP_BIN_DIR set; standalone: SHARP_BIN_DIR=build/bin /usr/bin/python3 <this>.
A few seconds of CPU in total (tiny models).
"""
import os
import shutil
import signal
import subprocess
import sys
import time
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import BIN, ResultDirCase, last_point_id, run as run_binary, stalled  # noqa: E402
from h5compare import data_differences  # noqa: E402

sys.path.insert(0, os.path.join(os.environ.get("SHARP_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "../..")),
                                "python"))
from sharp.results import data_checksum  # noqa: E402

EXE = os.path.join(BIN, "sharp-train-max")
# A tiny model: about 0.2 ms per step on one core.
TINY = ["--width", "32", "--batch", "64", "--lr", "1e-2", "--eval-samples", "256"]


def run(*args, check=None):
    return run_binary("sharp-train-max", *args, check=check)


class TrainMax(ResultDirCase):
    def test_sigkill_after_a_checkpoint_then_rerun_equals_an_uninterrupted_run(self):
        grid = [*TINY, "--steps", "6000", "--eval-every", "500", "--threads", "1"]
        ref, out = self.path("ref.h5"), self.path("killed.h5")
        run(*grid, "--out", ref, "--quiet", check=0)
        parts = out + ".parts"
        # The point stalls after its first checkpoint (SHARP_INJECT_STALL) until the kill: caught
        # midway however fast the machine.
        proc = subprocess.Popen([EXE, *grid, "--out", out, "--quiet", "--checkpoint-every", "0.05"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=stalled(last_point_id("sharp-train-max", *grid), "checkpoint"))
        deadline, ckpt = time.time() + 120, None
        while time.time() < deadline and ckpt is None:
            if os.path.isdir(parts):
                found = [f for f in os.listdir(parts) if f.endswith(".ckpt.h5")]
                ckpt = os.path.join(parts, found[0]) if found else None
            time.sleep(0.002)
        self.assertIsNotNone(ckpt, "no checkpoint appeared")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        self.assertFalse(os.path.exists(out))
        with h5py.File(ckpt, "r") as f:
            step = int(f["state/metrics/step"][()])
        self.assertGreater(step, 0)
        self.assertLess(step, 6000)
        # A copy with a tampered checkpoint (its checksum stamped again, so that it is used) proves
        # that the rerun starts from the checkpoint.
        tampered = self.path("tampered.h5")
        shutil.copytree(parts, tampered + ".parts")
        with h5py.File(os.path.join(tampered + ".parts", os.path.basename(ckpt)), "r+") as f:
            f["state/arrays/params"][0] += 0.5
            f.attrs["checksum"] = data_checksum(f)
        run(*grid, "--out", out, "--quiet", check=0)
        self.assertSameData(ref, out)
        self.assertFalse(os.path.exists(parts))
        run(*grid, "--out", tampered, "--quiet", check=0)
        self.assertNotEqual(data_differences(ref, tampered), [])

    def test_same_data_with_one_and_two_threads_and_one_model_per_seed(self):
        grid = [*TINY, "--steps", "200", "--eval-every", "50", "--seed", "1,2"]
        a, b = self.path("t1.h5"), self.path("t2.h5")
        run(*grid, "--threads", "1", "--out", a, "--quiet", check=0)
        run(*grid, "--threads", "2", "--out", b, "--quiet", check=0)
        self.assertSameData(a, b)
        with h5py.File(a, "r") as f:
            ids = list(f["points/id"].asstr()[()])
            self.assertEqual(len(ids), 2)
            w = [f["arrays"][i]["param.psi.0.weight"][()] for i in ids]
            self.assertEqual(w[0].shape, (32, 11))
            self.assertFalse(np.array_equal(w[0], w[1]))
            for i in ids:
                arr = f["arrays"][i]
                self.assertEqual(list(arr["curve_step"][()]), [50, 100, 150, 200])
                self.assertEqual(len(arr["step_loss"]), 200)
                self.assertEqual(list(arr["model_shape"][()]), [11, 32, 1, 32, 10])
                self.assertEqual(arr["curve_eval_accuracy"][-1], f["points/accuracy"][ids.index(i)])
            self.assertTrue((f["points/accuracy"][()] > 0.5).all())

    def test_bad_input_is_one_line_and_exit_2(self):
        for args, needle in [(["--normaliser", "softmaxx"], "--normaliser"), (["--width", "0"], "--width"),
                             (["--lr", "0"], "--lr"), (["--schedule", "linear"], "--schedule"),
                             (["--warmup", "10", "--steps", "10"], "--warmup")]:
            with self.subTest(args=args):
                p = run(*args, "--out", self.path("x.h5"))
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                self.assertIn(needle, p.stderr)
                self.assertEqual(os.listdir(self.dir), [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
