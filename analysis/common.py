"""Shared pieces of the analysis scripts: reading "sharp/1" result files, one figure style,
and writing figures reproducibly.

Analysis reads only files (docs/architecture.md#layers), through the one reader of result files in
Python, sharp.results (python/sharp/results.py, pure Python: no build needed): every figure script
loads a merged result file with load_result(), which refuses anything that is not a complete
"sharp/1" file of the expected experiment with columns of the types the experiments write, and
writes through save_figure(), whose PDFs are byte-identical across runs.

A refusal is one exception type, ResultFileError, whose message names the file, the problem and
what to do; any check of a file raises it. make_figures.py and page/report.py turn it into a product's
message in one place each, through attempt(), which also turns a bug of the analysis (any other
exception) into a message to report instead of a crash of every other figure.
"""
from __future__ import annotations

import dataclasses
import math
import os
import sys
import tempfile
import traceback
from typing import Iterable, Sequence

import numpy as np
import matplotlib

matplotlib.use("Agg")  # files only, no display; must precede the pyplot import
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import ticker  # noqa: E402

# The reader lives in the package sharp of this repository (python/sharp), used from the source.
_PYTHON_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python")
if _PYTHON_DIR not in sys.path:
    sys.path.insert(0, _PYTHON_DIR)
from sharp import results as _results  # noqa: E402

SCHEMA = _results.SCHEMA
ResultFileError = _results.ResultFileError
_decode = _results.decode
# The checksum of a merged file's data (root attribute `checksum`, runners/result_checksum.hpp):
# load_result, and so every loader, verifies it; a mismatch is a ResultFileError with the reason,
# a file without one is read with the note Result.checksum_note.
data_checksum = _results.data_checksum


# --------------------------------------------------------------------------------------------
# Reading result files


@dataclasses.dataclass(frozen=True)
class Result(_results.Points):
    """One merged result file: the /points table of sharp.results.Points (path, attrs, config, ids,
    params, metrics, timing; every column [P] in the file's point order, row i belongs to ids[i]),
    with what the figures ask of it."""

    @property
    def experiment(self) -> str:
        return self.attrs["experiment"]

    def __len__(self) -> int:
        return len(self.ids)

    def arrays(self, point_id: str, names: Iterable[str] | None = None) -> dict:
        """Every dataset under /arrays/<point_id> (or only `names`), keyed by its path relative to
        that group (nested groups give names like "layer0/alpha"). Read on demand: arrays can be
        large. Asking for an array the point lacks (arrays[name]) refuses the file."""
        return PointArrays(self.path, point_id,
                           _results.point_arrays(self.path, point_id,
                                                 None if names is None else set(names)))

    def column(self, name: str) -> np.ndarray:
        """A parameter or metric by name (parameters first)."""
        if name in self.params:
            return self.params[name]
        if name in self.metrics:
            return self.metrics[name]
        raise KeyError(f"{self.path}: no parameter or metric named {name!r}; parameters: "
                       f"{sorted(self.params)}, metrics: {sorted(self.metrics)}")

    def require(self, params: Iterable[str] = (), metrics: Iterable[str] = (),
                finite: bool = True, arrays: Iterable[str] = ()) -> None:
        """Refuse a file lacking what a figure needs (naming every missing item at once: parameters,
        metrics, and `arrays` every point must hold), or, with `finite`, whose needed float metrics
        hold NaN or infinity: a figure must not hide a numeric failure."""
        params, metrics, arrays = list(params), list(metrics), list(arrays)
        missing = [f"/points/params/{p}" for p in params if p not in self.params]
        missing += [f"/points/{m}" for m in metrics if m not in self.metrics]
        if arrays:
            held = _results.array_names(self.path)
            for point_id in self.ids:
                lacking = [a for a in arrays if a not in held[point_id]]
                missing += [f"/arrays/{point_id}/{a}" for a in lacking]
                if lacking:
                    break  # one point names the missing arrays; the rest would repeat them
        if missing:
            raise ResultFileError(
                f"{self.path}: experiment {self.experiment!r} lacks {', '.join(missing)}; the file "
                f"was written by an older or different version of the experiment. Re-run it.")
        for name in metrics if finite else ():
            self.require_finite(f"/points/{name}", self.metrics[name])

    def require_finite(self, what: str, values: np.ndarray, point_id: str | None = None) -> None:
        """Raise ResultFileError when a float array holds NaN or ±inf."""
        values = np.asarray(values)
        if values.dtype.kind != "f" or np.all(np.isfinite(values)):
            return
        rows = values.reshape(values.shape[0] if values.ndim else 1, -1)  # [P or S, rest]
        bad = np.flatnonzero(~np.isfinite(rows).all(axis=1))
        where = (f"point {point_id} (index {', '.join(str(i) for i in bad[:3])})"
                 if point_id is not None else
                 f"point(s) {', '.join(self.ids[i] for i in bad[:3])}"
                 f"{' ...' if bad.size > 3 else ''}")
        raise ResultFileError(
            f"{self.path}: {what} is not finite at {where} ({bad.size} value(s)); the experiment "
            f"produced NaN or infinity, which analysis will not plot. Fix the experiment and "
            f"re-run.")

    def rows(self, **criteria) -> np.ndarray:
        """Indices of the points whose parameters match, e.g. rows(logits="uniform", n=[16, 64]).
        A value may be a scalar or a list of allowed values; floats compare with rtol 1e-12
        (values in the file went through a shortest round-trip, so this is equality)."""
        mask = np.ones(len(self), dtype=bool)
        for name, wanted in criteria.items():
            column = self.column(name)
            allowed = wanted if isinstance(wanted, (list, tuple, set, np.ndarray)) else [wanted]
            hit = np.zeros(len(self), dtype=bool)
            for value in allowed:
                if column.dtype.kind == "f":
                    hit |= np.isclose(column, float(value), rtol=1e-12, atol=0.0)
                else:
                    hit |= column == value
            mask &= hit
        return np.flatnonzero(mask)

    def group_by(self, *names: str, among: np.ndarray | None = None) -> list:
        """[(key tuple, row indices)] for each distinct combination of the named parameters,
        sorted by key, so figures draw series in a fixed order. `among` restricts to those rows."""
        index = np.arange(len(self)) if among is None else np.asarray(among)
        groups: dict = {}
        for i in index:
            key = tuple(_decode(self.column(n)[i]) for n in names)
            groups.setdefault(key, []).append(i)
        return [(k, np.array(groups[k], dtype=int)) for k in sorted(groups)]

    def distinct(self, name: str) -> list:
        """Sorted distinct values of a parameter or metric."""
        return sorted({_decode(v) for v in self.column(name)})



