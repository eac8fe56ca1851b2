"""The paper page as a person sees it: headless Chromium (Debian's chromium, chromium-driver and
python3-selenium, installed by `make deps`) opens results/report/index.html from the file system,
built from small synthetic result files, and checks that every figure loaded (naturalWidth > 0),
every section and scorecard row is there, and the console has no errors; a second page with some
result files missing must show those sections as "not run"; a third, from an empty results folder,
must show the shipped results (results/published/<scale>/) with their "published: made at commit"
label and no "not run" for any file the manifest lists -- from a synthetic published folder, and
from the repository's own when it ships one (as on a fresh clone). Screenshots go to
build/test-output/report-browser-*.png.

Skipped (exit 77, which ctest reports as skipped) with the reason when the browser, its driver or
selenium is not installed. chromedriver is stopped by its pid whatever happens.
"""
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("SHARP_SOURCE_DIR", os.path.join(HERE, "..", ".."))
BIN = os.environ.get("SHARP_BIN_DIR", os.path.join(SOURCE, "build", "bin"))
ANALYSIS = os.path.join(SOURCE, "analysis")
PYTHON = "/usr/bin/python3"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
SKIP = 77

sys.path.insert(0, os.path.join(ANALYSIS, "tests"))
sys.path.insert(0, ANALYSIS)


def missing_tools() -> str:
    """Why the browser test cannot run here, or '' when it can."""
    reasons = []
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            reasons.append(f"{path} not found (Debian package {package})")
    try:
        import selenium  # noqa: F401
    except ImportError:
        reasons.append("python module selenium not found (Debian package python3-selenium)")
    return "; ".join(reasons)


NO_PUBLISHED = tempfile.mkdtemp(prefix="sharp-no-published-")
# The pages that must show missing files read no shipped results (the repository's own would fill
# the gaps); the fallback test passes its own folder with --published.
os.environ["SHARP_PUBLISHED_DIR"] = NO_PUBLISHED


def write_results(directory: str) -> None:
    """Small synthetic result files of every experiment the page has a reader for, their
    figures (analysis/make_figures.py) and the page (analysis/make_report.py)."""
    import synthetic
    synthetic.write_bounds(os.path.join(directory, "bounds.h5"),
                           ns=tuple(2 ** k for k in range(1, 13)), spreads=(1.0, 5.69),
                           thetas=(1.0,))
    synthetic.write_weight_bound(os.path.join(directory, "weight-bound.h5"), trials=20)
    synthetic.write_entropy_temperature(os.path.join(directory, "entropy-temperature.h5"),
                                        ns=(16, 256), beta_steps=15)
    synthetic.write_eval_max(os.path.join(directory, "eval-max.h5"), ns=(16, 64, 256, 1024),
                             samples=32, map_samples=8)
    synthetic.write_fit_adaptive(os.path.join(directory, "fit-adaptive.h5"), samples=12,
                                 binned=True)
    run([PYTHON, os.path.join(ANALYSIS, "make_figures.py"), directory])
    build_page(directory)


def build_page(directory: str, published: str | None = None) -> str:
    extra = ["--published", published] if published else []
    run([PYTHON, os.path.join(ANALYSIS, "make_report.py"), directory, *extra])
    return os.path.join(directory, "report", "index.html")


