// Scalar attributes of a Group (the schema's root attributes: docs/architecture.md#hdf5-schema).
#include <cstring>

#include "h5/detail.hpp"
#include "h5/h5.hpp"

namespace sharp::h5 {

using detail::Handle;

bool Group::has_attr(const std::string& name) const {
  SilenceErrors quiet;
  htri_t there = H5Aexists(id_, name.c_str());
  if (there < 0) fail("look up attribute", name);
  return there > 0;
}

namespace {

// Writes one scalar attribute, replacing an existing one of any type. `fail(operation)` throws.
template <class Fail>
void write_scalar_attr(hid_t owner, const std::string& name, hid_t stored_type, hid_t memory_type, const void* value,
                       Fail fail) {
  htri_t there = H5Aexists(owner, name.c_str());
  if (there < 0) fail("look up attribute");
  if (there > 0 && H5Adelete(owner, name.c_str()) < 0) fail("replace attribute");
  Handle space = detail::make_dataspace(nullptr, 0);
  Handle attribute(H5Acreate2(owner, name.c_str(), stored_type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (attribute.get() < 0) fail("create attribute");
  if (H5Awrite(attribute.get(), memory_type, value) < 0) fail("write attribute");
  if (attribute.release() < 0) fail("close attribute");
}

}  // namespace

void Group::set_attr(const std::string& name, const std::string& value) {
  SilenceErrors quiet;
  auto failure = [&](const char* operation) { fail(operation, name); };
  if (std::strlen(value.c_str()) != value.size()) {
    H5Eclear2(H5E_DEFAULT);
    failure("write a string with a NUL byte to attribute");
  }
  Handle type = detail::vlen_utf8_type();
  const char* pointer = value.c_str();
  write_scalar_attr(id_, name, type.get(), type.get(), &pointer, failure);
}

void Group::set_attr(const std::string& name, const char* value) { set_attr(name, std::string(value)); }

void Group::set_attr(const std::string& name, std::int64_t value) {
  SilenceErrors quiet;
  write_scalar_attr(id_, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value,
                    [&](const char* operation) { fail(operation, name); });
}

void Group::set_attr(const std::string& name, double value) {
  SilenceErrors quiet;
  write_scalar_attr(id_, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value,
                    [&](const char* operation) { fail(operation, name); });
}

namespace {

// Opens the dataset `dataset` of `group` for its attributes; `fail(operation)` throws.
template <class Fail>
Handle open_dataset_for_attr(hid_t group, const std::string& dataset, Fail fail) {
  Handle d(H5Dopen2(group, dataset.c_str(), H5P_DEFAULT), H5Dclose);
  if (d.get() < 0) fail("open dataset for attribute");
  return d;
}

}  // namespace

void Group::set_dataset_attr(const std::string& dataset, const std::string& key, const std::string& value) {
  SilenceErrors quiet;
  auto failure = [&](const char* operation) { fail(operation, dataset + "@" + key); };
  Handle d = open_dataset_for_attr(id_, dataset, failure);
  Handle type = detail::vlen_utf8_type();
  const char* pointer = value.c_str();
  write_scalar_attr(d.get(), key, type.get(), type.get(), &pointer, failure);
}

void Group::set_dataset_attr(const std::string& dataset, const std::string& key, double value) {
  SilenceErrors quiet;
  auto failure = [&](const char* operation) { fail(operation, dataset + "@" + key); };
  Handle d = open_dataset_for_attr(id_, dataset, failure);
  write_scalar_attr(d.get(), key, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value, failure);
}

void Group::set_dataset_attr(const std::string& dataset, const std::string& key, std::int64_t value) {
  SilenceErrors quiet;
  auto failure = [&](const char* operation) { fail(operation, dataset + "@" + key); };
  Handle d = open_dataset_for_attr(id_, dataset, failure);
  write_scalar_attr(d.get(), key, H5T_STD_I64LE, H5T_NATIVE_INT64, &value, failure);
}

namespace {

// An open attribute with its type class and element count, for the typed getters below.
struct OpenAttribute {
  Handle attribute, type, space;
  H5T_class_t type_class = H5T_NO_CLASS;
  hssize_t count = -1;
};

template <class Fail>
OpenAttribute open_attr(hid_t owner, const std::string& name, Fail fail) {
  OpenAttribute a;
  a.attribute = Handle(H5Aopen(owner, name.c_str(), H5P_DEFAULT), H5Aclose);
  if (a.attribute.get() < 0) fail("open attribute");
  a.type = Handle(H5Aget_type(a.attribute.get()), H5Tclose);
  a.space = Handle(H5Aget_space(a.attribute.get()), H5Sclose);
  if (a.type.get() < 0 || a.space.get() < 0) fail("get the type and dataspace of attribute");
  a.type_class = H5Tget_class(a.type.get());
  a.count = H5Sget_simple_extent_npoints(a.space.get());
  if (a.type_class < 0 || a.count < 0) fail("inspect attribute");
  if (a.count != 1) {
    H5Eclear2(H5E_DEFAULT);
    fail("read (it does not hold exactly one element) the attribute");
  }
  return a;
}

}  // namespace

std::string Group::attr_string(const std::string& name) const {
  SilenceErrors quiet;
  auto failure = [&](const char* operation) { fail(operation, name); };
  OpenAttribute a = open_attr(id_, name, failure);
  hid_t attribute = a.attribute.get();
  std::vector<std::string> values = detail::read_string_elements(
      a.type.get(), a.space.get(),
      [attribute](hid_t memory, void* buffer) { return H5Aread(attribute, memory, buffer); },
      [&](const char* operation) { fail(std::string(operation) + " attribute", name); });
  return values.at(0);
}

std::int64_t Group::attr_int(const std::string& name) const {
  SilenceErrors quiet;
  auto failure = [&](const char* operation) { fail(operation, name); };
  OpenAttribute a = open_attr(id_, name, failure);
  // Attribute reads take no transfer property list, so a lossy conversion could not be refused:
  // only integer attributes are read as integers.
  if (a.type_class != H5T_INTEGER) failure("read as int64 (the stored type is not an integer) the attribute");
  std::int64_t value = 0;
  if (H5Aread(a.attribute.get(), H5T_NATIVE_INT64, &value) < 0) failure("read attribute");
  return value;
}

double Group::attr_double(const std::string& name) const {
  SilenceErrors quiet;
  auto failure = [&](const char* operation) { fail(operation, name); };
  OpenAttribute a = open_attr(id_, name, failure);
  if (a.type_class != H5T_INTEGER && a.type_class != H5T_FLOAT)
    failure("read as double (the stored type is not numeric) the attribute");
  double value = 0;
  if (H5Aread(a.attribute.get(), H5T_NATIVE_DOUBLE, &value) < 0) failure("read attribute");
  return value;
}

}  // namespace sharp::h5