@dataclasses.dataclass(frozen=True)
class Needs:
    """What a figure or table reads from one experiment's result file, declared beside its code so
    that analysis/tests/test_needs_declared.py can check every name against what the experiment's
    binary declares (`--describe`): a misspelt or renamed output fails a test, not a figure on a
    paper-scale file. Names a binary declares with a placeholder (`accuracy.<normaliser>`) are
    written here with the value (`accuracy.softmax`)."""
    experiment: str
    params: tuple = ()
    metrics: tuple = ()
    arrays: tuple = ()   # every point must hold these

    def check(self, result: "Result", finite: bool = True) -> None:
        result.require(self.params, self.metrics, finite=finite, arrays=self.arrays)

    def load(self, path: str | os.PathLike, finite: bool = True) -> "Result":
        """The file at `path`, refused unless it is this experiment's and holds what is needed."""
        result = load_result(path, self.experiment)
        self.check(result, finite)
        return result


class PointArrays(dict):
    """The arrays of one point; a missing one is a refusal of the file (ResultFileError naming
    file, point and array), not a KeyError deep inside a figure."""

    def __init__(self, path: str, point_id: str, arrays: dict):
        super().__init__(arrays)
        self.path, self.point_id = path, point_id

    def __missing__(self, name):
        raise ResultFileError(
            f"{self.path}: /arrays/{self.point_id} has no {name!r} (it holds "
            f"{', '.join(sorted(self)) or 'nothing'}); the file is damaged or was written by another "
            f"version of the experiment. Regenerate it with the experiment binary.")


