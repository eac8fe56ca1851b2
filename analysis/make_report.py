"""Write the paper page, results/report/index.html, from the result files in RESULTS_DIR (see
analysis/page/report.py for what the page holds and how it refuses a file).

    /usr/bin/python3 analysis/make_report.py RESULTS_DIR [--figures DIR] [--out FILE]
"""
import sys

from page import report

if __name__ == "__main__":
    sys.exit(report.main())
