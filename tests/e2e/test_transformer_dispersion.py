"""sharp-transformer-dispersion end to end on tiny random transformers (1 layer, 2 heads, d_model 16):
the theorem's check (analysis/transformer_theorem.py) holds on bounded positions with and without
LayerNorm and reports ALiBi, index positions without LayerNorm and SSMax with a fixed s (the boundary
control) outside the hypothesis; with LayerNorm the certificate is the same at every n;
the lemma has no violating row for softmax, adaptive and ssmax heads; every head's δ stays under its
weight-norm bound; data do not depend on --threads; per-row arrays only on request; bad input
(positions beyond a learned table, a checkpoint with random-model flags or of the wrong experiment)
is exit 2 with nothing written; a model trained by sharp-train-text is measured through --checkpoint
(every model of its file, its own normaliser and learned scalars), also on prompts of its own task of
growing size (--input task); the figures draw from the result files. ctest runs it with SHARP_BIN_DIR set; a few seconds of CPU.
"""
import os
import subprocess
import sys
import unittest

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "../../analysis"))
from e2e_support import ResultDirCase, run  # noqa: E402
import common  # noqa: E402
import fig_transformer_alpha  # noqa: E402
import fig_transformer_entropy  # noqa: E402
import fig_transformer_logit_spread  # noqa: E402
import fig_transformer_trained  # noqa: E402
import transformer_theorem  # noqa: E402

BIN = "sharp-transformer-dispersion"
TINY = ["--layers", "1", "--heads", "2", "--d-model", "16", "--vocab", "16", "--quiet"]


