"""Issue 26 item 8: sharp-eval-text and sharp-transformer-dispersion check every --checkpoint model once,
before any work, with sharp-train-text's own parameter ranges: a missing or mistyped parameter column,
a size beyond train-text's maxima (layers 10^9 used to allocate gigabytes, -1 wrapped around), heads
not dividing d_model, an unknown positional scheme, normaliser or algorithm, a missing, misshapen,
NaN, inf or non-float32 weight tensor, and a part file given as the model. (A normaliser applied at
inference to a model with learned scalars is not an error: that model keeps its own heads and its row
says applied 0; e2e_test_text_train_eval tests it.) Each is exit 2 with one line naming the file,
the point and the problem, and nothing written. Runs are capped at 2 GB of address space, so a run that
would allocate for a huge model fails fast instead of taking the machine's memory."""
import os
import shutil
import subprocess
import sys
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faults_support import BIN, ResultDirCase, capped, listing, run  # noqa: E402

TINY = ["--layers", "1", "--heads", "2", "--d-model", "16", "--batch", "4", "--warmup", "1", "--lengths", "4,5",
        "--eval-samples", "8", "--steps", "4", "--eval-every", "2", "--quiet"]
EVAL = ["--length", "4", "--samples", "2", "--quiet"]


def strip_checksums(f):
    """A file without its checksum is read with a note (issue 26 item 4): removing it lets the damage
    below reach the model check rather than the checksum's (which would refuse it all the same)."""
    for name in [a for a in f.attrs if "checksum" in a]:
        del f.attrs[name]


def replace(f, path, data):
    del f[path]
    f[path] = data


def set_param(name, value):
    def mutate(f):
        if isinstance(value, str):
            replace(f, "points/params/" + name, np.array([value], dtype=h5py.string_dtype()))
        else:
            replace(f, "points/params/" + name, np.array([value], dtype=np.int64 if isinstance(value, int) else float))
    return mutate


def drop(path):
    def mutate(f):
        del f[path]
    return mutate


def weight(tensor, change):
    """Changes tensor `tensor` of the file's one point: change(array) -> new array."""
    def mutate(f):
        point = f["points/id"].asstr()[0]
        path = f"arrays/{point}/param.{tensor}"
        replace(f, path, change(f[path][()].copy()))
    return mutate


def drop_tensor(tensor):
    def mutate(f):
        del f[f"arrays/{f['points/id'].asstr()[0]}/param.{tensor}"]
    return mutate


def poke(value):
    def change(a):
        a.flat[0] = value
        return a
    return change


# (name, damage, words the refusal must contain)
DAMAGES = [
    ("missing layers column", drop("points/params/layers"), ["layers", "missing"]),
    ("missing normaliser column", drop("points/params/normaliser"), ["normaliser", "missing"]),
    ("layers as text", set_param("layers", "two"), ["layers", "integer"]),
    ("positional as a number", set_param("positional", 3), ["positional", "text"]),
    ("layers 10^9", set_param("layers", 10**9), ["layers", "48"]),
    ("layers -1", set_param("layers", -1), ["layers", ">= 1"]),
    ("d_model 2^40", set_param("d_model", 2**40), ["d_model", "2^12"]),
    ("max_length 8", set_param("max_length", 8), ["max_length", ">= 16"]),
    ("heads do not divide d_model", set_param("heads", 3), ["multiple of heads"]),
    ("unknown positional", set_param("positional", "bogus"), ["positional", "bogus"]),
    ("unknown normaliser", set_param("normaliser", "bogus"), ["normaliser", "bogus"]),
    ("unknown algorithm", set_param("algorithms", "minimum+bogus"), ["algorithms", "bogus"]),
    ("bad lengths", set_param("lengths", "4+x"), ["lengths", "'x'"]),
    ("bad trace", set_param("trace", "maybe"), ["trace", "maybe"]),
    ("NaN weight", weight("embedding", poke(np.nan)), ["param.embedding", "finite"]),
    ("inf weight", weight("layers.0.mlp.in.weight", poke(np.inf)), ["param.layers.0.mlp.in.weight", "finite"]),
    ("not a float32", weight("final_ln.gain", poke(0.1)), ["param.final_ln.gain", "float32"]),
    ("wrong shape", weight("embedding", lambda a: a[:-1]), ["param.embedding", "shape"]),
    ("missing tensor", drop_tensor("final_ln.bias"), ["param.final_ln.bias", "no tensor"]),
]
HUGE = [d for d in DAMAGES if d[0] in ("layers 10^9", "layers -1", "d_model 2^40")]