def run(command):
    p = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise AssertionError(f"{' '.join(command)} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


class Browser:
    """Headless Chromium through chromedriver, with a fresh profile; close() stops chromedriver
    by its pid even when the session failed."""

    def __init__(self, profile: str):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in ("--headless=new", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-background-networking", "--disable-component-update",
                     "--disable-sync", "--no-first-run", "--no-default-browser-check",
                     "--disable-extensions", f"--user-data-dir={profile}",
                     "--window-size=1280,900"):
            options.add_argument(flag)
        if os.geteuid() == 0:
            options.add_argument("--no-sandbox")  # Chromium refuses to run as root otherwise
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.service = Service(executable_path=CHROMEDRIVER,
                               log_path=os.path.join(profile, "chromedriver.log"))
        self.driver = None
        try:
            self.driver = webdriver.Chrome(service=self.service, options=options)
            self.driver.set_page_load_timeout(60)
        except Exception:
            self.close()
            raise

    def close(self):
        pid = self.service.process.pid if getattr(self.service, "process", None) else None
        try:
            if self.driver is not None:
                self.driver.quit()
        finally:
            if pid is not None:
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                deadline = time.time() + 10
                while time.time() < deadline and self.service.process.poll() is None:
                    time.sleep(0.05)
                if self.service.process.poll() is None:
                    os.kill(pid, signal.SIGKILL)

    def open(self, path: str):
        self.driver.get_log("browser")  # drop what earlier pages logged: errors are this page's
        self.driver.get("file://" + os.path.abspath(path))

    def screenshot(self, path: str):
        height = self.driver.execute_script("return document.documentElement.scrollHeight")
        self.driver.set_window_size(1280, min(int(height) + 100, 16000))
        self.driver.save_screenshot(path)
        self.driver.set_window_size(1280, 900)


class ReportInBrowser(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sharp-report-browser-")
        cls.results = os.path.join(cls.tmp, "results")
        os.makedirs(cls.results)
        write_results(cls.results)
        profile = os.path.join(cls.tmp, "profile")
        os.makedirs(profile)
        cls.browser = Browser(profile)
        cls.shots = os.path.join(os.path.dirname(os.path.abspath(BIN)), "test-output")
        os.makedirs(cls.shots, exist_ok=True)

    @classmethod
    def tearDownClass(cls):
        try:
            cls.browser.close()
        finally:
            shutil.rmtree(cls.tmp, ignore_errors=True)

    def console_errors(self):
        return [e for e in self.browser.driver.get_log("browser") if e.get("level") == "SEVERE"]

    def images(self):
        return self.browser.driver.execute_script(
            "return Array.from(document.images).map(i => [i.alt, i.complete, i.naturalWidth]);")

    def test_1_every_figure_section_and_claim_is_shown(self):
        from page import scorecard, sections
        d = self.browser.driver
        self.browser.open(os.path.join(self.results, "report", "index.html"))
        self.assertIn("reproduction report", d.title)
        images = self.images()
        drawn = {f[:-4] for f in os.listdir(os.path.join(self.results, "figures"))
                 if f.endswith(".png")}
        self.assertEqual(len(images), len(drawn), images)
        for alt, complete, width in images:
            self.assertTrue(complete and width > 0, f"figure {alt!r} did not load")
        for section in sections.SECTIONS:
            self.assertTrue(d.find_elements("id", section.key), f"no section {section.key}")
        rows = d.execute_script(
            "return document.querySelectorAll('table.scorecard tbody tr:not(.group)').length;")
        data = d.execute_script(
            "return JSON.parse(document.getElementById('scorecard-data').textContent).length;")
        self.assertGreater(rows, 30)
        self.assertEqual(rows, data)
        verdicts = d.execute_script(
            "return Array.from(document.querySelectorAll('table.scorecard td.verdict'))"
            ".map(td => td.textContent);")
        self.assertTrue(set(verdicts) <= set(scorecard.VERDICTS), set(verdicts))
        self.assertIn(scorecard.IDENTITY, verdicts)
        self.assertEqual(self.console_errors(), [])
        shot = os.path.join(self.shots, "report-browser-full.png")
        self.browser.screenshot(shot)
        self.assertGreater(os.path.getsize(shot), 10000)
        print(f"screenshot: {shot}")

    def test_2_missing_files_show_not_run_sections(self):
        for name in ("eval-max.h5", "fit-adaptive.h5"):
            os.remove(os.path.join(self.results, name))
        page = build_page(self.results)
        d = self.browser.driver
        self.browser.open(page)
        for key, name in (("max-retrieval", "eval-max.h5"), ("beta-refit", "fit-adaptive.h5")):
            section = d.find_element("id", key)
            self.assertIn(f"not run: {os.path.join(self.results, name)} is missing", section.text)
            self.assertEqual(section.find_elements("tag name", "img"), [])
        # the three figures of the files still present: the lemma, the weight bound, entropy
        self.assertEqual(len(self.images()), 3, self.images())
        for alt, complete, width in self.images():
            self.assertTrue(complete and width > 0, f"figure {alt!r} did not load")
        not_measured = d.execute_script(
            "return Array.from(document.querySelectorAll('tr.v-not-measured')).length;")
        self.assertGreaterEqual(not_measured, 16 + 6 + 6)  # accuracy cells, p-values, refits
        self.assertEqual(self.console_errors(), [])
        self.browser.screenshot(os.path.join(self.shots, "report-browser-missing.png"))

    def check_shipped_page(self, published_dir: str, shot: str):
        """An empty results folder: every file its manifests list is read from published_dir,
        labelled, never "not run", and every figure drawn from it loads."""
        sys.path.insert(0, ANALYSIS)
        import published
        empty = os.path.join(self.tmp, "empty-" + os.path.basename(shot))
        os.makedirs(empty)
        run([PYTHON, os.path.join(ANALYSIS, "make_figures.py"), empty, "--published", published_dir])
        page = build_page(empty, published_dir)
        d = self.browser.driver
        self.browser.open(page)
        text = d.find_element("tag name", "body").text
        listed = set()
        for scale in published.SCALES:
            folder = os.path.join(published_dir, scale)
            if os.path.isdir(folder):
                listed |= set(published.load_manifest(folder)["files"])
        self.assertTrue(listed)
        for name in listed:
            self.assertNotIn(f"{os.path.join(empty, name)} is missing", text)
            self.assertIn(f"results/ has no {name}", text)
        self.assertIn("published: made at commit", text)
        images = self.images()
        self.assertGreater(len(images), 0)
        for alt, complete, width in images:
            self.assertTrue(complete and width > 0, f"figure {alt!r} did not load")
        self.assertEqual(self.console_errors(), [])
        self.browser.screenshot(os.path.join(self.shots, shot))

    def test_3_an_empty_results_folder_shows_the_shipped_results(self):
        sys.path.insert(0, os.path.join(SOURCE, "scripts"))
        import h5py
        import publish
        run_dir = os.path.join(self.tmp, "paper-run")
        os.makedirs(run_dir)
        write_results(run_dir)
        for name in os.listdir(run_dir):
            if name.endswith(".h5"):
                with h5py.File(os.path.join(run_dir, name), "a") as f:
                    f.attrs["scale"] = "paper"
        shipped = os.path.join(self.tmp, "published")
        self.assertEqual(publish.main(["--scale", "paper", run_dir,
                                       "--out", os.path.join(shipped, "paper")]), 0)
        self.check_shipped_page(shipped, "report-browser-published.png")

    def test_4_the_repositorys_own_shipped_results(self):
        shipped = os.path.join(SOURCE, "results", "published")
        if not os.path.isdir(shipped):
            self.skipTest("this checkout ships no results (results/published/ is absent)")
        self.check_shipped_page(shipped, "report-browser-repository-published.png")


if __name__ == "__main__":
    why = missing_tools()
    if why:
        print(f"skipped: the browser test needs {why}; `make deps` installs them")
        sys.exit(SKIP)
    started = time.time()
    result = unittest.main(exit=False, verbosity=2).result
    print(f"report browser test: {time.time() - started:.1f} s")
    sys.exit(0 if result.wasSuccessful() else 1)