class TransformerDispersion(ResultDirCase):
    def theorem(self, path):
        checks = transformer_theorem.check_models(common.load_result(path, "transformer-dispersion"))
        return {(c.key["positional"], c.key["layer_norm"]): c for c in checks}

    def test_theorem_holds_on_bounded_positions_and_fails_on_the_negative_controls(self):
        out = self.path("t.h5")
        run(BIN, *TINY, "--n", "2^5..2^11", "--positional", "none,sinusoidal,learned,rope,alibi,index",
            "--layer-norm", "0,1", "--max-length", "2048", "--out", out, check=0)
        checks = self.theorem(out)
        self.assertEqual(len(checks), 12)
        for key in [("none", 0), ("none", 1), ("rope", 0), ("rope", 1), ("sinusoidal", 1), ("learned", 1),
                    ("index", 1)]:
            self.assertTrue(checks[key].holds, f"{key}: {checks[key].verdict()}")
        for key in [("alibi", 0), ("alibi", 1), ("index", 0)]:
            self.assertFalse(checks[key].levels_off, f"{key}: {checks[key].verdict()}")
            self.assertIn("outside the hypothesis", checks[key].verdict())
        with h5py.File(out, "r") as f:
            self.assertEqual(int(np.sum(f["points/lemma_violations"][()])), 0)
            self.assertEqual(int(np.sum(f["points/weight_bound_violations"][()])), 0)
            ratio = f["points/weight_bound_ratio_max"][()]
            self.assertTrue(np.all((ratio > 0) & (ratio <= 1)), ratio)
        res = common.load_result(out, "transformer-dispersion")
        for (positional, ln), c in checks.items():
            certificates = [res.arrays(res.ids[i])["certificate"] for i in res.rows(positional=positional, layer_norm=ln)]
            bounds = [res.arrays(res.ids[i])["weight_bound"] for i in res.rows(positional=positional, layer_norm=ln)]
            self.assertTrue(all(np.all(b <= cert) for b, cert in zip(bounds, certificates)))
            if ln and positional != "alibi":   # LayerNorm's analytic R: not a bit moves with n
                self.assertTrue(all(np.array_equal(certificates[0], cert) for cert in certificates), positional)
        p = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "../../analysis/transformer_theorem.py"), out],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        # (learned or sinusoidal positions without LayerNorm may go either way: R is measured there, and a
        # learned table shows more of its rows as n grows)
        self.assertGreaterEqual(p.stdout.count("outside the hypothesis"), 3, p.stdout)
        # The boundary control: SSMax with s fixed, bounded positions, β = s·ln n grows
        boundary = self.path("boundary.h5")
        run(BIN, *TINY, "--n", "2^5..2^11", "--normaliser", "ssmax:s=0.36067376022224085", "--out", boundary, check=0)
        (control,) = transformer_theorem.check_models(common.load_result(boundary, "transformer-dispersion"))
        self.assertEqual(control.outcome, transformer_theorem.OUTSIDE, control.verdict())
        self.assertIn("beta grows", control.verdict())
        # The figures draw from the same file: one panel per (scheme, LayerNorm), the table one row per
        # model and two Gemma rows.
        written = []
        for module in (fig_transformer_alpha, fig_transformer_entropy, fig_transformer_logit_spread):
            written += module.make(out, self.path("figures"))
        self.assertEqual(len(written), 7)
        self.assertTrue(all(os.path.getsize(w) > 0 for w in written))
        with open(self.path("figures/transformer_logit_spread.md"), encoding="utf-8") as fh:
            table = fh.read()
        self.assertEqual(table.count("| outside the hypothesis"), p.stdout.count("outside the hypothesis"), table)
        self.assertEqual(table.count("(paper)"), 2, table)

    def test_lemma_has_no_violation_for_the_softmax_family(self):
        out = self.path("l.h5")
        run(BIN, *TINY, "--n", "16,100,512", "--normaliser", "softmax,adaptive,ssmax:s=0.3,softmax:beta=4",
            "--init-scale", "1,8", "--input", "uniform,needle", "--out", out, check=0)
        with h5py.File(out, "r") as f:
            rows = f["points/lemma_rows"][()]
            n = f["points/params/n"][()]
            self.assertTrue(np.all(rows == 2 * n))   # every row of both heads checked
            self.assertEqual(int(np.sum(f["points/lemma_violations"][()])), 0)
            beta = f["points/beta_max"][()]
            norm = f["points/params/normaliser"].asstr()[()]
            self.assertTrue(np.all(beta[norm == "softmax:beta=4"] == 4.0))
            self.assertTrue(np.all(beta[norm == "adaptive"] >= 1.0))

    def test_summaries_threads_and_row_arrays(self):
        one, two = self.path("1.h5"), self.path("2.h5")
        args = [*TINY, "--n", "64,96", "--causal", "0,1", "--samples", "2", "--positional", "rope"]
        run(BIN, *args, "--threads", "1", "--out", one, check=0)
        run(BIN, *args, "--threads", "2", "--out", two, check=0)
        self.assertSameData(one, two)
        res = common.load_result(one, "transformer-dispersion")
        for i, pid in enumerate(res.ids):
            a = res.arrays(pid)
            self.assertEqual(a["delta_max"].shape, (1, 2))
            self.assertFalse(any(k.startswith("row.") for k in a))
            n, causal = res.params["n"][i], res.params["causal"][i]
            baseline = res.metrics["uniform_baseline"][i]
            expected = np.log(n) if causal == 0 else np.sum(np.log(np.arange(1, n + 1))) / n
            self.assertAlmostEqual(baseline, expected, places=10)
            self.assertEqual(res.metrics["delta_max"][i], a["delta_max"].max())
        rows = self.path("rows.h5")
        run(BIN, *TINY, "--n", "40", "--samples", "3", "--row-arrays", "1", "--out", rows, check=0)
        res = common.load_result(rows, "transformer-dispersion")
        a = res.arrays(res.ids[0])
        self.assertEqual(a["row.delta"].shape, (1, 2, 3, 40))
        np.testing.assert_array_equal(a["delta_max"], a["row.delta"].max(axis=(2, 3)))
        np.testing.assert_allclose(a["alpha_max_last"], a["row.alpha_max"][:, :, :, -1].mean(axis=2), rtol=1e-15)
        self.assertTrue(np.all(a["row.support"][0, 0, 0] == np.arange(1, 41)))   # causal softmax: k keys

    def test_trained_text_models_are_measured_through_checkpoint(self):
        models = self.path("train-text.h5")
        run("sharp-train-text", "--layers", "1", "--heads", "2", "--d-model", "16", "--batch", "4", "--warmup", "2",
            "--lengths", "4,5", "--eval-samples", "8", "--steps", "4", "--eval-every", "4",
            "--normaliser", "softmax,ssmax:s=learn", "--positional", "rope", "--out", models, "--quiet", check=0)
        out = self.path("trained.h5")
        run(BIN, "--checkpoint", models, "--n", "16,64", "--out", out, "--quiet", check=0)
        with h5py.File(out, "r") as f:
            refs = [r.decode() if isinstance(r, bytes) else r for r in f["points/params/checkpoint"][()]]
            self.assertEqual(len(refs), 4)  # two models × two lengths
            self.assertEqual(len({r.split("#")[1] for r in refs}), 2)
            self.assertTrue(np.all(f["points/lemma_violations"][()] == 0))
            for pid in f["points/id"][()]:
                pid = pid.decode() if isinstance(pid, bytes) else pid
                self.assertEqual(f["arrays"][pid]["delta_max"].shape, (1, 2))  # [layer, head] of the trained shape
        for flag, value in (("--normaliser", "adaptive"), ("--layers", "2")):
            p = run(BIN, "--checkpoint", models, "--n", "16", flag, value, "--out", self.path("x.h5"), "--quiet")
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(flag + " shapes a random model", p.stderr)
            self.assertFalse(os.path.exists(self.path("x.h5")))

    def test_trained_models_read_task_prompts_of_growing_size(self):
        """--input task: each sample is a prompt of the model's own task (the mix's algorithms in turn)
        with the most keys that fits n tokens, measured at every row and at its last row (the answer
        position); the lemma holds, the file feeds the theorem check, the trained-entropy figure (with
        the random models beside it) and the spread table's trained rows."""
        models = self.path("train-text.h5")
        run("sharp-train-text", "--layers", "1", "--heads", "2", "--d-model", "16", "--batch", "4", "--warmup", "2",
            "--lengths", "4,5", "--eval-samples", "4", "--steps", "3", "--eval-every", "3", "--positional", "rope",
            "--algorithms", "minimum,binary_search+insertion_sort", "--normaliser", "softmax,adaptive",
            "--out", models, "--quiet", check=0)
        out = self.path("transformer-dispersion-trained.h5")
        args = ["--checkpoint", models, "--input", "task", "--n", "128,512,2048", "--samples", "2", "--quiet"]
        run(BIN, *args, "--row-arrays", "1", "--threads", "1", "--out", out, check=0)
        run(BIN, *args, "--row-arrays", "1", "--threads", "2", "--out", self.path("2.h5"), check=0)
        self.assertSameData(out, self.path("2.h5"))
        res = common.load_result(out, "transformer-dispersion")
        self.assertEqual(len(res), 12)   # 4 models × 3 budgets
        self.assertEqual(int(np.sum(res.metrics["lemma_violations"])), 0)
        lengths = {}
        for i, pid in enumerate(res.ids):
            a, n = res.arrays(pid), int(res.params["n"][i])
            tokens, keys = a["tokens"], a["task_length"]
            # the most keys that fit: a prompt ends within a key or two of the budget (about 6 tokens a
            # key), below 2048 where lib/text's cap on a whole sample (answer included) stops it first
            self.assertTrue(np.all(tokens <= n), (n, tokens))
            if n < 2048:
                self.assertTrue(np.all(tokens > n - 16), (n, tokens))
            self.assertAlmostEqual(res.metrics["tokens"][i], tokens.mean())
            self.assertAlmostEqual(res.metrics["ln_n"][i], np.log(tokens).mean(), places=12)
            lg = [np.sum(np.log(np.arange(1, t + 1))) / t for t in tokens]
            self.assertAlmostEqual(res.metrics["uniform_baseline"][i], np.mean(lg), places=10)
            rows = a["row.entropy"]                                   # [layer, head, sample, n]
            for s, t in enumerate(tokens):
                self.assertTrue(np.all(np.isfinite(rows[:, :, s, :t])) and np.all(np.isnan(rows[:, :, s, t:])))
                self.assertTrue(np.all(a["row.support"][:, :, s, t - 1] == t))   # the last row sees the whole prompt
            last = np.stack([rows[:, :, s, t - 1] for s, t in enumerate(tokens)], axis=2).mean(axis=2)
            np.testing.assert_allclose(a["entropy_last"], last, rtol=1e-14)
            lengths.setdefault(res.params["checkpoint"][i], []).append((n, tuple(keys)))
        for ref, seen in lengths.items():
            keys = [k for _, k in sorted(seen)]
            self.assertTrue(all(min(b) > max(a) for a, b in zip(keys, keys[1:])), keys)   # longer budgets, more keys
            self.assertGreater(min(keys[-1]), 5 * 16)   # far past the training lengths 4, 5
        # the second sample of the binary_search+insertion_sort model is an insertion_sort prompt:
        # its keys are capped by the whole sample's 2048 tokens (about half of it is the sorted answer)
        mixed = [i for i, pid in enumerate(res.ids) if res.params["n"][i] == 2048 and
                 res.arrays(pid)["task_length"][0] != res.arrays(pid)["task_length"][1]]
        self.assertEqual(len(mixed), 2, "the mix's algorithms take turns")
        checks = transformer_theorem.check_models(res)
        self.assertEqual(len(checks), 4)
        self.assertTrue(all(c.key["input"] == "task" and "trained" in c.label() for c in checks))
        # the figures: random models beside the trained ones, and the spread table's trained rows
        run(BIN, *TINY, "--n", "2^5..2^9", "--positional", "none,alibi", "--out",
            self.path("transformer-dispersion.h5"), check=0)
        written = fig_transformer_trained.make(out, self.path("figures"))
        self.assertTrue(all(os.path.getsize(w) > 0 for w in written))
        fig_transformer_logit_spread.make(self.path("transformer-dispersion.h5"), self.path("figures"))
        with open(self.path("figures/transformer_logit_spread.md"), encoding="utf-8") as fh:
            table = fh.read()
        for task in ("minimum", "binary_search+insertion_sort"):
            for normaliser in ("softmax", "adaptive"):
                self.assertIn(f"| trained {task}, {normaliser} (rope, 1 seed) | 2^11 | 2 |", table)
        self.assertEqual(table.count("(paper)"), 2, table)
        # refused before anything is written: no trained model, a budget past the longest sample or
        # shorter than the shortest prompt
        for extra, message in ((["--input", "task", "--n", "64"], "need a trained text model"),
                               (["--checkpoint", models, "--input", "task", "--n", "4096"], "longest sample"),
                               (["--checkpoint", models, "--input", "task", "--n", "64"], "insertion_sort: a prompt")):
            p = run(BIN, *extra, "--out", self.path("x.h5"), "--quiet")
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(message, p.stderr)
            self.assertFalse(os.path.exists(self.path("x.h5")))

    def test_bad_input_is_refused_before_anything_is_written(self):
        out = self.path("bad.h5")
        cases = [
            (["--positional", "learned", "--max-length", "64", "--n", "65"], "longer than the learned"),
            (["--d-model", "30", "--heads", "4", "--n", "16"], "not a multiple"),
            (["--positional", "rope", "--d-model", "12", "--heads", "4", "--n", "16"], "even d_head"),
            (["--checkpoint", "missing.h5", "--n", "16"], "does not exist"),
            (["--n", "2^18"], "maximum"),
            (["--normaliser", "softmax:gamma=2", "--n", "16"], "normaliser"),
        ]
        weights = self.path("other.h5")
        run("sharp-weight-bound", "--n", "16", "--trials", "2", "--out", weights, "--quiet", check=0)
        cases += [
            (["--checkpoint", weights, "--n", "16"], "not train-text"),
        ]
        for args, message in cases:
            p = run(BIN, *args, "--out", out, "--quiet")
            self.assertEqual(p.returncode, 2, f"{args}: {p.stdout}{p.stderr}")
            self.assertIn(message, p.stderr, args)
            self.assertFalse(os.path.exists(out), args)
            self.assertFalse(os.path.exists(out + ".parts"), args)


if __name__ == "__main__":
    unittest.main()
