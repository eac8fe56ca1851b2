"""The module's tests import the built package (build/python, or SHARP_PYTHON_DIR as ctest sets it)
and run the built binaries (build/bin, or SHARP_BIN_DIR): `make test` runs them through ctest;
by hand, after `make`: /usr/bin/python3 -m pytest python/tests."""
import os
import subprocess
import sys

import pytest

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON_DIR = os.environ.get("SHARP_PYTHON_DIR", os.path.join(SOURCE_DIR, "build", "python"))
BIN_DIR = os.environ.get("SHARP_BIN_DIR", os.path.join(SOURCE_DIR, "build", "bin"))
if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)


def run_binary(name, *args, input_text=None, check=True):
    """Runs build/bin/<name> with args; returns the CompletedProcess (text mode)."""
    done = subprocess.run([os.path.join(BIN_DIR, name), *map(str, args)], input=input_text,
                          capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"{name} {' '.join(map(str, args))} exited {done.returncode}: {done.stderr}")
    return done


@pytest.fixture(scope="session")
def bin_dir():
    return BIN_DIR
