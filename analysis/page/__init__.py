"""The paper page (results/report/index.html): report.py writes it from the result files, with its
sections (sections.py), the provenance of each file (sources.py), the HTML pieces (html.py) and the
scorecard's verdicts (scorecard.py, scorecard_clrs.py). Run it as analysis/make_report.py."""
