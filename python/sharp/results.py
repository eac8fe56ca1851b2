"""The one reader of "sharp/1" result files in Python (docs/architecture.md#hdf5-schema,
docs/architecture.md#labelled-view), as runners/result_reader.hpp is in C++. Pure Python (h5py,
numpy; xarray for open_results): it works without sharp's compiled module.

    read_points(path)          the /points table: ids, parameters, metrics, timing, root attributes
    point_arrays(path, id)     every array of one point, exactly as stored
    open_results(path)         the whole file as an xarray.Dataset

Each refuses a file that is missing, not HDF5, incomplete (root attribute complete != 1), of another
schema or (when asked) of another experiment, whose data do not match its root attribute
`checksum` (data_checksum), or whose /points layout is malformed, raising ResultFileError with a
message that names the file, the problem and what to do. A file written before result files carried
a checksum is read, with a note (Points.checksum_note, the dataset's attrs["checksum_note"], and an
UnverifiedResultWarning).
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import threading
import warnings
from typing import Any

import h5py
import numpy as np

SCHEMA = "sharp/1"


class ResultFileError(Exception):
    """A result file that must not be read (missing, not HDF5, incomplete, wrong schema or
    experiment, malformed). The message names the file, the problem and what to do."""


class UnverifiedResultWarning(UserWarning):
    """A result file without a checksum (written before files carried one): read, not verified."""


CHECKSUM_MISMATCH = "checksum mismatch: the file was modified or damaged after it was written; rerun to regenerate"
NO_CHECKSUM = "no checksum (written before result files carried one): its data cannot be verified"


def data_checksum(f: h5py.File) -> str:
    """SHA-256 (hex) of a merged file's data, as the runner computes it when it merges
    (runners/result_checksum.hpp): every dataset that stores values of its own (not the labelled
    view's virtual datasets), except under /timing, in byte order of their paths; each as path, NUL,
    element code ("f8", "i8", ..., or "str"), NUL, rank and dimensions (8-byte little-endian), then
    its values: numbers as stored little-endian bytes, strings as an 8-byte length and UTF-8 bytes.
    Attributes are not covered."""
    # Paths only, read one at a time: holding 40 000 h5py objects (a recursive closure over them is
    # a reference cycle) kept them open until garbage collection and made every later close()
    # of the file take half a second.
    paths = []
    stack = [(f, "")]
    while stack:
        group, prefix = stack.pop()
        for name in group:
            obj = group.get(name)
            path = prefix + name
            if isinstance(obj, h5py.Group):
                if path != "timing":
                    stack.append((obj, path + "/"))
            elif isinstance(obj, h5py.Dataset) and not obj.is_virtual:
                paths.append(path)
    sha = hashlib.sha256()
    u64 = lambda v: int(v).to_bytes(8, "little")  # noqa: E731
    for path in sorted(paths, key=lambda p: p.encode("utf-8")):
        ds = f[path]
        text = h5py.check_string_dtype(ds.dtype) is not None
        code = "str" if text else f"{ds.dtype.kind}{ds.dtype.itemsize}"
        sha.update(path.encode("utf-8") + b"\0" + code.encode() + b"\0" + u64(len(ds.shape)) + b"".join(u64(d) for d in ds.shape))
        values = ds[()]
        if text:
            for v in np.asarray(values, dtype=object).ravel():
                b = v.encode("utf-8") if isinstance(v, str) else bytes(v)
                sha.update(u64(len(b)) + b)
        else:
            a = np.asarray(values)
            sha.update(np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).tobytes())
    return sha.hexdigest()


# Checksum verdicts of the files this process read: path -> (size, mtime, inode, note). A figure
# script reads a file's arrays point by point; the file is read through once.
_verified: dict = {}
_verified_lock = threading.Lock()


def _checksum_note(path: str, f: h5py.File) -> str:
    """"" when the data match the root attribute `checksum`, NO_CHECKSUM when the file has none;
    raises ResultFileError on a mismatch."""
    st = os.stat(path)
    key = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)
    with _verified_lock:
        known = _verified.get(path)
    if known is not None and known[0] == key:
        return known[1]
    stored = f.attrs.get("checksum")
    if stored is None:
        note = NO_CHECKSUM
        warnings.warn(f"{path}: {note}", UnverifiedResultWarning, stacklevel=4)
    elif decode(stored) != data_checksum(f):
        raise ResultFileError(f"{path}: {CHECKSUM_MISMATCH}")
    else:
        note = ""
    with _verified_lock:
        _verified[path] = (key, note)
    return note


def decode(value: Any) -> Any:
    """h5py hands back bytes for some strings (fixed-length, or variable-length datasets read
    without .asstr()) and numpy scalars for numbers; callers want str and Python numbers."""
    if isinstance(value, (bytes, np.bytes_)):
        return value.decode("utf-8")
    if isinstance(value, np.ndarray):
        if value.dtype.kind in ("S", "O"):
            return np.array([decode(v) for v in value.ravel()], dtype=str).reshape(value.shape)
        return value
    if isinstance(value, np.generic):
        return value.item()
    return value


def _attribute_value(value: Any) -> Any:
    """Root attributes are scalars; a one-element array (some writers make [1] dataspaces) is
    taken as its element."""
    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.ravel()[0]
    return decode(value)


def _read_dataset(ds: h5py.Dataset) -> np.ndarray:
    """A dataset as numpy; string datasets become arrays of str (dtype '<U…')."""
    if h5py.check_string_dtype(ds.dtype) is not None:
        data = ds.asstr()[()]
        if isinstance(data, str):
            return np.array(data, dtype=str)
        return np.asarray(data, dtype=str)
    return ds[()]


@dataclasses.dataclass(frozen=True)
class Points:
    """The /points table of a merged file. P = number of points; every params/metrics/timing array
    has length P along its first axis, in the file's point order (row i belongs to ids[i])."""

    path: str
    attrs: dict    # root attributes, str / int / float
    config: str    # canonical config text, lines "key = value"
    ids: list      # [P] point ids, 16 hex chars each
    params: dict   # name -> [P] array (float64, int64 or str)
    metrics: dict  # name -> [P, ...] array (float64 or int64)
    timing: dict   # name -> [P] array (wall_seconds, peak_rss_bytes, threads)
    checksum_note: str = ""  # NO_CHECKSUM for a file written before files carried a checksum


def _open(path: str) -> h5py.File:
    try:
        return h5py.File(path, "r")
    except OSError as err:
        raise ResultFileError(
            f"{path}: cannot be opened as HDF5 ({err}). It is not an HDF5 file or is truncated; "
            f"regenerate it with the experiment binary (re-running the same command resumes)."
        ) from None


def _open_checked(path: str | os.PathLike, experiment: str | None) -> tuple:
    """(path as str, the open file, the checksum note) after the refusals every reader makes."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ResultFileError(
            f"{path}: file not found. Run the experiment first (e.g. `make paper`, or the "
            f"experiment binary with --out {path}) or pass the right path.")
    if not h5py.is_hdf5(path):
        raise ResultFileError(
            f"{path}: not an HDF5 file. Result files are written by the experiment binaries; "
            f"check the path, or regenerate the file.")
    f = _open(path)
    try:
        _check_root_attributes(path, {k: _attribute_value(v) for k, v in f.attrs.items()}, experiment)
        missing = [p for p in ("points/id", "points/params") if p not in f]
        if missing:
            raise ResultFileError(f"{path}: malformed sharp/1 file, missing /{', /'.join(missing)}; "
                                  f"regenerate it with the experiment binary.")
        note = _checksum_note(path, f)
    except BaseException:
        f.close()
        raise
    return path, f, note


def read_points(path: str | os.PathLike, experiment: str | None = None) -> Points:
    """Read the /points table of a merged "sharp/1" result file (refusals: see the module)."""
    path, f, note = _open_checked(path, experiment)
    with f:
        attrs = {k: _attribute_value(v) for k, v in sorted(f.attrs.items())}
        config = str(decode(_read_dataset(f["config"])[()])) if "config" in f else ""
        ids = [str(v) for v in _read_dataset(f["points/id"])]
        params = {name: _read_dataset(ds) for name, ds in sorted(f["points/params"].items())}
        metrics = {name: _read_dataset(ds) for name, ds in sorted(f["points"].items())
                   if isinstance(ds, h5py.Dataset) and name != "id"}
        timing = ({name: _read_dataset(ds) for name, ds in sorted(f["timing"].items())
                   if isinstance(ds, h5py.Dataset)} if "timing" in f else {})
    _check_lengths(path, len(ids), {**{f"params/{k}": v for k, v in params.items()},
                                    **metrics, **{f"timing/{k}": v for k, v in timing.items()}})
    return Points(path=path, attrs=attrs, config=config, ids=ids, params=params, metrics=metrics,
                  timing=timing, checksum_note=note)


def point_arrays(path: str | os.PathLike, point_id: str, names=None) -> dict:
    """Every dataset under /arrays/<point_id> (or only `names`), keyed by its path relative to
    that group (nested groups give names like "layer0/alpha"), exactly as stored."""
    path, f, _ = _open_checked(path, None)
    with f:
        group_path = f"arrays/{point_id}"
        if "arrays" not in f:
            raise ResultFileError(
                f"{path}: has no /arrays group, so no per-point arrays (no group "
                f"/arrays/{point_id}); this reader needs them. The file is damaged or was cut "
                f"down: regenerate it with the experiment binary.")
        if group_path not in f:
            ids = [str(v) for v in _read_dataset(f["points/id"])]
            raise ResultFileError(
                f"{path}: no group /arrays/{point_id}; this experiment stores no arrays "
                f"for that point (or the id is wrong). Point ids in the file: "
                f"{', '.join(ids[:5])}{' ...' if len(ids) > 5 else ''}")
        out = {}

        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and (names is None or name in names):
                out[name] = _read_dataset(obj)

        f[group_path].visititems(visit)
        return dict(sorted(out.items()))


def array_names(path: str | os.PathLike) -> dict:
    """{point id: set of its array names} (names relative to /arrays/<id>, nested groups as
    "layer0/alpha"), nothing read but the names; a point without arrays maps to an empty set. For a
    file already opened by read_points (whose checksum it verified)."""
    path = os.fspath(path)
    with _open(path) as f:
        ids = [str(v) for v in _read_dataset(f["points/id"])]
        names = {i: set() for i in ids}
        group = f.get("arrays")
        for point_id in ids if group is not None else ():
            if point_id in group:
                group[point_id].visititems(
                    lambda name, obj, into=names[point_id]: into.add(name) if isinstance(obj, h5py.Dataset) else None)
        return names


def _check_root_attributes(path: str, attrs: dict, experiment: str | None) -> None:
    problems = []
    schema = attrs.get("schema")
    if schema != SCHEMA:
        problems.append(f"schema is {schema!r}, this analysis reads {SCHEMA!r}"
                        if schema is not None else "root attribute 'schema' is missing")
    complete = attrs.get("complete")
    if complete != 1:
        problems.append("the file is incomplete (root attribute 'complete' is "
                        + ("missing" if complete is None else f"{complete!r}") + ", not 1)")
    if problems:
        raise ResultFileError(
            f"{path}: refused: {'; '.join(problems)}. A run that stopped early leaves an "
            f"incomplete file: re-run the same command to resume it (or --merge-only once every "
            f"part is done); a file of another schema needs a matching analysis version.")
    if experiment is not None and attrs.get("experiment") != experiment:
        raise ResultFileError(
            f"{path}: holds experiment {attrs.get('experiment')!r} but this figure needs "
            f"{experiment!r}; pass the {experiment}.h5 file instead.")


def _check_lengths(path: str, n_points: int, columns: dict) -> None:
    bad = [f"{name} has {np.shape(v)[0] if np.ndim(v) else 'scalar'}"
           for name, v in columns.items() if np.ndim(v) == 0 or np.shape(v)[0] != n_points]
    if bad:
        raise ResultFileError(f"{path}: malformed sharp/1 file: /points/id has {n_points} points "
                              f"but {', '.join(bad)}; regenerate it.")


# --------------------------------------------------------------------------------------------
# The labelled dataset


def open_results(path: str | os.PathLike, experiment: str | None = None):
    """The result file as an xarray.Dataset: the grid's parameters as dimensions and coordinates
    (or a `point` dimension when the points are no Cartesian product), `id` the point ids, metrics
    and arrays as variables with `units` and `long_name`, arrays with named dimensions (padded with
    NaN where their shape differs between points), the root attributes (provenance) as attributes
    and the config text as attrs["config"]. Naming rules: runners/labelled_view.hpp.

    A file written since the labelled view is opened through it (xarray's h5netcdf backend, read
    lazily as xarray.open_dataset reads); an older file is built here from /points and /arrays
    with the same rules, in memory, without units (the file has none) and with every array
    dimension named <variable>_dim<i>."""
    import xarray as xr

    path, f, note = _open_checked(path, experiment)
    with f:
        labelled = isinstance(f.get("id"), h5py.Dataset)   # the view's point ids
    if labelled:
        ds = xr.open_dataset(path, engine="h5netcdf", decode_timedelta=False)
    else:
        ds = dataset_from_points(path)
    if "config" in ds.variables:
        ds.attrs["config"] = str(ds["config"].values[()])
        ds = ds.drop_vars("config")
    if note:
        ds.attrs["checksum_note"] = note
    return ds


def _distinct(column: np.ndarray) -> tuple:
    """(indices of the rows where each distinct value first appears, each row's value index,
    the number of rows whose value differs from the previous row's), values compared exactly."""
    first, index, seen = [], [], {}
    keys = column.view(np.uint64) if column.dtype == np.float64 else column
    for r, key in enumerate(keys.tolist()):
        if key not in seen:
            seen[key] = len(first)
            first.append(r)
        index.append(seen[key])
    changes = int(np.count_nonzero(keys[1:] != keys[:-1])) if len(keys) > 1 else 0
    return first, np.array(index, dtype=np.int64), changes


def _product_axes(params: dict, points: int) -> list:
    """The parameters with more than one value, slowest first, when the rows are exactly their
    Cartesian product in that order; [] otherwise (runners/labelled_view.cpp, product_axes)."""
    axes = []
    for name in sorted(params):
        first, index, changes = _distinct(np.asarray(params[name]))
        if len(first) > 1:
            axes.append((changes, name, first, index))
    axes.sort(key=lambda a: a[0])   # stable: ties keep the names' order
    sizes = [len(a[2]) for a in axes]
    if not axes or int(np.prod(sizes, dtype=object)) != points:
        return []
    expected = np.unravel_index(np.arange(points), sizes)
    if any(not np.array_equal(a[3], e) for a, e in zip(axes, expected)):
        return []
    return [(name, first) for _, name, first, _ in axes]


def dataset_from_points(path: str | os.PathLike):
    """The labelled dataset of a file without the view (open_results uses it for older files),
    built from /points and /arrays with the view's rules."""
    import xarray as xr

    t = read_points(path)
    P = len(t.ids)
    axes = _product_axes(t.params, P)
    if axes:
        lead = [name for name, _ in axes]
        shape = tuple(len(first) for _, first in axes)
        coords = {name: (name, np.asarray(t.params[name])[first]) for name, first in axes}
        for name, column in t.params.items():
            if name not in lead:
                coords[name] = ((), np.asarray(column)[0])
    else:
        lead, shape = ["point"], (P,)
        coords = {name: ("point", np.asarray(column)) for name, column in t.params.items()}
    coords["id"] = (lead, np.array(t.ids, dtype=object).reshape(shape))
    taken = {"config", "points", "arrays", "timing", "point", "id", *t.params}
    variables = {}
    for name, column in t.metrics.items():
        variable = f"{name}.metric" if name in taken else name
        taken.add(variable)
        variables[variable] = (lead, np.asarray(column).reshape(shape))
    for variable, value in _stacked_arrays(t, shape, taken).items():
        variables[variable] = (lead + [f"{variable}_dim{k}" for k in range(value.ndim - len(lead))], value)
    ds = xr.Dataset(variables, coords=coords, attrs=dict(t.attrs))
    ds.attrs["config"] = t.config
    return ds


def _stacked_arrays(t: Points, shape: tuple, taken: set) -> dict:
    """{view name: array [grid..., own...]} of every array name, padded with NaN where a point's
    array is smaller or missing (integers then become float64); names whose rank differs between
    points are left out."""
    with _open(t.path) as f:
        per_point = [{name: _read_dataset(ds) for name, ds in f[f"arrays/{pid}"].items()
                      if isinstance(ds, h5py.Dataset)} if f"arrays/{pid}" in f else {} for pid in t.ids]
    names = sorted({name for arrays in per_point for name in arrays})
    out = {}
    for name in names:
        values = [arrays.get(name) for arrays in per_point]
        ranks = {np.ndim(v) for v in values if v is not None}
        if len(ranks) != 1:
            continue
        rank = ranks.pop()
        own = tuple(max(np.shape(v)[k] for v in values if v is not None) for k in range(rank))
        complete = all(v is not None and np.shape(v) == own for v in values)
        dtype = np.result_type(*[np.asarray(v).dtype for v in values if v is not None])
        if not complete:
            dtype = np.result_type(dtype, np.float64)
        stacked = np.full((len(values),) + own, np.nan if dtype.kind == "f" else 0, dtype=dtype)
        for i, v in enumerate(values):
            if v is not None:
                stacked[(i,) + tuple(slice(0, s) for s in np.shape(v))] = v
        variable = f"{name}.array" if name in taken else name
        taken.add(variable)
        out[variable] = stacked.reshape(shape + own)
    return out

