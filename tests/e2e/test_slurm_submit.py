"""runners/sharp-submit without a scheduler: the scripts it generates (--dry-run), bad input, and its
bookkeeping against a fake sbatch/squeue that record their calls -- which shards --resubmit-missing
picks, the merge-only resubmission, the refusal while jobs of the run are queued. The generated
scripts are also run by bash with SLURM_ARRAY_TASK_ID set, as Slurm would, and must reproduce a local
run. The real scheduler is exercised in test_slurm_cluster.py.
ctest runs it with SHARP_BIN_DIR and SHARP_SOURCE_DIR set; standalone:
    SHARP_BIN_DIR=build/bin /usr/bin/python3 tests/e2e/test_slurm_submit.py
"""
import json
import os
import stat
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import BIN, data_differences  # noqa: E402

SOURCE = os.environ.get("SHARP_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
SUBMIT = os.path.join(SOURCE, "runners", "sharp-submit")
BOUNDS = os.path.join(BIN, "sharp-bounds")

# A fake sbatch: appends its arguments and the script text to $FAKE_SLURM_LOG (one JSON per line)
# and prints increasing job ids (or fails with $FAKE_SBATCH_FAIL). A fake squeue prints $FAKE_SQUEUE_IDS.
FAKE_SBATCH = r"""#!/usr/bin/python3
import json, os, sys
if os.environ.get("FAKE_SBATCH_FAIL"):
    sys.exit("sbatch: error: Batch job submission failed: " + os.environ["FAKE_SBATCH_FAIL"])
log = os.environ["FAKE_SLURM_LOG"]
n = sum(1 for _ in open(log)) if os.path.exists(log) else 0
with open(sys.argv[-1]) as f:
    script = f.read()
with open(log, "a") as f:
    f.write(json.dumps({"args": sys.argv[1:], "script": script}) + "\n")
print(f"{100 + n};fake")
"""
FAKE_SQUEUE = """#!/bin/bash
for id in ${FAKE_SQUEUE_IDS:-}; do echo "$id"; done
"""


class Base(unittest.TestCase):
    GRID = ["--n", "2^3..2^10", "--theta", "0.5,1,2"]  # 24 cheap points

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="sharp-submit-")
        self.dir = self._tmp.name
        fake_bin = os.path.join(self.dir, "fake-bin")
        os.mkdir(fake_bin)
        for name, text in [("sbatch", FAKE_SBATCH), ("squeue", FAKE_SQUEUE)]:
            path = os.path.join(fake_bin, name)
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        self.slurm_log = os.path.join(self.dir, "slurm-calls.jsonl")
        self.env = dict(os.environ, PATH=fake_bin + os.pathsep + BIN + os.pathsep + os.environ["PATH"],
                        FAKE_SLURM_LOG=self.slurm_log)
        self.work = os.path.join(self.dir, "work")
        os.mkdir(self.work)
        self.out = os.path.join(self.work, "b.h5")

    def tearDown(self):
        self._tmp.cleanup()

    def submit(self, *args, check=None, env=None):
        p = subprocess.run([SUBMIT, *args], cwd=self.work, env=env or self.env, capture_output=True, text=True,
                           timeout=300)
        if check is not None and p.returncode != check:
            raise AssertionError(f"sharp-submit {' '.join(args)} exited {p.returncode}, expected {check}\n"
                                 f"stdout: {p.stdout}\nstderr: {p.stderr}")
        return p

    def sbatch_calls(self):
        if not os.path.exists(self.slurm_log):
            return []
        with open(self.slurm_log) as f:
            return [json.loads(line) for line in f]

    def bounds(self, *args, check=0):
        p = subprocess.run([BOUNDS, *self.GRID, "--out", self.out, *args], capture_output=True, text=True,
                           timeout=300)
        self.assertEqual(p.returncode, check, p.stdout + p.stderr)
        return p


