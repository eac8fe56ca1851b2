"""sharp-train-text and sharp-eval-text end to end (docs/science.md#algorithmic-text): a training is
bit-identical with one and two threads and after SIGKILL and resume; a small model trained on
minimum beats chance by at least 3x in greedy exact match at its training lengths (the measured
margin is printed) and its answer rows' head measures are sane (entropy before and after beta, the
answers' largest index); eval-text applies adaptive at inference to a softmax-trained model and refuses it
for a model with learned scalars; max_value trains and evaluates (no index in its answers, no trace);
the trainer prints a progress line at each evaluation unless --quiet; bad input is one line with exit 2.
ctest runs it with SHARP_BIN_DIR set; standalone: SHARP_BIN_DIR=build/bin /usr/bin/python3 <this>.
"""
import os
import signal
import subprocess
import sys
import time
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import BIN, ResultDirCase, last_point_id, run, stalled  # noqa: E402

TINY = ["--layers", "1", "--heads", "2", "--d-model", "16", "--batch", "4", "--warmup", "2",
        "--lengths", "4,5", "--eval-samples", "8", "--quiet"]
# The learning test: about 0.04 s per step with 2 threads on a 2-core VM (35 s). RoPE: without
# positions (NoPE) the model must count to name the minimum's index, and 1500 steps reach only 1.7x.
LEARN = ["--positional", "rope", "--layers", "2", "--heads", "4", "--d-model", "64", "--batch", "32", "--lr", "3e-3", "--warmup", "50",
         "--lengths", "4,5,7", "--eval-every", "400", "--eval-samples", "64", "--quiet"]
LEARN_STEPS = "800"


