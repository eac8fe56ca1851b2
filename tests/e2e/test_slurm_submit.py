"""runners/sharp-submit without a scheduler: the scripts it generates (--dry-run), bad input (also a
damaged submissions.json, a program that is no sharp experiment, sbatch refusing a partition or
time), and its bookkeeping against a fake sbatch/squeue/scontrol that record their calls -- which
shards --resubmit-missing picks, the merge-only resubmission, the refusal while jobs of the run are
queued, --array auto's task count and at most one scheduler query per call. The generated scripts are
also run by bash with SLURM_ARRAY_TASK_ID set, as Slurm would, and must reproduce a local run. The
real scheduler is exercised in test_slurm_cluster.py, test_slurm_node_loss.py and
test_slurm_mpi_nodes.py.
ctest runs it with SHARP_BIN_DIR and SHARP_SOURCE_DIR set; standalone:
    SHARP_BIN_DIR=build/bin /usr/bin/python3 tests/e2e/test_slurm_submit.py
"""
import json
import os
import re
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
# squeue prints $FAKE_SQUEUE_IDS; scontrol show config prints MaxArraySize = $FAKE_MAX_ARRAY_SIZE, or
# fails without it. Both append their name to $FAKE_SLURM_QUERIES, one line per call.
FAKE_SQUEUE = """#!/bin/bash
echo squeue >> "$FAKE_SLURM_QUERIES"
for id in ${FAKE_SQUEUE_IDS:-}; do echo "$id"; done
"""
FAKE_SCONTROL = """#!/bin/bash
echo scontrol >> "$FAKE_SLURM_QUERIES"
[ "$*" = "show config" ] && [ -n "${FAKE_MAX_ARRAY_SIZE:-}" ] || { echo "scontrol: error: no cluster" >&2; exit 1; }
printf 'Configuration data as of 2026-01-01T00:00:00\nKillWait                = 30 sec\n'
printf 'MaxArraySize            = %s\nMaxJobCount             = 10000\n' "$FAKE_MAX_ARRAY_SIZE"
"""


class Base(unittest.TestCase):
    GRID = ["--n", "2^3..2^10", "--theta", "0.5,1,2"]  # 24 cheap points

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="sharp-submit-")
        self.dir = self._tmp.name
        fake_bin = os.path.join(self.dir, "fake-bin")
        os.mkdir(fake_bin)
        for name, text in [("sbatch", FAKE_SBATCH), ("squeue", FAKE_SQUEUE), ("scontrol", FAKE_SCONTROL)]:
            path = os.path.join(fake_bin, name)
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        self.slurm_log = os.path.join(self.dir, "slurm-calls.jsonl")
        self.queries_log = os.path.join(self.dir, "slurm-queries.txt")
        self.env = dict(os.environ, PATH=fake_bin + os.pathsep + BIN + os.pathsep + os.environ["PATH"],
                        FAKE_SLURM_LOG=self.slurm_log, FAKE_SLURM_QUERIES=self.queries_log)
        self.env.pop("SLURM_CONF", None)
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

    def scheduler_queries(self):
        """The squeue/scontrol calls so far, and forget them."""
        if not os.path.exists(self.queries_log):
            return []
        with open(self.queries_log) as f:
            queries = f.read().split()
        os.remove(self.queries_log)
        return queries

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
        (["--time", "99:99:99", "--", "sharp-bounds"], "--time: '99:99:99' has 99 minutes"),
        (["--time", "1-24", "--", "sharp-bounds"], "24 hours"),
        (["--time", "00:00:00", "--", "sharp-bounds"], "no time at all"),
        (["--partition", "-x", "--", "sharp-bounds"], "--partition"),
        (["--partition", "a,,b", "--", "sharp-bounds"], "--partition"),
        (["--partition", "a b", "--", "sharp-bounds"], "--partition"),
        (["--array", "100001", "--", "sharp-bounds"], "--array: 100001 tasks are more shards than sharp-bounds"),
        (["--array", "auto%0", "--", "sharp-bounds"], "--array"),
        (["--array", "automatic", "--", "sharp-bounds"], "--array"),
        (["--", "/bin/true"], "not a sharp experiment binary"),
        (["--", "sharp-normalise"], "not a sharp experiment binary"),
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
                        env=dict(self.env, FAKE_SBATCH_FAIL="Socket timed out on send/recv operation"))
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("sharp-submit: failed: sbatch", p.stderr)
        self.assertIn("Socket timed out", p.stderr)
        # A SLURM_CONF that does not exist fails at once (Slurm's clients would retry for 60 s).
        p = self.submit("--array", "2", "--", BOUNDS, *self.GRID, "--out", self.out,
                        env=dict(self.env, SLURM_CONF=os.path.join(self.dir, "no-such-slurm.conf")))
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("does not exist", p.stderr)


