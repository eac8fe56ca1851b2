"""Makes `import common`, `import fig_dispersion`, ... and `import synthetic` work whatever the
current directory pytest is started from (the scripts are run as files, not as a package)."""
import os
import sys

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
ANALYSIS_DIR = os.path.dirname(TESTS_DIR)
for directory in (ANALYSIS_DIR, TESTS_DIR):
    if directory not in sys.path:
        sys.path.insert(0, directory)
