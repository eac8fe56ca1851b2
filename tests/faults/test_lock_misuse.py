"""Issue 26 items 6 and 7 (docs/architecture.md#locking). --break-lock is for a holder that cannot be
checked (another host): a holder alive on this host is refused all the same (exit 2, saying it is
alive), so --break-lock never brings back two runs on one output. A lock file that is a symbolic link
is refused (exit 2) and its target left as it was, instead of being overwritten with the lock's text."""
import os
import socket
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faults_support import ResultDirCase, listing, run  # noqa: E402
from test_concurrent_runs import hold_lock, release  # noqa: E402

TINY = ["--n", "4", "--quiet"]


class BreakLock(ResultDirCase):
    def test_a_live_holder_of_this_host_is_not_broken(self):
        out = self.path("live.h5")
        sleeper = subprocess.Popen(["sleep", "120"])   # the holder named in the file, alive here
        holder = hold_lock(out + ".lock", sleeper.pid, socket.gethostname())
        try:
            p = run("sharp-bounds", *TINY, "--out", out, "--break-lock")
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("pid %d" % sleeper.pid, p.stderr)
            self.assertIn("alive", p.stderr)
            self.assertNotIn("breaking the lock", p.stderr)
            self.assertFalse(os.path.exists(out))
            self.assertEqual(listing(self.dir), ["live.h5.lock"])
        finally:
            release(holder)
            sleeper.kill()
            sleeper.wait()

    def test_a_dead_holder_of_this_host_and_one_elsewhere_are_still_broken(self):
        # The refusal above must not take --break-lock away where it is the only way out.
        dead = subprocess.Popen(["true"])
        dead.wait()
        for name, pid, host in [("dead", dead.pid, socket.gethostname()), ("away", 4242, "node-elsewhere")]:
            with self.subTest(name):
                out = self.path(name + ".h5")
                holder = hold_lock(out + ".lock", pid, host)
                try:
                    run("sharp-bounds", *TINY, "--out", out, "--break-lock", check=0)
                finally:
                    release(holder)
                self.assertTrue(os.path.exists(out))


class SymlinkedLock(ResultDirCase):
    def test_a_lock_file_that_is_a_symlink_is_refused(self):
        target = self.path("target.txt")
        with open(target, "w") as fh:
            fh.write("precious\n")
        out = self.path("r.h5")
        os.symlink(target, out + ".lock")
        for extra in [[], ["--break-lock"], ["--shard", "0/2"]]:
            with self.subTest(extra=extra):
                lock = out + (".shard-0-of-2.lock" if extra and extra[0] == "--shard" else ".lock")
                if not os.path.lexists(lock):
                    os.symlink(target, lock)
                p = run("sharp-bounds", *TINY, "--out", out, *extra)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn("symbolic link", p.stderr)
                with open(target) as fh:
                    self.assertEqual(fh.read(), "precious\n")
                self.assertTrue(os.path.islink(lock))
                self.assertFalse(os.path.exists(out))

    def test_a_dangling_symlink_creates_nothing(self):
        out = self.path("d.h5")
        missing = self.path("created-by-the-lock.txt")
        os.symlink(missing, out + ".lock")
        p = run("sharp-bounds", *TINY, "--out", out)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("symbolic link", p.stderr)
        self.assertFalse(os.path.exists(missing))


if __name__ == "__main__":
    unittest.main(verbosity=2)