# The type of every parameter the experiments declare (runners/param_spec.hpp: integer, real or
# text; experiments/*.cpp and runners/options.cpp), as /points/params/<name> holds it. A file whose
# column has another type was not written by them (hand-edited, another tool, damaged) and is
# refused, before a figure formats text as a number or groups numbers as names. A parameter not
# listed is not checked. test_param_kinds_match_the_experiments keeps this in step with the C++.
INTEGER, REAL, TEXT = "integers", "real numbers", "text"
PARAM_KINDS = {
    **dict.fromkeys(("batch", "beta_steps", "bins", "causal", "chunk", "d_head", "d_model", "depth",
                     "eval_every", "eval_samples", "heads", "layer_norm", "layers", "length",
                     "map_items", "map_samples", "max_length", "n", "n_max", "n_min", "row_arrays",
                     "samples", "seed", "steps", "train_n", "trials", "vocab", "warmup", "width"),
                    INTEGER),
    **dict.fromkeys(("beta_max", "beta_min", "clip", "final_lr", "init_scale", "input_scale", "lr",
                     "spread", "theta", "weight_decay", "weight_scale"), REAL),
    **dict.fromkeys(("algorithm", "algorithms", "checkpoint", "input", "lengths", "logits",
                     "normaliser", "per_sample", "positional", "sample_seed", "schedule", "trace",
                     "train_normaliser"), TEXT),
}
# numpy dtype kinds each type may be read as: a real column of integers loses nothing.
_KIND_CODES = {INTEGER: "iu", REAL: "iuf", TEXT: "USO"}


def _holds(values: np.ndarray) -> str:
    dtype = np.asarray(values).dtype
    return (TEXT if dtype.kind in "USO" else INTEGER if dtype.kind in "iu" else
            REAL if dtype.kind == "f" else f"values of type {dtype}")


def check_column_types(result: Result) -> None:
    """Refuse a file (ResultFileError naming every bad column at once) whose parameters are not of
    the types in PARAM_KINDS, or whose metrics are not numbers (sharp/1 metrics are float64 or
    int64)."""
    bad = [f"/points/params/{name} holds {_holds(values)}, not {PARAM_KINDS[name]}"
           for name, values in result.params.items()
           if name in PARAM_KINDS and np.asarray(values).dtype.kind not in _KIND_CODES[PARAM_KINDS[name]]]
    bad += [f"/points/{name} holds {_holds(values)}, not numbers"
            for name, values in result.metrics.items() if np.asarray(values).dtype.kind not in "iuf"]
    if bad:
        raise ResultFileError(
            f"{result.path}: refused: {'; '.join(bad)}. sharp's experiments never write these "
            f"types, so the file is damaged or was not written by them; regenerate it with the "
            f"experiment binary.")


def load_result(path: str | os.PathLike, experiment: str | None = None) -> Result:
    """Read a merged "sharp/1" result file. Raises ResultFileError for a missing file, a non-HDF5
    file, a file without root attribute complete == 1, another schema, (when `experiment` is
    given) another experiment, data that do not match the root attribute `checksum`
    (data_checksum: "checksum mismatch: ..."), files whose /points layout is malformed, and
    columns of the wrong type (check_column_types). A file without a checksum (written before
    files carried one) is read; its checksum_note says so."""
    result = Result(**vars(_results.read_points(path, experiment)))
    check_column_types(result)
    return result


# --------------------------------------------------------------------------------------------
# One product (figure, table, page section) at a time: a refusal or a bug stops only that one.


@dataclasses.dataclass(frozen=True)
class Problem:
    """Why a product was not made. kind "refused": a file was refused, `text` is the reason
    (ResultFileError's message: file, problem, what to do). kind "failed": the analysis itself
    raised something else, a bug; `text` names the exception and asks for a report."""
    kind: str
    text: str


def attempt(make, what: str = "section"):
    """(make(), None), or (None, Problem) when make() raises: a ResultFileError is a refusal; any
    other exception a failure, whose traceback goes to stderr for the report it asks for. Nothing
    is swallowed: the caller shows the Problem where the product would be, and says so on stderr."""
    try:
        return make(), None
    except ResultFileError as err:
        return None, Problem("refused", str(err))
    except Exception as err:  # noqa: BLE001 — a bug in one product must not stop the others
        traceback.print_exc(file=sys.stderr)
        return None, Problem("failed", f"this {what} failed: {type(err).__name__}: {err} — "
                                       f"please report it")


# --------------------------------------------------------------------------------------------
# Style: one rc dict for every figure, sized for a two-column paper (full width ≈ 7 in).

