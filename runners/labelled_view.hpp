#pragma once
// The labelled view of a merged result file (docs/architecture.md#labelled-view): datasets in the
// root group that present /points and /arrays as netCDF-4 variables (HDF5 dimension scales), with
// named dimensions, units and long names, so that xarray.open_dataset(path, engine="h5netcdf") opens
// the file as a labelled dataset. The variables are virtual datasets reading the stored columns and
// arrays in place, except views of small per-point arrays (at most 64 values per point), which are
// deflated copies: a virtual mapping costs ~150 bytes per point, more than such a block. /points and
// /arrays stay as they are; the file's checksum, computed after the view is written, covers the
// copies as it covers any dataset with values of its own.
//
// Layout: when the points are exactly the Cartesian product of the values of the parameters that
// take more than one (in the file's order, the first varying slowest), each such parameter is a
// dimension with its values as coordinate; every other file (one point, or rows that are no full
// product, e.g. a derived parameter varying with a checkpoint axis) gets one dimension `point`.
// Names (python/sharp/results.py builds the same dataset for files written before the view):
//   parameters keep their names: dimensions, or coordinates (scalar ones, or along `point`);
//   `id`: the point ids, a coordinate along the grid's dimensions or `point`;
//   a metric keeps its name (`<name>.metric` when a parameter has it), an array too (`<name>.array`
//   when a parameter or a metric has it), over the grid's dimensions or `point`, then its own:
//   `<parameter>_index` where the declaration sizes it by a parameter, else `<variable>_dim<i>`;
//   arrays whose shape differs between points are padded (NaN; integer arrays with a _FillValue),
//   arrays whose rank differs are left out (listed in the root attribute `labelled_view_omits`).
#include <vector>

#include "runners/output_spec.hpp"

namespace sharp::h5 {
class Group;
}

namespace sharp::runner {

// Adds the view to the root of a merged file whose /points and /arrays are written; `outputs` are
// the experiment's declarations (units, meanings, array dimensions).
void write_labelled_view(h5::Group& root, const std::vector<OutputSpec>& outputs);

}  // namespace sharp::runner
