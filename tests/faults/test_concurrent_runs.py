"""Item 1 of the fault list: two runs on one --out (docs/architecture.md#locking). An unsharded run and
every merge hold PATH.h5.lock, a shard only PATH.h5.shard-I-of-N.lock: a second run is refused at once
with exit 2 naming the holder (pid, host, start time); shards of one array share the --out; a lock
whose holder died on this host is taken over; one naming another host needs --break-lock."""
import fcntl
import os
import socket
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faults_support import BIN, ResultDirCase, run  # noqa: E402

# About a second of work with one thread: long enough for two runs to overlap.
SLOW = ["--n", "2^25", "--spread", "1,2,3,4,5,6", "--trials", "4", "--threads", "1", "--quiet"]
OTHER = ["--n", "2^25", "--spread", "7,8,9,10,11,12", "--trials", "4", "--threads", "1", "--quiet"]


def start(*args):
    return subprocess.Popen([os.path.join(BIN, "sharp-bounds"), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(proc):
    out, err = proc.communicate(timeout=300)
    return proc.returncode, out, err


def hold_lock(path, pid, host):
    """A child process that holds flock on `path`, whose text names pid/host; returns it (kill to release)."""
    code = ("import fcntl, sys, time\n"
            "f = open(sys.argv[1], 'w'); fcntl.flock(f, fcntl.LOCK_EX)\n"
            "f.write('pid=%s\\nhost=%s\\nstarted=2026-01-01T00:00:00Z\\ncommand=sharp-bounds elsewhere\\n' % (sys.argv[2], sys.argv[3]))\n"
            "f.flush(); print('locked', flush=True); time.sleep(120)\n")
    child = subprocess.Popen([sys.executable, "-c", code, path, str(pid), host], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "locked"
    return child


def release(holder):
    holder.kill()
    holder.wait()
    holder.stdout.close()


class TwoRuns(ResultDirCase):
    def race(self, first, second):
        out = self.path("r.h5")
        a = start(*first, "--out", out)
        b = start(*second, "--out", out)
        return out, finish(a), finish(b)

    def assertOneRefused(self, ra, rb):
        codes = sorted([ra[0], rb[0]])
        self.assertEqual(codes, [0, 2], f"exit statuses {ra[0]}, {rb[0]}\n{ra[2]}\n{rb[2]}")
        loser = ra if ra[0] == 2 else rb
        line = loser[2].strip()
        self.assertEqual(len(line.splitlines()), 1, line)
        self.assertIn("in use by", line)
        self.assertIn("pid ", line)
        self.assertIn(socket.gethostname(), line)
        self.assertIn(" since 20", line)
        return loser

    def test_same_configuration_twice(self):
        ref = self.path("ref.h5")
        run("sharp-bounds", *SLOW, "--out", ref, check=0)
        out, ra, rb = self.race(SLOW, SLOW)
        self.assertOneRefused(ra, rb)
        self.assertSameData(ref, out)
        self.assertFalse(os.path.exists(out + ".lock"))

    def test_different_configurations(self):
        ref = self.path("ref.h5")
        out, ra, rb = self.race(SLOW, OTHER)
        loser = self.assertOneRefused(ra, rb)
        winner_grid = OTHER if loser is ra else SLOW
        run("sharp-bounds", *winner_grid, "--out", ref, check=0)
        self.assertSameData(ref, out)

    def test_shards_share_the_output_but_a_shard_runs_once(self):
        out = self.path("s.h5")
        a, b = start(*SLOW, "--shard", "0/2", "--out", out), start(*SLOW, "--shard", "1/2", "--out", out)
        self.assertEqual(finish(a)[0], 0)
        self.assertEqual(finish(b)[0], 0)
        run("sharp-bounds", *SLOW, "--out", out, "--status", check=0)
        os.remove(out + ".parts/" + sorted(os.listdir(out + ".parts"))[0])
        a, b = start(*SLOW, "--shard", "0/2", "--out", out), start(*SLOW, "--shard", "0/2", "--out", out)
        codes = sorted([finish(a)[0], finish(b)[0]])
        self.assertIn(codes, ([0, 2], [2, 3]))  # one ran (or found its points done); the other was refused

    def test_a_merge_waits_for_no_one_but_refuses_a_running_run(self):
        out = self.path("m.h5")
        run("sharp-bounds", *SLOW, "--shard", "0/1", "--out", out, check=0)
        holder = hold_lock(out + ".lock", os.getpid(), socket.gethostname())
        try:
            p = run("sharp-bounds", *SLOW, "--merge-only", "--out", out)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("in use by pid %d" % os.getpid(), p.stderr)
        finally:
            release(holder)
        run("sharp-bounds", *SLOW, "--merge-only", "--out", out, check=0)


class StaleLocks(ResultDirCase):
    def test_a_lock_file_left_by_a_killed_run_is_taken_over(self):
        out = self.path("k.h5")
        with open(out + ".lock", "w") as fh:  # a run killed with SIGKILL leaves its file, not its flock
            fh.write("pid=999999\nhost=%s\nstarted=2026-01-01T00:00:00Z\ncommand=x\n" % socket.gethostname())
        run("sharp-bounds", "--n", "4", "--out", out, "--quiet", check=0)

    def test_a_held_lock_naming_a_dead_process_of_this_host_is_taken_over(self):
        out = self.path("d.h5")
        dead = subprocess.Popen(["true"])
        dead.wait()
        holder = hold_lock(out + ".lock", dead.pid, socket.gethostname())
        try:
            run("sharp-bounds", "--n", "4", "--out", out, "--quiet", check=0)
        finally:
            release(holder)

    def test_a_lock_of_another_host_needs_break_lock(self):
        out = self.path("h.h5")
        holder = hold_lock(out + ".lock", 4242, "node-elsewhere")
        try:
            p = run("sharp-bounds", "--n", "4", "--out", out)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("pid 4242 on host node-elsewhere", p.stderr)
            self.assertIn("--break-lock", p.stderr)
            self.assertFalse(os.path.exists(out))
            p = run("sharp-bounds", "--n", "4", "--out", out, "--break-lock", "--quiet", check=0)
            self.assertIn("breaking the lock", p.stderr)
        finally:
            release(holder)
        self.assertTrue(os.path.exists(out))


if __name__ == "__main__":
    unittest.main(verbosity=2)