class DryRun(Base):
    def test_array_dry_run_prints_both_scripts_and_submits_nothing(self):
        p = self.submit("--array", "4%2", "--cpus-per-task", "2", "--time", "00:30:00", "--partition", "short",
                        "--dry-run", "--", "sharp-bounds", *self.GRID, "--out", "b.h5", check=0)
        text = p.stdout
        run_dir = os.path.join(self.work, "b.h5.slurm")
        self.assertIn(f"==> {run_dir}/array.sbatch <==", text)
        self.assertIn(f"==> {run_dir}/merge.sbatch <==", text)
        for needle in ["#SBATCH --array=0-3%2", "#SBATCH --cpus-per-task=2", "#SBATCH --time=00:30:00",
                       "#SBATCH --partition=short", f"#SBATCH --chdir={self.work}",
                       f"#SBATCH --output={run_dir}/logs/array-%A_%a.out",
                       f"#SBATCH --output={run_dir}/logs/merge-%j.out",
                       "export HDF5_USE_FILE_LOCKING=FALSE", "export OMP_NUM_THREADS=2",
                       f'{BOUNDS} --n \'2^3..2^10\' --theta 0.5,1,2 --out b.h5 --shard "${{SLURM_ARRAY_TASK_ID}}/4" --threads 2',
                       "--out b.h5 --merge-only --threads 1",
                       f"would run: job=$(sbatch --parsable {run_dir}/array.sbatch)",
                       "would run: sbatch --parsable --dependency=afterany:${job%%;*} --kill-on-invalid-dep=yes"]:
            self.assertIn(needle, text)
        self.assertEqual(self.sbatch_calls(), [])
        self.assertEqual(os.listdir(self.work), [])

    def test_mpi_dry_run(self):
        p = self.submit("--ntasks", "3", "--cpus-per-task", "2", "--dry-run", "--", BOUNDS, *self.GRID,
                        "--out", self.out, check=0)
        for needle in ["#SBATCH --ntasks=3", "#SBATCH --cpus-per-task=2", "export OMP_NUM_THREADS=2",
                       "export HDF5_USE_FILE_LOCKING=FALSE",
                       f"srun --mpi=pmix --kill-on-bad-exit=1 -n 3 -c 2 {BOUNDS} ", "--threads 2\n",
                       f"#SBATCH --output={self.out}.slurm/logs/mpi-%j.out"]:
            self.assertIn(needle, p.stdout)
        self.assertNotIn("--shard", p.stdout)
        self.assertNotIn("#SBATCH --array", p.stdout)
        self.assertEqual(self.sbatch_calls(), [])
        self.assertEqual(os.listdir(self.work), [])


class BadInput(Base):
    CASES = [
        ([], "after '--'"),
        (["--array", "4"], "after '--'"),
        (["--array", "4", "--"], "no experiment command"),
        (["--array", "0", "--", "sharp-bounds"], "--array"),
        (["--array", "4%0", "--", "sharp-bounds"], "--array"),
        (["--array", "four", "--", "sharp-bounds"], "--array"),
        (["--ntasks", "0", "--", "sharp-bounds"], "--ntasks"),
        (["--cpus-per-task", "-1", "--", "sharp-bounds"], "--cpus-per-task"),
        (["--time", "soon", "--", "sharp-bounds"], "--time"),
        (["--array", "4", "--ntasks", "2", "--", "sharp-bounds"], "exclude each other"),
        (["--frobnicate", "--", "sharp-bounds"], "unknown option"),
        (["--", "sharp-no-such-experiment"], "not an executable"),
        (["--array", "4", "--", "sharp-bounds", "--shard", "0/4"], "--shard"),
        (["--array", "4", "--", "sharp-bounds", "--threads=4"], "--cpus-per-task"),
        (["--array", "4", "--", "sharp-bounds", "--merge-only"], "--merge-only"),
        (["--array", "4", "--", "sharp-bounds", "--n", "0"], "--n"),            # the binary's own check
        (["--array", "4", "--", "sharp-bounds", "--frobnicate"], "unknown flag"),
        (["--resubmit-missing", "--", "sharp-bounds", "--n", "4"], "no earlier submission"),
    ]

    def test_each_bad_input_is_one_line_exit_2_and_submits_nothing(self):
        for args, needle in self.CASES:
            with self.subTest(args=args):
                p = self.submit(*args)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                lines = p.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertIn(needle, lines[0])
                self.assertEqual(self.sbatch_calls(), [])
                self.assertEqual(os.listdir(self.work), [])

    def test_a_result_of_another_configuration_is_refused_before_submitting(self):
        subprocess.run([BOUNDS, "--n", "4,8", "--out", self.out, "--quiet"], check=True, timeout=300)
        p = self.submit("--array", "2", "--", BOUNDS, *self.GRID, "--out", self.out)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("another configuration", p.stderr)
        self.assertEqual(self.sbatch_calls(), [])
        self.submit("--array", "2", "--", BOUNDS, *self.GRID, "--out", self.out, "--overwrite", check=0)
        self.assertEqual(len(self.sbatch_calls()), 2)

    def test_help(self):
        p = self.submit("--help", check=0)
        for flag in ["--array", "--ntasks", "--cpus-per-task", "--time", "--partition", "--dry-run",
                     "--resubmit-missing"]:
            self.assertIn(flag, p.stdout)


