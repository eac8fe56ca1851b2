"""The checksum of merged result files (root attribute `checksum`, runners/result_checksum.hpp) as
the analysis verifies it in load_result, which every loader goes through: a file whose data match
it is read; one with a changed value is refused with the reason (and the report shows the reason
instead of a figure); one written before files carried a checksum is read with a note."""
import h5py
import numpy as np
import pytest

import common
import synthetic


def _bounds(path, **kwargs):
    synthetic.write_bounds(str(path), ns=(16, 64), spreads=(1.0,), **kwargs)
    return str(path)


def test_a_sound_file_is_read_and_its_checksum_is_what_the_data_give(tmp_path):
    path = _bounds(tmp_path / "bounds.h5")
    r = common.load_result(path, "bounds")
    assert r.checksum_note == ""
    with h5py.File(path, "r") as f:
        assert f.attrs["checksum"] == common.data_checksum(f)
        assert len(f.attrs["checksum"]) == 64


def test_one_flipped_value_is_refused_with_the_reason(tmp_path):
    path = _bounds(tmp_path / "bounds.h5")
    with h5py.File(path, "r+") as f:
        name = next(k for k, v in f["points"].items() if isinstance(v, h5py.Dataset) and v.dtype.kind == "f")
        values = f["points"][name][()]
        bits = values.view(np.uint64).copy()
        bits[0] ^= np.uint64(1) << np.uint64(52)  # one bit of one value
        f["points"][name][...] = bits.view(np.float64)
    with pytest.raises(common.ResultFileError) as refused:
        common.load_result(path, "bounds")
    assert str(refused.value) == (f"{path}: checksum mismatch: the file was modified or damaged after it was "
                                  "written; rerun to regenerate")


def test_a_changed_config_or_array_is_refused_too(tmp_path):
    path = _bounds(tmp_path / "bounds.h5")
    with h5py.File(path, "r+") as f:
        del f["config"]
        f.create_dataset("config", data="n = 16", dtype=synthetic.STR)
    with pytest.raises(common.ResultFileError, match="checksum mismatch"):
        common.load_result(path)


def test_timing_is_not_data(tmp_path):
    path = _bounds(tmp_path / "bounds.h5")
    with h5py.File(path, "r+") as f:
        f["timing/wall_seconds"][0] = 123.0
    assert common.load_result(path).checksum_note == ""


def test_a_file_without_a_checksum_is_read_with_a_note(tmp_path):
    path = _bounds(tmp_path / "old.h5", attrs={"checksum": None})
    with pytest.warns(UserWarning, match="no checksum"):
        r = common.load_result(path, "bounds")
    assert "no checksum" in r.checksum_note
    assert len(r) > 0 and r.ids