class Refusals(Base):
    def test_only_a_sharp_experiment_binary_is_ever_run(self):
        # Each would write its marker if sharp-submit ran it (for --dry-run or --status).
        scripts = os.path.join(self.dir, "scripts")
        os.mkdir(scripts)
        fake_experiment = os.path.join(scripts, "sharp-evil")
        with open(fake_experiment, "w") as f:
            f.write(f"#!/bin/sh\ntouch {self.dir}/evil-ran\necho 'sharp-evil: 1 points, fingerprint 0, output x.h5'\n")
        os.chmod(fake_experiment, 0o755)
        env = dict(self.env, PATH=scripts + os.pathsep + self.env["PATH"])
        for command in (["sharp-evil"], ["/bin/sh", "-c", f"touch {self.dir}/sh-ran"],
                        ["/usr/bin/env", "touch", f"{self.dir}/env-ran"]):
            for mode in (["--dry-run"], ["--array", "2"], ["--resubmit-missing"]):
                with self.subTest(command=command, mode=mode):
                    p = self.submit(*mode, "--", *command, env=env)
                    self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                    self.assertIn("is not a sharp experiment binary", p.stderr)
                    self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertEqual(sorted(n for n in os.listdir(self.dir) if n.endswith("-ran")), [])
        self.assertEqual(self.sbatch_calls(), [])

    def test_a_damaged_record_is_one_line_exit_2(self):
        record = os.path.join(self.out + ".slurm", "submissions.json")
        good = {"mode": "array", "jobs": {"array": "7", "merge": "8"}, "array": {"count": 2, "tasks": [0, 1]}}
        damaged = [b"[{\"mode\": \"array\", ", b"\xff\xfe\x00\x01", b"{}", b"[3]", b"[{\"mode\": \"array\"}]",
                   json.dumps([dict(good, mode="serial")]).encode(),
                   json.dumps([dict(good, jobs={"array": 7})]).encode(),
                   json.dumps([dict(good, array={"count": "2", "tasks": [0]})]).encode(),
                   json.dumps([dict(good, array={"count": 2, "tasks": [5]})]).encode(),
                   json.dumps([{"mode": "mpi", "jobs": {"mpi": "9"}, "ranks": 0}]).encode()]
        for k, text in enumerate(damaged):
            for args in (["--resubmit-missing"], ["--array", "auto", "--dry-run"])[:1 if k else 2]:
                with self.subTest(record=text, args=args):
                    os.makedirs(os.path.dirname(record), exist_ok=True)
                    with open(record, "wb") as f:
                        f.write(text)
                    p = self.submit(*args, "--", BOUNDS, *self.GRID, "--out", self.out)
                    self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                    lines = p.stderr.strip().splitlines()
                    self.assertEqual(len(lines), 1, p.stderr)
                    self.assertIn(f"{record} is damaged", lines[0])
                    self.assertIn("move it aside", lines[0])
        self.assertEqual(self.sbatch_calls(), [])
        # The record intact again: accepted (a check that can fail).
        with open(record, "w") as f:
            json.dump([good], f)
        self.submit("--resubmit-missing", "--", BOUNDS, *self.GRID, "--out", self.out, check=0)

    def test_what_the_cluster_refuses_is_bad_input_nothing_submitted(self):
        for message, args, needle in [
                ("Invalid partition name specified", ["--partition", "nosuch"],
                 "--partition: 'nosuch' is not a partition of this cluster"),
                ("Invalid partition name specified", [], "this cluster has no default partition: give --partition"),
                ("Requested time limit is invalid (missing or exceeds some limit)", ["--time", "9-00:00:00"],
                 "--time: '9-00:00:00' exceeds the partition's limit"),
                ("Invalid job array specification", [], "--array: the cluster refuses this array")]:
            with self.subTest(message=message):
                p = self.submit("--array", "2", *args, "--", BOUNDS, *self.GRID, "--out", self.out,
                                env=dict(self.env, FAKE_SBATCH_FAIL=message))
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                lines = p.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertTrue(lines[0].startswith(f"sharp-submit: error: {needle}"), lines[0])
        self.assertEqual(self.sbatch_calls(), [])
        self.assertEqual(os.listdir(self.work), [])  # nothing written
        # An earlier submission's scripts are put back as they were.
        self.submit("--array", "2", "--", BOUNDS, *self.GRID, "--out", self.out, check=0)
        with open(os.path.join(self.out + ".slurm", "array.sbatch")) as f:
            before = f.read()
        p = self.submit("--array", "3", "--partition", "nosuch", "--", BOUNDS, *self.GRID, "--out", self.out,
                        env=dict(self.env, FAKE_SBATCH_FAIL="Invalid partition name specified"))
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        with open(os.path.join(self.out + ".slurm", "array.sbatch")) as f:
            self.assertEqual(f.read(), before)
        self.assertEqual(sorted(os.listdir(self.out + ".slurm")), ["array.sbatch", "logs", "merge.sbatch",
                                                                  "submissions.json"])

    def test_more_tasks_than_max_array_size_are_refused_when_it_is_known(self):
        p = self.submit("--array", "4", "--dry-run", "--", BOUNDS, *self.GRID, "--out", self.out,
                        env=dict(self.env, FAKE_MAX_ARRAY_SIZE="3"))
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("MaxArraySize is 3", p.stderr)
        self.submit("--array", "3", "--dry-run", "--", BOUNDS, *self.GRID, "--out", self.out, check=0,
                    env=dict(self.env, FAKE_MAX_ARRAY_SIZE="3"))
        # Unreadable: sbatch decides.
        self.submit("--array", "4", "--dry-run", "--", BOUNDS, *self.GRID, "--out", self.out, check=0)