class Bookkeeping(Base):
    def run_script(self, path, **env):
        p = subprocess.run(["bash", path], env=dict(self.env, **env), cwd=self.work, capture_output=True, text=True,
                           timeout=300)
        return p

    def test_scripts_run_by_bash_reproduce_a_local_run(self):
        ref = os.path.join(self.dir, "ref.h5")
        subprocess.run([BOUNDS, *self.GRID, "--out", ref, "--quiet"], check=True, timeout=300)
        p = self.submit("--array", "3", "--", "sharp-bounds", *self.GRID, "--out", "b.h5", check=0)
        self.assertRegex(p.stdout, r"array job 100: 3 of 3 shards \(0-2\) of 24 points")
        self.assertIn("merge job 101 after array job 100", p.stdout)
        self.assertIn("squeue -j 100,101", p.stdout)
        calls = self.sbatch_calls()
        self.assertEqual(len(calls), 2)
        self.assertEqual(calls[0]["args"], ["--parsable", f"{self.out}.slurm/array.sbatch"])
        self.assertEqual(calls[1]["args"], ["--parsable", "--dependency=afterany:100", "--kill-on-invalid-dep=yes",
                                            f"{self.out}.slurm/merge.sbatch"])
        run_dir = self.out + ".slurm"
        self.assertTrue(os.path.isdir(os.path.join(run_dir, "logs")))
        with open(os.path.join(run_dir, "submissions.json")) as f:
            record = json.load(f)
        self.assertEqual(record[0]["jobs"], {"array": "100", "merge": "101"})
        self.assertEqual(record[0]["array"]["count"], 3)
        # The merge job before the shards: exit 3 and the way out in its output.
        merge = self.run_script(os.path.join(run_dir, "merge.sbatch"))
        self.assertEqual(merge.returncode, 3, merge.stderr)
        self.assertIn("--resubmit-missing", merge.stderr)
        # Slurm starts them in #SBATCH --chdir (the submission directory: the --out here is relative).
        for task in range(3):
            t = self.run_script(os.path.join(run_dir, "array.sbatch"), SLURM_ARRAY_TASK_ID=str(task))
            self.assertEqual(t.returncode, 0, t.stderr)
            self.assertIn(f"shard {task}/3", t.stdout)
        self.assertFalse(os.path.exists(self.out))
        m = self.run_script(os.path.join(run_dir, "merge.sbatch"))
        self.assertEqual(m.returncode, 0, m.stderr)
        self.assertEqual(data_differences(ref, self.out), [])

    def test_resubmit_missing_submits_only_incomplete_shards(self):
        self.submit("--array", "4%3", "--", BOUNDS, *self.GRID, "--out", self.out, check=0)
        for shard in ("0/4", "2/4"):
            self.bounds("--shard", shard, "--quiet")
        # Jobs of this run still queued: refused, nothing submitted.
        p = self.submit("--resubmit-missing", "--", BOUNDS, *self.GRID, "--out", self.out,
                        env=dict(self.env, FAKE_SQUEUE_IDS="7 100"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("still queued", p.stderr)
        self.assertEqual(len(self.sbatch_calls()), 2)
        # K and the throttle come from the record; only shards 1 and 3 are left.
        p = self.submit("--resubmit-missing", "--", BOUNDS, *self.GRID, "--out", self.out, check=0)
        calls = self.sbatch_calls()[2:]
        self.assertEqual(len(calls), 2)
        self.assertIn("#SBATCH --array=1,3%3\n", calls[0]["script"])
        self.assertIn('--shard "${SLURM_ARRAY_TASK_ID}/4"', calls[0]["script"])
        # A resubmission clears locks that tasks on a dead node left (docs/architecture.md#locking).
        self.assertNotIn("--break-lock", self.sbatch_calls()[0]["script"])
        self.assertIn("--break-lock", calls[0]["script"])
        self.assertIn("--break-lock --merge-only", calls[1]["script"])
        self.assertIn("--dependency=afterany:102", calls[1]["args"])
        self.assertIn("2 of 4 shards (1,3%3)", p.stdout)
        # Another K is fine too: the points are re-dealt over K' shards and complete ones skipped.
        p = self.submit("--resubmit-missing", "--array", "2", "--dry-run", "--", BOUNDS, *self.GRID, "--out",
                        self.out, check=0)
        self.assertRegex(p.stdout, r"#SBATCH --array=[0-9,-]+\n")
        # Every point complete but not merged: only a merge job, no dependency.
        for shard in ("1/4", "3/4"):
            self.bounds("--shard", shard, "--quiet")
        p = self.submit("--resubmit-missing", "--", BOUNDS, *self.GRID, "--out", self.out, check=0)
        calls = self.sbatch_calls()[4:]
        self.assertEqual([c["args"][-1] for c in calls], [f"{self.out}.slurm/merge.sbatch"])
        self.assertEqual(calls[0]["args"], ["--parsable", f"{self.out}.slurm/merge.sbatch"])
        self.assertIn("every point is complete", p.stdout)
        # Merged: nothing left to submit, also for a fresh submission of the same command.
        self.bounds("--merge-only", "--quiet")
        for args in (["--resubmit-missing"], ["--array", "4"]):
            p = self.submit(*args, "--", BOUNDS, *self.GRID, "--out", self.out, check=0)
            self.assertIn("nothing to submit", p.stdout)
        self.assertEqual(len(self.sbatch_calls()), 5)

    def test_mpi_resubmission_repeats_the_job(self):
        self.submit("--ntasks", "2", "--", BOUNDS, *self.GRID, "--out", self.out, check=0)
        p = self.submit("--resubmit-missing", "--", BOUNDS, *self.GRID, "--out", self.out, check=0)
        self.assertIn("MPI job 101: 2 ranks", p.stdout)
        calls = self.sbatch_calls()
        self.assertEqual(len(calls), 2)
        self.assertIn("srun --mpi=pmix --kill-on-bad-exit=1 -n 2 -c 1", calls[1]["script"])

    def test_sbatch_failure_is_exit_1(self):
        p = self.submit("--array", "2", "--", BOUNDS, *self.GRID, "--out", self.out,
                        env=dict(self.env, FAKE_SBATCH_FAIL="Invalid partition name specified"))
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("sharp-submit: failed: sbatch", p.stderr)
        self.assertIn("Invalid partition", p.stderr)
        # A SLURM_CONF that does not exist fails at once (Slurm's clients would retry for 60 s).
        p = self.submit("--array", "2", "--", BOUNDS, *self.GRID, "--out", self.out,
                        env=dict(self.env, SLURM_CONF=os.path.join(self.dir, "no-such-slurm.conf")))
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("does not exist", p.stderr)

if __name__ == "__main__":
    unittest.main(verbosity=2)
