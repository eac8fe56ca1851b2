"""Result files as labelled datasets: sharp.open_results and xarray.open_dataset(path,
engine="h5netcdf") on files the binaries write (a Cartesian grid: one dimension per parameter; a
checkpoint-driven grid whose points are no product: a `point` dimension), with units and long names
from the declarations; h5py and the analysis read /points and /arrays as before, untouched; files
written before the view still open (built from /points and /arrays with the same rules)."""
import json
import os
import shutil
import sys

import h5py
import numpy as np
import pytest

xr = pytest.importorskip("xarray")
import sharp  # noqa: E402
from sharp import results  # noqa: E402
from conftest import SOURCE_DIR, run_binary  # noqa: E402

VIEW_FREE = ("config", "points", "arrays", "timing")   # the root of a file written before the view


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("results")
    out = {name: str(d / f"{name}.h5") for name in ("bounds", "entropy", "models", "eval")}
    run_binary("sharp-bounds", "--n", "16,64", "--spread", "1,2,4", "--logits", "uniform,gaussian",
               "--trials", "3", "--out", out["bounds"], "--quiet")
    run_binary("sharp-entropy-temperature", "--n", "16,32", "--beta-steps", "5,7", "--out", out["entropy"], "--quiet")
    run_binary("sharp-train-max", "--width", "8", "--batch", "16", "--steps", "20", "--eval-samples", "32",
               "--normaliser", "softmax,adaptive", "--out", out["models"], "--quiet")
    run_binary("sharp-eval-max", "--checkpoint", out["models"], "--n", "16,64", "--samples", "24",
               "--map-samples", "2", "--chunk", "100", "--normaliser", "softmax,adaptive", "--out", out["eval"],
               "--quiet")
    return out


def declared(binary):
    described = json.loads(run_binary(binary, "--describe").stdout)
    return {o["name"]: o for o in described["outputs"]}


def stored(path):
    """/points/id, the metric columns and every point's arrays, read with h5py as analysis did."""
    with h5py.File(path, "r") as f:
        ids = list(f["points/id"].asstr()[()])
        metrics = {k: v[()] for k, v in f["points"].items() if isinstance(v, h5py.Dataset) and k != "id"}
        arrays = {pid: {k: v[()] for k, v in f[f"arrays/{pid}"].items()} for pid in ids if f"arrays/{pid}" in f}
        params = {k: v[()] for k, v in f["points/params"].items()}
    return ids, params, metrics, arrays


def by_point(ds, variable):
    """{point id: value of `variable` at that point}, whatever the layout."""
    da, ids = ds[variable], ds["id"]
    lead = ids.dims
    flat_ids = ids.values.ravel()
    values = da.transpose(*lead, ...).values.reshape((flat_ids.size,) + da.shape[len(lead):])
    return dict(zip(flat_ids, values))


def test_cartesian_grid_one_dimension_per_parameter(files):
    ds = sharp.open_results(files["bounds"])
    assert dict(ds.sizes) == {"logits": 2, "spread": 3, "n": 2}
    assert list(ds["logits"].values) == ["uniform", "gaussian"] and list(ds["n"].values) == [16, 64]
    assert list(ds["spread"].values) == [1.0, 2.0, 4.0]
    assert ds["theta"].ndim == 0 and ds["trials"].item() == 3    # one value: a scalar coordinate
    ids, params, metrics, _ = stored(files["bounds"])
    outputs = declared("sharp-bounds")
    for name, column in metrics.items():
        assert ds[name].dims == ("logits", "spread", "n")
        assert ds[name].attrs["long_name"] == outputs[name]["meaning"]
        assert ds[name].attrs["units"] == (outputs[name]["unit"] or "1")
        got = by_point(ds, name)
        assert all(np.array_equal(got[pid], column[i]) for i, pid in enumerate(ids))
    row = ids.index(ds["id"].sel(logits="gaussian", spread=4.0, n=64).item())
    assert params["logits"][row].decode() == "gaussian" and params["n"][row] == 64
    assert ds.attrs["experiment"] == "bounds" and ds.attrs["schema"] == "sharp/1" and "git_sha" in ds.attrs
    assert ds.attrs["config"].startswith("experiment = bounds")