class AutoArray(Base):
    # Each point of this grid is estimated at 61.4 core-minutes (sharp-bounds' reference rate in
    # runners/slurm/cost-rates.json: trials x (n + 4096) x 5.49e-9 core-seconds).
    SLOW = ["--n", "2^26", "--trials", "10000"]

    def array_line(self, p):
        return re.search(r"#SBATCH --array=(\S+)", p.stdout).group(1)

    def test_cheap_points_make_one_task(self):
        p = self.submit("--array", "auto", "--dry-run", "--", BOUNDS, *self.GRID, "--out", self.out, check=0,
                        env=dict(self.env, FAKE_MAX_ARRAY_SIZE="50"))
        self.assertEqual(self.array_line(p), "0")
        self.assertIn("--array auto: 1 task for 24 points still to run", p.stdout)
        self.assertIn("reference rate: sweeps/cluster/bounds.cfg", p.stdout)
        self.assertEqual(self.scheduler_queries(), ["scontrol"])

    def test_tasks_of_about_30_minutes_at_most_max_array_size(self):
        spreads = ["--spread", ",".join(str(s) for s in range(1, 13))]  # 12 points: 737 core-minutes
        # 1 core: 25 tasks wanted, one per point at most; 4 cores: 184 minutes, 7 tasks; 8 cores: 4.
        for cpus, limit, expected in [("1", "50", "0-11"), ("1", "7", "0-6"), ("4", "50", "0-6"), ("8", "50", "0-3")]:
            with self.subTest(cpus=cpus, max_array_size=limit):
                p = self.submit("--array", "auto%2", "--cpus-per-task", cpus, "--dry-run", "--", BOUNDS, *self.SLOW,
                                *spreads, "--out", self.out, check=0, env=dict(self.env, FAKE_MAX_ARRAY_SIZE=limit))
                self.assertEqual(self.array_line(p), expected + "%2")

    def test_a_sweep_of_100000_points_is_never_100000_jobs(self):
        grid = ["--n", "2^10..2^26", "--spread", ",".join(str(s) for s in range(1, 101)),
                "--theta", ",".join(str(t) for t in range(1, 61)), "--trials", "10000"]  # 102000 points
        p = self.submit("--array", "auto", "--dry-run", "--", BOUNDS, *grid, "--out", self.out, check=0)
        self.assertEqual(self.array_line(p), "0-999")
        self.assertIn("MaxArraySize 1000, unreadable, so 1000 assumed", p.stdout)
        self.assertEqual(self.scheduler_queries(), ["scontrol"])

    def test_the_rate_is_measured_on_finished_points(self):
        self.bounds("--shard", "0/3", "--quiet")
        done = len([n for n in os.listdir(self.out + ".parts") if n.endswith(".h5")])
        p = self.submit("--array", "auto", "--dry-run", "--", BOUNDS, *self.GRID, "--out", self.out, check=0)
        self.assertRegex(p.stdout, rf"--array auto: 1 task for {24 - done} points still to run")
        self.assertIn(f"measured on {done} finished points of this run", p.stdout)

    def test_at_most_one_scheduler_query_per_call(self):
        env = dict(self.env, FAKE_MAX_ARRAY_SIZE="500")
        p = self.submit("--array", "auto", "--", BOUNDS, *self.GRID, "--out", self.out, check=0, env=env)
        self.assertIn("array job 100: 1 of 1 shards", p.stdout)
        self.assertEqual(self.scheduler_queries(), ["scontrol"])  # no job of the run yet: no squeue
        with open(os.path.join(self.out + ".slurm", "submissions.json")) as f:
            self.assertEqual(json.load(f)[0]["max_array_size"], 500)
        for args in (["--resubmit-missing"], ["--resubmit-missing", "--array", "auto"], ["--array", "3"]):
            with self.subTest(args=args):
                self.submit(*args, "--", BOUNDS, *self.GRID, "--out", self.out, check=0, env=env)
                self.assertEqual(self.scheduler_queries(), ["squeue"])  # MaxArraySize from the record
        self.bounds("--quiet")  # every point done and merged: nothing to ask
        self.submit("--resubmit-missing", "--", BOUNDS, *self.GRID, "--out", self.out, check=0, env=env)
        self.assertEqual(self.scheduler_queries(), [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