class TextCheckpointChecks(ResultDirCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.model = cls.class_path("m.h5")
        run("sharp-train-text", *TINY, "--out", cls.model, "--keep-parts", check=0)
        with h5py.File(cls.model, "r") as f:
            cls.point = f["points/id"].asstr()[0]

    def damaged(self, name, mutate):
        path = self.path(name.replace(" ", "_").replace("^", "") + ".h5")
        shutil.copy(self.model, path)
        with h5py.File(path, "r+") as f:
            strip_checksums(f)
            mutate(f)
        return path

    def assertRefused(self, p, out, words):
        self.assertEqual(p.returncode, 2, p.stderr[-2000:])
        # One line of refusal; the reader's note that the (stripped) checksum is absent aside.
        refusal = [line for line in p.stderr.strip().splitlines() if not line.startswith("note:")]
        self.assertEqual(len(refusal), 1, p.stderr[-2000:])
        for w in words:
            self.assertIn(w, p.stderr)
        self.assertFalse(os.path.exists(out))
        self.assertFalse(os.path.exists(out + ".parts"))

    def test_the_undamaged_model_is_evaluated(self):
        out = self.path("ok.h5")
        run("sharp-eval-text", "--checkpoint", self.model, *EVAL, "--out", out, check=0)

    def test_every_damage_is_refused_by_eval_text(self):
        for name, mutate, words in DAMAGES:
            with self.subTest(name):
                model = self.damaged(name, mutate)
                out = model + ".eval.h5"
                p = run("sharp-eval-text", "--checkpoint", model, *EVAL, "--out", out, timeout=120)
                self.assertRefused(p, out, [model, self.point, *words])
                p = run("sharp-eval-text", "--checkpoint", model + "#" + self.point, *EVAL, "--out", out, "--dry-run",
                        timeout=120)
                self.assertEqual(p.returncode, 2, name + ": " + p.stderr[-2000:])

    def test_damages_are_refused_under_a_memory_cap(self):
        # Refused before anything is sized by the file's numbers: 2 GB are plenty.
        for name, mutate, words in HUGE:
            with self.subTest(name):
                model = self.damaged(name, mutate)
                out = model + ".eval.h5"
                p = subprocess.run([os.path.join(BIN, "sharp-eval-text"), "--checkpoint", model, *EVAL, "--out", out],
                                   capture_output=True, text=True, timeout=120, preexec_fn=capped(2))
                self.assertRefused(p, out, [model, *words])

    def test_transformer_dispersion_refuses_them_too(self):
        for name, mutate, words in [d for d in DAMAGES if d[0] in ("layers 10^9", "NaN weight", "wrong shape")]:
            with self.subTest(name):
                model = self.damaged(name, mutate)
                out = model + ".dispersion.h5"
                p = run("sharp-transformer-dispersion", "--checkpoint", model, "--n", "8", "--quiet", "--out", out,
                        timeout=120)
                self.assertRefused(p, out, [model, self.point, *words])

    def test_a_part_file_is_named_as_such(self):
        part = os.path.join(self.model + ".parts", self.point + ".h5")
        self.assertTrue(os.path.exists(part))
        before = listing(self.class_dir)
        out = self.path("p.h5")
        p = run("sharp-eval-text", "--checkpoint", part, *EVAL, "--out", out)
        self.assertRefused(p, out, [part, "part file of an unfinished run", "not a merged result"])
        self.assertNotIn("HDF5", p.stderr)
        self.assertEqual(listing(self.class_dir), before)


if __name__ == "__main__":
    unittest.main(verbosity=2)