def test_xarray_opens_the_file_itself(files):
    for name in ("bounds", "entropy", "eval"):
        plain = xr.open_dataset(files[name], engine="h5netcdf")
        ours = sharp.open_results(files[name])
        assert ours.attrs.pop("config") == str(plain["config"].values)
        xr.testing.assert_identical(plain.drop_vars("config"), ours)


def test_checkpoint_driven_grid_gets_a_point_dimension(files):
    ds = sharp.open_results(files["eval"])
    ids, params, metrics, arrays = stored(files["eval"])
    assert ds.sizes["point"] == len(ids) == 4
    assert ds["train_normaliser"].dims == ("point",) and set(ds["train_normaliser"].values) == {"softmax", "adaptive"}
    assert list(ds["id"].values) == ids
    # A metric and an array of the same name: the array is <name>.array.
    assert ds["entropy.softmax"].dims == ("point",)
    assert ds["entropy.softmax.array"].dims == ("point", "samples_index")
    assert ds["labels"].dims == ("point", "samples_index") and ds["labels"].dtype == np.int64
    assert ds["map.softmax"].dims == ("point", "map.softmax_dim0", "map.softmax_dim1")
    outputs = declared("sharp-eval-max")
    assert ds["entropy.softmax.array"].attrs["long_name"] == outputs["entropy.<normaliser>"]["meaning"]
    for name, column in metrics.items():
        assert np.array_equal(ds[name].values, column)
    for pid in ids:
        for name, value in arrays[pid].items():
            variable = name + ".array" if name in metrics else name
            got = by_point(ds, variable)[pid]
            assert np.array_equal(got[tuple(slice(0, s) for s in value.shape)], value)


def test_arrays_of_differing_shapes_are_padded(files):
    ds = sharp.open_results(files["entropy"])
    assert ds["entropy"].dims == ("n", "beta_steps", "beta_steps_index") and ds.sizes["beta_steps_index"] == 7
    ids, _, _, arrays = stored(files["entropy"])
    for pid in ids:
        got, value = by_point(ds, "entropy")[pid], arrays[pid]["entropy"]
        assert np.array_equal(got[:value.size], value) and np.isnan(got[value.size:]).all()
    assert ds["entropy"].attrs["units"] == "nats"


def test_h5py_and_the_analysis_read_the_files_as_before(files):
    sys.path.insert(0, os.path.join(SOURCE_DIR, "analysis"))
    import common
    for name in ("bounds", "eval"):
        ids, params, metrics, arrays = stored(files[name])
        loaded = common.load_result(files[name])
        assert loaded.ids == ids and set(loaded.metrics) == set(metrics)
        assert all(np.array_equal(loaded.metrics[k], v) for k, v in metrics.items())
        with h5py.File(files[name], "r") as f:
            # The stored data carry no attribute of the view (a checksum of them is unaffected).
            f["points"].visititems(lambda _, obj: _no_attributes(obj))
            f["arrays"].visititems(lambda _, obj: _no_attributes(obj))
        for pid, named in arrays.items():
            got = loaded.arrays(pid)
            assert set(got) == set(named) and all(np.array_equal(got[k], v) for k, v in named.items())


def _no_attributes(obj):
    assert len(obj.attrs) == 0, f"{obj.name} has attributes {list(obj.attrs)}"


def without_view(path, tmp_path):
    """A copy of the file as it was written before the labelled view (and before the checksum)."""
    old = str(tmp_path / os.path.basename(path))
    shutil.copy(path, old)
    with h5py.File(old, "a") as f:
        for name in [n for n in f if n not in VIEW_FREE]:
            del f[name]
        del f.attrs["checksum"]
    return old