class TrainEvalText(ResultDirCase):
    def test_threads_and_sigkill_resume_give_the_same_weights(self):
        grid = [*TINY, "--steps", "400", "--eval-every", "100"]
        a, b = self.path("t1.h5"), self.path("t2.h5")
        run("sharp-train-text", *grid, "--threads", "1", "--out", a, check=0)
        run("sharp-train-text", *grid, "--threads", "2", "--out", b, check=0)
        self.assertSameData(a, b)
        out = self.path("killed.h5")
        parts = out + ".parts"
        # The point stalls after its first checkpoint (SHARP_INJECT_STALL) until the kill.
        proc = subprocess.Popen([os.path.join(BIN, "sharp-train-text"), *grid, "--threads", "1", "--out", out,
                                 "--checkpoint-every", "0.05"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=stalled(last_point_id("sharp-train-text", *grid), "checkpoint"))
        deadline, ckpt = time.time() + 120, None
        while time.time() < deadline and ckpt is None:
            if os.path.isdir(parts):
                found = [f for f in os.listdir(parts) if f.endswith(".ckpt.h5")]
                ckpt = found[0] if found else None
            time.sleep(0.002)
        self.assertIsNotNone(ckpt, "no checkpoint appeared")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        self.assertFalse(os.path.exists(out))
        run("sharp-train-text", *grid, "--threads", "1", "--out", out, check=0)
        self.assertSameData(a, out)
        with h5py.File(a, "r") as f:
            i = f["points/id"].asstr()[0]
            self.assertEqual(list(f["arrays"][i]["curve_step"][()]), [100, 200, 300, 400])

    def test_small_model_on_minimum_beats_chance_3x(self):
        model = self.path("train-text.h5")
        t0 = time.time()
        run("sharp-train-text", *LEARN, "--steps", LEARN_STEPS, "--threads", "2", "--out", model, check=0)
        trained = time.time() - t0
        ev = self.path("eval-text.h5")
        run("sharp-eval-text", "--checkpoint", model, "--length", "4,5,7", "--samples", "200",
            "--normaliser", "trained,adaptive", "--threads", "2", "--out", ev, "--quiet", check=0)
        with h5py.File(ev, "r") as f:
            lengths = f["points/params/length"][()]
            acc = f["points/exact_final.trained"][()]
            adaptive = f["points/exact_final.adaptive"][()]
            entropy = f["points/answer_entropy.trained"][()]
            uniform = f["points/answer_entropy_uniform.trained"][()]
            delta = f["points/answer_delta.trained"][()]
            delta_max = f["points/answer_delta_max.trained"][()]
            before = f["points/answer_entropy_before_beta.trained"][()]
            adaptive_after = f["points/answer_entropy.adaptive"][()]
            adaptive_before = f["points/answer_entropy_before_beta.adaptive"][()]
            i = f["points/id"].asstr()[0]
            per_head = f["arrays"][i]["answer_entropy_heads.trained"][()]
            per_head_before = f["arrays"][i]["answer_entropy_before_beta_heads.trained"][()]
            answer_index = {int(f["points/params/length"][k]): f["arrays"][p]["answer_index"][()]
                            for k, p in enumerate(f["points/id"].asstr()[()])}
        chance = float(np.mean(1.0 / lengths))
        mean = float(np.mean(acc))
        print(f"minimum, {LEARN_STEPS} steps in {trained:.0f} s: exact match {mean:.3f} per length {acc}, "
              f"chance {chance:.3f}, margin {mean / chance:.2f}x; adaptive at inference {adaptive}")
        self.assertGreaterEqual(mean, 3 * chance)
        self.assertTrue(np.all(np.isfinite(adaptive)))
        # The answer rows' head measures: below uniform attention's entropy, spreads ordered, per head.
        print(f"answer rows: entropy {entropy} of uniform {uniform}, delta {delta}, delta max {delta_max}")
        self.assertTrue(np.all((entropy >= 0) & (entropy <= uniform)))
        self.assertTrue(np.all((delta > 0) & (delta <= delta_max)))
        self.assertEqual(per_head.shape, (2, 4))
        # Softmax: the entropy before beta is the same rows' entropy (up to the float rounding of p);
        # adaptive at inference sharpens (beta >= 1), so its rows lie at or below their own before-beta.
        self.assertEqual(per_head_before.shape, (2, 4))
        np.testing.assert_allclose(before, entropy, rtol=1e-5)
        self.assertTrue(np.all(adaptive_after <= adaptive_before + 1e-6), (adaptive_after, adaptive_before))
        self.assertTrue(np.any(adaptive_after < adaptive_before - 1e-3), (adaptive_after, adaptive_before))
        # minimum's answer is an index: one per sample, inside the sample, every index seen at length 7.
        for length, index in answer_index.items():
            self.assertEqual(index.shape, (200,))
            self.assertTrue(np.all((index >= 0) & (index < length)), index)
        self.assertEqual(set(answer_index[7]), set(range(7)))

    def test_max_value_trains_and_evaluates_with_no_index_in_its_answers(self):
        model = self.path("max_value.h5")
        run("sharp-train-text", *TINY, "--algorithms", "max_value", "--steps", "10", "--eval-every", "5",
            "--out", model, check=0)
        ev = self.path("eval-max-value.h5")
        run("sharp-eval-text", "--checkpoint", model, "--algorithm", "max_value,minimum", "--length", "4,24",
            "--samples", "6", "--out", ev, "--quiet", check=0)
        with h5py.File(ev, "r") as f:
            algorithms = f["points/params/algorithm"].asstr()[()]
            evaluated = f["points/evaluated"][()]
            exact = f["points/exact_final.trained"][()]
            for k, i in enumerate(f["points/id"].asstr()[()]):
                index = f["arrays"][i]["answer_index"][()]
                if algorithms[k] == "max_value":
                    self.assertEqual(evaluated[k], 1)
                    self.assertTrue(0.0 <= exact[k] <= 1.0)
                    self.assertEqual(list(index), [-1] * 6)   # the answer is a copied value
                else:
                    self.assertEqual(evaluated[k], 0)        # not trained on minimum
                    self.assertEqual(len(index), 0)
        p = run("sharp-train-text", *TINY, "--algorithms", "max_value", "--trace", "on", "--steps", "10",
                "--out", self.path("traced.h5"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("max_value has no trace", p.stderr)

    def test_progress_line_at_each_evaluation_unless_quiet(self):
        grid = [a for a in TINY if a != "--quiet"] + ["--steps", "10", "--eval-every", "5"]
        p = run("sharp-train-text", *grid, "--out", self.path("loud.h5"), check=0)
        lines = [l for l in p.stderr.splitlines() if " step " in l]
        self.assertEqual(len(lines), 2, p.stderr)
        for line, step in zip(lines, (5, 10)):
            self.assertRegex(line, rf"^[0-9a-f]{{16}} step {step}/10: train loss [0-9.]+, eval loss [0-9.]+, "
                                   r"exact match [0-9.]+ on the evaluation set; elapsed .+, remaining .+$")
        q = run("sharp-train-text", *grid, "--quiet", "--out", self.path("quiet.h5"), check=0)
        self.assertEqual(q.stderr, "")

    def test_learned_ssmax_starts_at_one_over_ln_of_the_longest_training_row(self):
        # One step at lr 1e-12 leaves s where it started. The longest row of minimum at lengths 4, 5
        # without trace is its token bound at length 5 (docs/science.md#learned-scalars): name and
        # ":\n" 3, "key: " 2 + the array 2 + 5·5 digits + 4 spaces, "\n" 1, the names line 8, the
        # index 1, "\n\n" 2: 48 tokens, so s = 1/ln 48 (not 1/ln 2048, --max-length).
        model = self.path("ssmax-start.h5")
        at = TINY.index("--warmup")
        args = TINY[:at] + TINY[at + 2:]
        run("sharp-train-text", *args, "--steps", "1", "--warmup", "0", "--lr", "1e-12", "--eval-every", "1",
            "--normaliser", "ssmax:s=learn", "--out", model, check=0)
        with h5py.File(model, "r") as f:
            i = f["points/id"].asstr()[0]
            names = [k for k in f["arrays"][i] if k.startswith("param.") and k.endswith(".norm.s")]
            self.assertEqual(len(names), 1, list(f["arrays"][i]))
            s = f["arrays"][i][names[0]][()]
        np.testing.assert_allclose(s, 1 / np.log(48.0), rtol=1e-6)

    def test_learned_scalars_refuse_another_normaliser_at_inference_and_bad_input_exits_2(self):
        model = self.path("ssmax.h5")
        run("sharp-train-text", *TINY, "--steps", "5", "--eval-every", "5", "--normaliser", "ssmax:s=learn",
            "--out", model, check=0)
        p = run("sharp-eval-text", "--checkpoint", model, "--length", "4", "--samples", "2",
                "--normaliser", "trained,adaptive", "--out", self.path("e.h5"), "--quiet")
        self.assertEqual(p.returncode, 2, p.stderr)   # refused before any work (issue 26 item 8)
        self.assertIn("learned scalars", p.stderr)
        run("sharp-eval-text", "--checkpoint", model, "--length", "4", "--samples", "2", "--out",
            self.path("e2.h5"), "--quiet", check=0)
        for binary, args, needle in [
            ("sharp-train-text", ["--algorithms", "mergesort"], "--algorithms"),
            ("sharp-train-text", ["--lengths", "3"], "--lengths"),
            ("sharp-train-text", ["--algorithms", "heapsort", "--trace", "on", "--lengths", "6"], "no (algorithm, length)"),
            ("sharp-train-text", ["--d-model", "30", "--heads", "4"], "d_model"),
            ("sharp-eval-text", ["--checkpoint", self.path("missing.h5")], "--checkpoint"),
            ("sharp-eval-text", ["--checkpoint", model, "--normaliser", "ssmax:s=learn"], "--normaliser"),
        ]:
            with self.subTest(args=args):
                p = run(binary, *args, "--out", self.path("bad.h5"))
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                self.assertIn(needle, p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
