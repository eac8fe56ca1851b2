"""Shared pieces of the fault tests (tests/faults): the e2e harness, plus a memory cap for a run that
must be refused before it allocates anything, a check that a refused run wrote nothing, and whether a
private tmpfs (a tiny disk to fill) can be mounted."""
import os
import resource
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from e2e_support import BIN, ResultDirCase, finished_parts, last_point_id, run, stalled, wait_for_parts  # noqa: E402,F401


def capped(gigabytes):
    """preexec_fn: caps the address space, so a run that would build a huge grid fails fast instead of
    taking the machine's memory."""
    def limit():
        size = int(gigabytes * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
    return limit


def listing(directory):
    """Every file under `directory`, relative, sorted (to show that a refused run wrote nothing)."""
    found = []
    for root, dirs, files in os.walk(directory):
        for name in dirs + files:
            found.append(os.path.relpath(os.path.join(root, name), directory))
    return sorted(found)


def namespaces_allowed():
    """(True, "") when a private tmpfs can be mounted (unshare -m, mount), else (False, the reason):
    the full-disk tests fill such a disk, which nothing outside the test sees."""
    try:
        p = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt && umount /mnt"],
                           capture_output=True, timeout=30)
        return p.returncode == 0, p.stderr.decode(errors="replace").strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, str(e)
