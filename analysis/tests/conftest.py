"""Makes `import common`, `import fig_dispersion`, ... and `import synthetic` work whatever the
current directory pytest is started from (the scripts are run as files, not as a package); and
points the shipped results (results/published/) at an empty folder for every test, so that a page
or figure a test expects "missing" is not filled from the repository's own published files (a test
of the fallback passes its own folder)."""
import os
import sys

import pytest

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
ANALYSIS_DIR = os.path.dirname(TESTS_DIR)
for directory in (ANALYSIS_DIR, TESTS_DIR):
    if directory not in sys.path:
        sys.path.insert(0, directory)


@pytest.fixture(autouse=True)
def no_shipped_results(tmp_path_factory, monkeypatch):
    import published
    empty = str(tmp_path_factory.mktemp("no-published"))
    monkeypatch.setattr(published, "PUBLISHED_DIR", empty)
    monkeypatch.setenv("SHARP_PUBLISHED_DIR", empty)
