"""Issue 26 item 2: training checkpoints (PATH.h5.parts/<id>.ckpt.h5) are checksummed and validated
like parts. A flipped byte of saved weights, a NaN weight, step = 10^9, a wrong-length array or
another point's state each make the rerun set the checkpoint aside as <id>.ckpt.h5.bad-<k> (k the
first unused integer), name it on stderr and train that point again from step 0, so the result has
the bits of an uninterrupted run (before: other final weights with exit 0, a run that ended at once,
or every rerun failing until the file was deleted by hand)."""
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
from faults_support import BIN, ResultDirCase, last_point_id, run, stalled  # noqa: E402

sys.path.insert(0, os.path.join(os.environ.get("SHARP_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "../..")),
                                "python"))
from sharp.results import data_checksum  # noqa: E402

GRID = ["--width", "32", "--batch", "64", "--lr", "1e-2", "--eval-samples", "256", "--steps", "1500",
        "--eval-every", "500", "--threads", "1", "--quiet"]


def restamped(damage):
    """A damage that keeps the checkpoint's checksum right: only validation can catch it."""
    def apply(f):
        damage(f)
        f.attrs["checksum"] = data_checksum(f)
    return apply


def flip_a_weight_byte(path):
    """Bit rot on disk: one byte in the middle of the weights' stored (deflated) chunk."""
    with h5py.File(path, "r") as f:
        chunk = f["state/arrays/params"].id.get_chunk_info(0)
        offset = chunk.byte_offset + chunk.size // 2
    with open(path, "r+b") as fh:
        fh.seek(offset)
        b = fh.read(1)[0]
        fh.seek(offset)
        fh.write(bytes([b ^ 0x10]))


def changed_weight(f):
    """A weight rewritten without a new checksum: the file reads, only the checksum can tell."""
    params = f["state/arrays/params"]
    params[3] = params[3] + 1.0


def nan_weight(f):
    f["state/arrays/params"][5] = np.nan


def huge_step(f):
    f["state/metrics/step"][()] = np.int64(10**9)


def short_array(f):
    values = f["state/arrays/adam_m"][()]
    del f["state/arrays/adam_m"]
    f.create_dataset("state/arrays/adam_m", data=values[:-1])


def another_point(f):
    f.attrs["point_id"] = "0123456789abcdef"


class DamagedCheckpoints(ResultDirCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.ref = cls.class_path("ref.h5")
        run("sharp-train-max", *GRID, "--out", cls.ref, check=0)
        # A training stopped by SIGKILL just after its first checkpoint.
        cls.killed = cls.class_path("killed.h5")
        proc = subprocess.Popen([os.path.join(BIN, "sharp-train-max"), *GRID, "--out", cls.killed,
                                 "--checkpoint-every", "0.02"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=stalled(last_point_id("sharp-train-max", *GRID), "checkpoint"))
        parts, deadline = cls.killed + ".parts", time.time() + 120
        while time.time() < deadline and not (os.path.isdir(parts) and any(n.endswith(".ckpt.h5") for n in os.listdir(parts))):
            time.sleep(0.002)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        cls.ckpt_name = next(n for n in os.listdir(parts) if n.endswith(".ckpt.h5"))

    def resume_with(self, name, damage, already_bad=0):
        out = self.path(name + ".h5")
        shutil.copytree(self.killed + ".parts", out + ".parts")
        ckpt = os.path.join(out + ".parts", self.ckpt_name)
        with h5py.File(ckpt, "r") as f:
            self.assertGreater(int(f["state/metrics/step"][()]), 0)
        if isinstance(damage, str):
            flip_a_weight_byte(ckpt)
        else:
            with h5py.File(ckpt, "a") as f:
                damage(f)
        for k in range(1, already_bad + 1):
            open(f"{ckpt}.bad-{k}", "w").close()
        p = run("sharp-train-max", *GRID, "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        aside = f"{ckpt}.bad-{already_bad + 1}"
        self.assertIn(f"set aside as {aside}, the point restarts from step 0", p.stderr)
        self.assertSameData(self.ref, out)
        return p.stderr

    def test_a_flipped_byte_of_the_weights(self):
        # The weights are stored deflated: a flipped stored byte breaks the chunk's decoding.
        self.assertIn("cannot be read", self.resume_with("flipped", "flip"))

    def test_a_changed_weight(self):
        self.assertIn("do not match its checksum", self.resume_with("changed", changed_weight))

    def test_a_nan_weight(self):
        self.assertIn("'params' holds a value that is not finite", self.resume_with("nan", restamped(nan_weight)))

    def test_a_step_beyond_the_training(self):
        self.assertIn("step 1000000000 is outside [0, 1500)", self.resume_with("step", restamped(huge_step), 2))

    def test_a_wrong_length_array(self):
        self.assertIn("'adam_m' has", self.resume_with("short", restamped(short_array)))

    def test_another_points_state(self):
        self.assertIn("state of point 0123456789abcdef", self.resume_with("other", another_point))

    def test_a_sound_checkpoint_is_resumed(self):
        """The check that can fail: a sound checkpoint is used, not set aside, and resumes."""
        out = self.path("sound.h5")
        shutil.copytree(self.killed + ".parts", out + ".parts")
        p = run("sharp-train-max", *GRID, "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("set aside", p.stderr)
        self.assertSameData(self.ref, out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