STYLE = {
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "legend.fontsize": 7.5,
    "legend.title_fontsize": 7.5,
    "legend.frameon": False,
    "legend.handlelength": 1.8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "xtick.direction": "in",
    "ytick.direction": "in",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "0.88",
    "grid.linewidth": 0.5,
    "lines.linewidth": 1.2,
    "lines.markersize": 4,
    "mathtext.fontset": "dejavusans",
    # Type 3 fonts: Type 42 embedding runs fontTools, which stamps the current time into the
    # subset font's 'head' table and would make PDFs differ from run to run.
    "pdf.fonttype": 3,
}
FULL_WIDTH = 7.0   # inches, two panels side by side
HALF_WIDTH = 3.4   # inches, one panel

# Logit laws of the bounds / entropy experiments, in the order figures list them.
LAW_ORDER = ["one-hot", "two-point", "uniform", "gaussian"]
LAW_MARKERS = {"one-hot": "^", "two-point": "s", "uniform": "o", "gaussian": "D"}
LAW_LINESTYLES = {"one-hot": "-", "two-point": "--", "uniform": "-.", "gaussian": ":"}
_SPARE_MARKERS = ["v", "P", "X", "*", "<", ">", "h"]
_SPARE_LINESTYLES = [(0, (5, 1, 1, 1)), (0, (1, 3)), (0, (8, 2))]


def law_sort_key(law: str):
    return (LAW_ORDER.index(law), law) if law in LAW_ORDER else (len(LAW_ORDER), law)


def law_marker(law: str, others: Sequence[str] = ()) -> str:
    if law in LAW_MARKERS:
        return LAW_MARKERS[law]
    unknown = sorted(l for l in others if l not in LAW_MARKERS)
    return _SPARE_MARKERS[unknown.index(law) % len(_SPARE_MARKERS)] if law in unknown else "x"


def law_linestyle(law: str, others: Sequence[str] = ()):
    if law in LAW_LINESTYLES:
        return LAW_LINESTYLES[law]
    unknown = sorted(l for l in others if l not in LAW_LINESTYLES)
    return _SPARE_LINESTYLES[unknown.index(law) % len(_SPARE_LINESTYLES)] if law in unknown else "-"


# One palette for every figure and the report page, defined here once: Okabe & Ito's colours,
# told apart with the common colour-vision deficiencies and of different lightness, so greyscale
# print keeps blue / orange / vermillion apart; series also differ by marker or line style.
# Ordered quantities use viridis instead (sequential_colours). Yellow last: faint on white.
PALETTE = {"blue": "#0072B2", "orange": "#E69F00", "green": "#009E73", "vermillion": "#D55E00",
           "purple": "#CC79A7", "sky": "#56B4E9", "black": "#000000", "yellow": "#F0E442"}


def sequential_colours(count: int) -> list:
    """Colours for an ordered quantity (δ/θ, n, d_model): viridis without its pale yellow end,
    which vanishes on white paper."""
    cmap = matplotlib.colormaps["viridis"]
    if count == 1:
        return [cmap(0.35)]
    return [cmap(0.82 * i / (count - 1)) for i in range(count)]


def qualitative_colours(count: int) -> list:
    """Colours for unordered items (a few picked points), from PALETTE in its order."""
    names = list(PALETTE)
    return [PALETTE[names[i % len(names)]] for i in range(count)]


def new_figure(ncols: int = 1, width: float | None = None, height: float = 2.7,
               legend_width: float = 0.0):
    """A styled figure with `ncols` panels in a row (constrained layout). With legend_width > 0
    (a fraction of one panel's width) a blank column on the right holds legends, so they never
    cover data; it is returned as a third value (None otherwise)."""
    matplotlib.rcParams.update(STYLE)
    width = width if width is not None else (FULL_WIDTH if ncols > 1 else HALF_WIDTH)
    fig = plt.figure(figsize=(width, height), layout="constrained")
    ratios = [1.0] * ncols + ([legend_width] if legend_width > 0 else [])
    grid = fig.add_gridspec(1, len(ratios), width_ratios=ratios)
    axes = [fig.add_subplot(grid[0, i]) for i in range(ncols)]
    legend_ax = None
    if legend_width > 0:
        legend_ax = fig.add_subplot(grid[0, ncols])
        legend_ax.axis("off")
    return fig, (axes[0] if ncols == 1 else axes), legend_ax


