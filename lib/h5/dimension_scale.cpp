// Dimension scales (HDF5's H5DS high-level API), the way netCDF-4 names the dimensions of its
// variables, so that netCDF readers (xarray through h5netcdf) see named dimensions.
#include <hdf5_hl.h>

#include <cstdio>

#include "h5/detail.hpp"
#include "h5/h5.hpp"

namespace sharp::h5 {

using detail::Handle;

void Group::make_dimension_scale(const std::string& dataset, const std::string& dimension) {
  SilenceErrors quiet;
  Handle d(H5Dopen2(id_, dataset.c_str(), H5P_DEFAULT), H5Dclose);
  if (d.get() < 0) fail("open dataset to make it a dimension scale", dataset);
  if (H5DSset_scale(d.get(), dimension.c_str()) < 0) fail("make a dimension scale of", dataset);
  if (d.release() < 0) fail("close dataset", dataset);
}

void Group::create_dimension(const std::string& name, std::size_t length) {
  SilenceErrors quiet;
  const hsize_t dims[1] = {length};
  Handle space = detail::make_dataspace(dims, 1);
  // Never written: HDF5 allocates no storage for it (late allocation of a contiguous dataset).
  Handle d(H5Dcreate2(id_, name.c_str(), H5T_IEEE_F32LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
  if (d.get() < 0) fail("create dimension", name);
  // netCDF-4's mark of a dimension without a coordinate variable (and its length, as netCDF writes it).
  char text[96];
  std::snprintf(text, sizeof text, "This is a netCDF dimension but not a netCDF variable.%10zu", length);
  if (H5DSset_scale(d.get(), text) < 0) fail("make a dimension scale of", name);
  if (d.release() < 0) fail("close dimension", name);
}

void Group::attach_dimension_scale(const std::string& dataset, const std::string& scale, unsigned axis) {
  SilenceErrors quiet;
  Handle d(H5Dopen2(id_, dataset.c_str(), H5P_DEFAULT), H5Dclose);
  Handle s(H5Dopen2(id_, scale.c_str(), H5P_DEFAULT), H5Dclose);
  if (d.get() < 0 || s.get() < 0) fail("open dataset and scale '" + scale + "' to attach them", dataset);
  if (H5DSattach_scale(d.get(), s.get(), axis) < 0)
    fail("attach scale '" + scale + "' to axis " + std::to_string(axis) + " of", dataset);
  if (s.release() < 0 || d.release() < 0) fail("close dataset and scale '" + scale + "'", dataset);
}

}  // namespace sharp::h5