@pytest.mark.parametrize("name", ["bounds", "entropy", "eval"])
def test_files_written_before_the_view_open_with_the_same_layout(files, name, tmp_path):
    new = sharp.open_results(files[name])
    with pytest.warns(results.UnverifiedResultWarning):
        old = sharp.open_results(without_view(files[name], tmp_path))
    assert "units" not in old[next(iter(new.data_vars))].attrs   # older files have none
    lead = new["id"].dims
    assert old["id"].dims == lead and np.array_equal(old["id"].values, new["id"].values)
    for coord in new.coords:
        assert np.array_equal(old[coord].values, new[coord].values), coord
    assert set(old.data_vars) == set(new.data_vars)
    for variable in new.data_vars:
        a, b = old[variable].values, new[variable].values
        assert a.shape == b.shape, variable   # array dimensions are only named differently
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), variable
    assert old.attrs.pop("checksum_note") and new.attrs.pop("checksum")
    assert old.attrs == new.attrs


def test_synthetic_file_of_the_analysis_tests_opens(tmp_path):
    sys.path.insert(0, os.path.join(SOURCE_DIR, "analysis", "tests"))
    import synthetic
    path = str(tmp_path / "s.h5")
    grid = [{"n": n, "law": law} for n in (4, 8, 16) for law in ("a", "b")]
    synthetic.write_result(path, "bounds", grid, {"m": np.arange(6.0)},
                           arrays={0: {"curve": np.arange(3.0)}, 4: {"curve": np.arange(5.0)}})
    ds = sharp.open_results(path)
    assert dict(ds.sizes) == {"n": 3, "law": 2, "curve_dim0": 5}
    assert np.array_equal(ds["m"].values, np.arange(6.0).reshape(3, 2))
    assert np.isnan(ds["curve"].values[0, 1]).all() and np.array_equal(ds["curve"].values[2, 0], np.arange(5.0))
    shuffled = [grid[i] for i in (0, 2, 1, 3, 4, 5)]   # rows no longer in product order
    synthetic.write_result(path, "bounds", shuffled, {"m": np.arange(6.0)})
    ds = sharp.open_results(path)
    assert dict(ds.sizes) == {"point": 6} and list(ds["n"].values) == [4, 8, 4, 8, 16, 16]


def test_refusals(files, tmp_path):
    with pytest.raises(results.ResultFileError, match="holds experiment 'bounds' but this figure needs 'eval-max'"):
        sharp.open_results(files["bounds"], experiment="eval-max")
    broken = str(tmp_path / "incomplete.h5")
    shutil.copy(files["bounds"], broken)
    with h5py.File(broken, "a") as f:
        f.attrs["complete"] = np.int64(0)
    with pytest.raises(results.ResultFileError, match="incomplete"):
        sharp.open_results(broken)
    with pytest.raises(results.ResultFileError, match="file not found"):
        sharp.read_points(str(tmp_path / "missing.h5"))


def test_checksum_of_the_runner_is_what_python_computes_and_damage_is_refused(files, tmp_path):
    """The runner's `checksum` (runners/result_checksum.hpp) equals results.data_checksum on files of
    every kind the binaries write (view, strings, arrays of both types); a changed array value is
    refused by every reader with the reason; a file without a checksum opens with a note."""
    for path in files.values():
        with h5py.File(path, "r") as f:
            assert f.attrs["checksum"] == results.data_checksum(f), path
        assert "checksum_note" not in sharp.open_results(path).attrs
    damaged = str(tmp_path / "damaged.h5")
    shutil.copy(files["eval"], damaged)
    with h5py.File(damaged, "r+") as f:
        name = next(iter(f["arrays"]))
        ds = next(v for v in f["arrays"][name].values() if v.dtype.kind == "f" and v.size > 0)
        values = ds[()]
        values.flat[0] = np.nextafter(values.flat[0], np.inf)
        ds[...] = values
    for reader in (sharp.open_results, results.read_points):
        with pytest.raises(results.ResultFileError) as refused:
            reader(damaged)
        assert str(refused.value) == (f"{damaged}: checksum mismatch: the file was modified or damaged after "
                                      "it was written; rerun to regenerate")
    old = str(tmp_path / "old.h5")
    shutil.copy(files["bounds"], old)
    with h5py.File(old, "r+") as f:
        del f.attrs["checksum"]
    with pytest.warns(results.UnverifiedResultWarning):
        ds = sharp.open_results(old)
    assert "no checksum" in ds.attrs["checksum_note"]
