// Virtual datasets (HDF5 1.10's VDS): views of other datasets of the same file, read through HDF5
// like any dataset, so a column stored once can be read in another shape without a copy.
#include "h5/detail.hpp"
#include "h5/h5.hpp"

namespace sharp::h5 {

using detail::Handle;

void Group::write_virtual(const std::string& name, const std::vector<std::size_t>& shape,
                          const std::vector<VirtualSource>& sources) {
  SilenceErrors quiet;
  if (sources.empty()) {
    H5Eclear2(H5E_DEFAULT);
    fail("create a virtual dataset without sources", name);
  }
  const std::vector<hsize_t> dims(shape.begin(), shape.end());
  Handle space = detail::make_dataspace(dims.data(), int(dims.size()));
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (dcpl.get() < 0) fail("create the property list of", name);
  Handle type;
  for (const VirtualSource& source : sources) {
    Handle dataset(H5Dopen2(id_, source.path.c_str(), H5P_DEFAULT), H5Dclose);
    if (dataset.get() < 0) fail("open the source '" + source.path + "' of virtual dataset", name);
    if (type.get() < 0) {
      type = Handle(H5Dget_type(dataset.get()), H5Tclose);
      if (type.get() < 0) fail("get the datatype of the first source of", name);
    }
    Handle source_space(H5Dget_space(dataset.get()), H5Sclose);
    Handle block(H5Scopy(space.get()), H5Sclose);
    if (source_space.get() < 0 || block.get() < 0 || H5Sselect_all(source_space.get()) < 0)
      fail("select the source '" + source.path + "' of virtual dataset", name);
    if (!dims.empty()) {
      const std::vector<hsize_t> start(source.offset.begin(), source.offset.end()),
          count(source.count.begin(), source.count.end());
      if (start.size() != dims.size() || count.size() != dims.size() ||
          H5Sselect_hyperslab(block.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr) < 0)
        fail("select the block of source '" + source.path + "' in virtual dataset", name);
    }
    // "." names this file, wherever it is later moved or renamed.
    if (H5Pset_virtual(dcpl.get(), block.get(), ".", source.path.c_str(), source_space.get()) < 0)
      fail("map the source '" + source.path + "' into virtual dataset", name);
  }
  const H5T_class_t type_class = H5Tget_class(type.get());
  if (type_class == H5T_FLOAT && H5Pset_fill_value(dcpl.get(), H5T_NATIVE_DOUBLE, &kMissingReal) < 0)
    fail("set the fill value of", name);
  if (type_class == H5T_INTEGER && H5Pset_fill_value(dcpl.get(), H5T_NATIVE_INT64, &kMissingInteger) < 0)
    fail("set the fill value of", name);
  Handle lcpl = detail::intermediate_groups_lcpl();
  Handle dataset(H5Dcreate2(id_, name.c_str(), type.get(), space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT), H5Dclose);
  if (dataset.get() < 0) fail("create virtual dataset", name);
  if (dataset.release() < 0) fail("close virtual dataset", name);
}

}  // namespace sharp::h5