def log2_axis(ax, axis: str = "x", max_ticks: int = 8) -> None:
    """Log axis in base 2 with ticks labelled 2^k, for axes that carry n (powers of two)."""
    target = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log", base=2)
    target.set_major_locator(ticker.LogLocator(base=2, subs=(1.0,), numticks=max_ticks))
    target.set_major_formatter(ticker.LogFormatterMathtext(base=2))
    target.set_minor_locator(ticker.NullLocator())


def label_short_log_axis(ax, axis: str = "y") -> None:
    """On a log axis spanning less than about two decades, label some minor ticks (2·10^k, …)
    too, so the reader gets more than one number."""
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_minor_formatter(ticker.LogFormatterSciNotation(minor_thresholds=(2, 0.5)))


def power_of_two_label(n: int) -> str:
    """'2^{k}' mathtext for a power of two, the plain number otherwise."""
    n = int(n)
    if n > 0 and n & (n - 1) == 0:
        return f"2^{{{n.bit_length() - 1}}}"
    return f"{n}"


def format_number(x: float, digits: int = 4) -> str:
    """Short, stable text for a float in tables and labels (4 significant digits)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    return f"{x:.{digits}g}"


# --------------------------------------------------------------------------------------------
# Output

# Fixed metadata: matplotlib's defaults put its version in Creator/Producer and the current time in
# CreationDate (pdf backend, _create_pdf_info_dict); None removes a key.
PDF_METADATA = {"Creator": "sharp analysis", "Producer": "sharp analysis (matplotlib)",
                "CreationDate": None}
PNG_METADATA = {"Software": "sharp analysis (matplotlib)"}


# The process umask (read once: os.umask can only be read by setting it).
_UMASK = os.umask(0)
os.umask(_UMASK)


def _atomic_write(path: str, write) -> None:
    """Write through a temporary file in the same directory and rename, so a reader never sees a
    half-written figure or table."""
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=os.path.splitext(path)[1], dir=directory)
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; give the usual permissions
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def save_figure(fig, outdir: str | os.PathLike, name: str) -> list:
    """Write outdir/name.png (150 dpi) and outdir/name.pdf (byte-reproducible), close the figure,
    and return the two paths."""
    outdir = os.fspath(outdir)
    os.makedirs(outdir, exist_ok=True)
    png = os.path.join(outdir, f"{name}.png")
    pdf = os.path.join(outdir, f"{name}.pdf")
    try:
        _atomic_write(png, lambda p: fig.savefig(p, format="png", dpi=STYLE["savefig.dpi"],
                                                 metadata=PNG_METADATA))
        _atomic_write(pdf, lambda p: fig.savefig(p, format="pdf", metadata=PDF_METADATA))
    finally:
        plt.close(fig)
    return [png, pdf]


def save_text(text: str, outdir: str | os.PathLike, filename: str) -> str:
    """Write a table or report next to the figures; returns its path."""
    outdir = os.fspath(outdir)
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, filename)

    def write(p):
        with open(p, "w", encoding="utf-8") as fh:
            fh.write(text)

    _atomic_write(path, write)
    return path


def loud_warning(message: str) -> None:
    """A warning nobody scrolls past: a failed check in the data (a bound violated, ...)."""
    bar = "!" * 78
    print(f"\n{bar}\nWARNING: {message}\n{bar}\n", file=sys.stderr)


def default_outdir(result_path: str) -> str:
    """Figures go to <directory of the result file>/figures unless --out says otherwise."""
    return os.path.join(os.path.dirname(os.path.abspath(result_path)), "figures")


def run_standalone(make, description: str, argv: Sequence[str] | None = None) -> int:
    """main() of a fig_*.py script: `fig_X.py RESULT.h5 [--out DIR]`. Prints the files written;
    a refused file prints its message and exits 1."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("result", help="merged result file (HDF5, schema sharp/1)")
    parser.add_argument("--out", help="output directory (default: figures/ beside the result)")
    args = parser.parse_args(argv)
    outdir = args.out or default_outdir(args.result)
    try:
        written = make(args.result, outdir)
    except ResultFileError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path}")
    return 0
