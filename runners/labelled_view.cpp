#include "runners/labelled_view.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "h5/h5.hpp"

namespace sharp::runner {
namespace {

// One /points/params column: its values (by kind) and, per row, the index of its value among the
// column's distinct values in order of first appearance.
struct Column {
  std::string name;
  h5::Group::Kind kind = h5::Group::Kind::Float;
  std::vector<double> reals;
  std::vector<std::int64_t> ints;
  std::vector<std::string> texts;
  std::vector<std::size_t> value_of_row;
  std::vector<std::size_t> first_row;  // [distinct values] the row where each appears first
  std::size_t changes = 0;  // rows whose value differs from the previous row's
};

Column read_column(const h5::Group& params, const std::string& name) {
  Column c;
  c.name = name;
  c.kind = params.dataset_kind(name);
  std::vector<std::string> keys;  // equality of values, exact (reals by their bits)
  if (c.kind == h5::Group::Kind::String) {
    c.texts = params.read_strings(name);
    keys = c.texts;
  } else if (c.kind == h5::Group::Kind::Integer) {
    c.ints = params.read<std::int64_t>(name);
    for (std::int64_t v : c.ints) keys.push_back(std::to_string(v));
  } else {
    c.kind = h5::Group::Kind::Float;
    c.reals = params.read<double>(name);
    for (double v : c.reals) {
      std::uint64_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      keys.push_back(std::to_string(bits));
    }
  }
  std::map<std::string, std::size_t> index;
  for (std::size_t r = 0; r < keys.size(); ++r) {
    auto [it, fresh] = index.try_emplace(keys[r], index.size());
    if (fresh) c.first_row.push_back(r);
    c.value_of_row.push_back(it->second);
    c.changes += r > 0 && keys[r] != keys[r - 1];
  }
  return c;
}

// Writes the values of column c at `rows` as dataset `name` (scalar when one row and `scalar`).
void write_values(h5::Group& root, const std::string& name, const Column& c, const std::vector<std::size_t>& rows,
                  bool scalar) {
  const std::vector<std::size_t> shape = scalar ? std::vector<std::size_t>{} : std::vector<std::size_t>{rows.size()};
  if (c.kind == h5::Group::Kind::String) {
    std::vector<std::string> v;
    for (std::size_t r : rows) v.push_back(c.texts[r]);
    if (scalar)
      root.write_string(name, v[0]);
    else
      root.write_strings(name, v);
  } else if (c.kind == h5::Group::Kind::Integer) {
    std::vector<std::int64_t> v;
    for (std::size_t r : rows) v.push_back(c.ints[r]);
    root.write(name, v.data(), shape);
  } else {
    std::vector<double> v;
    for (std::size_t r : rows) v.push_back(c.reals[r]);
    root.write(name, v.data(), shape);
  }
}

// The grid's dimensions: the columns with more than one value, slowest first, when the rows are
// exactly their Cartesian product in that order; empty otherwise (the view then uses `point`).
std::vector<const Column*> product_axes(const std::vector<Column>& columns, std::size_t points) {
  std::vector<const Column*> axes;
  for (const Column& c : columns)
    if (c.first_row.size() > 1) axes.push_back(&c);
  std::stable_sort(axes.begin(), axes.end(), [](const Column* a, const Column* b) { return a->changes < b->changes; });
  std::size_t product = 1;
  for (const Column* a : axes) {
    product *= a->first_row.size();
    if (product > points) return {};
  }
  if (axes.empty() || product != points) return {};
  for (std::size_t r = 0; r < points; ++r) {
    std::size_t rest = r;
    for (std::size_t k = axes.size(); k-- > 0;) {
      const std::size_t size = axes[k]->first_row.size();
      if (axes[k]->value_of_row[r] != rest % size) return {};
      rest /= size;
    }
  }
  return axes;
}

const OutputSpec* declaration(const std::vector<OutputSpec>& outputs, OutputKind kind, const std::string& name) {
  for (const OutputSpec& o : outputs) {
    if (o.kind != kind) continue;
    if (!o.is_template()) {
      if (o.name == name) return &o;
      continue;
    }
    const std::string head = o.name.substr(0, o.name.find('<')), tail = o.name.substr(o.name.find('>') + 1);
    if (name.size() > head.size() + tail.size() && name.starts_with(head) && name.ends_with(tail)) return &o;
  }
  return nullptr;
}

void label(h5::Group& root, const std::string& variable, const OutputSpec* spec, const std::string& coordinates) {
  if (spec != nullptr) {
    root.set_dataset_attr(variable, "units", spec->unit.empty() ? std::string("1") : spec->unit);
    root.set_dataset_attr(variable, "long_name", spec->meaning);
  }
  root.set_dataset_attr(variable, "coordinates", coordinates);
}

void attach(h5::Group& root, const std::string& variable, const std::vector<std::string>& dimensions) {
  for (std::size_t axis = 0; axis < dimensions.size(); ++axis)
    root.attach_dimension_scale(variable, dimensions[axis], static_cast<unsigned>(axis));
}

// One array name as the view shows it: its points' shapes and the dimension names of its own axes.
struct ViewArray {
  std::string name, variable;
  const OutputSpec* spec = nullptr;
  std::vector<std::vector<std::size_t>> shape_of_row;  // empty vector + !present: absent at that row
  std::vector<bool> present;
  std::vector<std::string> dimensions;
  bool integer = false;
};

// Views of arrays whose blocks hold at most this many values per point are stored as a copy: a
// VDS mapping costs about 150 bytes of file per point (57 views over 1584 points of 8 values took
// 6.2 MB of a 16.8 MB file), more than such a block, while a deflated copy costs less than the
// data. Larger blocks stay virtual (nothing stored twice).
constexpr std::size_t kCopiedBlockValues = 64;

// The view of `a` as a copy: every present block read from /arrays and placed at its point's cell,
// the rest kMissing*; `shape` = lead dimensions then the array's own. T is the stored element type.
template <typename T>
void write_copy(h5::Group& root, const ViewArray& a, const std::vector<std::string>& ids,
                const std::vector<std::size_t>& shape, std::size_t lead_rank,
                const std::function<std::vector<std::size_t>(std::size_t)>& position, T missing) {
  std::size_t total = 1;
  for (std::size_t d : shape) total *= d;
  std::vector<T> values(total, missing);
  std::vector<std::size_t> stride(shape.size(), 1);
  for (std::size_t k = shape.size(); k-- > 1;) stride[k - 1] = stride[k] * shape[k];
  const h5::Group arrays_root = root.open_group("arrays");
  for (std::size_t r = 0; r < ids.size(); ++r) {
    if (!a.present[r]) continue;
    const std::vector<T> block = arrays_root.open_group(ids[r]).read<T>(a.name);
    const std::vector<std::size_t>& own = a.shape_of_row[r];
    std::size_t base = 0;
    const std::vector<std::size_t> at = position(r);
    for (std::size_t k = 0; k < lead_rank; ++k) base += at[k] * stride[k];
    std::vector<std::size_t> index(own.size(), 0);  // row-major walk over the block
    for (const T& v : block) {
      std::size_t offset = base;
      for (std::size_t k = 0; k < own.size(); ++k) offset += index[k] * stride[lead_rank + k];
      values[offset] = v;
      for (std::size_t k = own.size(); k-- > 0;) {
        if (++index[k] < own[k]) break;
        index[k] = 0;
      }
    }
  }
  root.write(a.variable, values.data(), shape);
}

// "f8", "f4" or "i8" when every present block of `a` is stored with that one type and holds at
// most kCopiedBlockValues values; "" otherwise (the view stays virtual).
std::string copied_type(const h5::Group& root, const ViewArray& a, const std::vector<std::string>& ids) {
  std::string type;
  const h5::Group arrays_root = root.open_group("arrays");
  for (std::size_t r = 0; r < ids.size(); ++r) {
    if (!a.present[r]) continue;
    std::size_t values = 1;
    for (std::size_t d : a.shape_of_row[r]) values *= d;
    if (values > kCopiedBlockValues) return "";
    const std::string code = arrays_root.open_group(ids[r]).numeric_type_code(a.name);
    if ((code != "f8" && code != "f4" && code != "i8") || (!type.empty() && code != type)) return "";
    type = code;
  }
  return type;
}

}  // namespace

void write_labelled_view(h5::Group& root, const std::vector<OutputSpec>& outputs) {
  const std::vector<std::string> ids = root.read_strings("points/id");
  const std::size_t P = ids.size();
  const h5::Group params = root.open_group("points/params");
  std::vector<Column> columns;
  for (const std::string& name : params.children()) columns.push_back(read_column(params, name));
  std::set<std::string> taken = {"config", "points", "arrays", "timing", "point", "id"};
  for (const Column& c : columns) taken.insert(c.name);

  // Leading dimensions of every variable, and where row r sits in them.
  const std::vector<const Column*> axes = product_axes(columns, P);
  std::vector<std::string> lead;
  std::vector<std::size_t> lead_shape;
  std::string coordinates = "id";
  if (axes.empty()) {
    root.create_dimension("point", P);
    lead = {"point"};
    lead_shape = {P};
  }
  for (const Column* a : axes) {
    write_values(root, a->name, *a, a->first_row, false);
    root.make_dimension_scale(a->name, a->name);
    lead.push_back(a->name);
    lead_shape.push_back(a->first_row.size());
  }
  const std::function<std::vector<std::size_t>(std::size_t)> position = [&](std::size_t r) {
    if (axes.empty()) return std::vector<std::size_t>{r};
    std::vector<std::size_t> at;
    for (const Column* a : axes) at.push_back(a->value_of_row[r]);
    return at;
  };
  const std::vector<std::size_t> origin(lead.size(), 0);
  auto whole_column = [&](const std::string& variable, const std::string& path) {
    root.write_virtual(variable, lead_shape, {{path, origin, lead_shape}});
    attach(root, variable, lead);
  };
  for (const Column& c : columns) {
    if (std::find(axes.begin(), axes.end(), &c) != axes.end()) continue;
    coordinates += " " + c.name;
    if (axes.empty())
      whole_column(c.name, "/points/params/" + c.name);
    else
      write_values(root, c.name, c, {0}, true);  // one value on the whole grid
  }
  whole_column("id", "/points/id");

  const h5::Group points = root.open_group("points");
  for (const std::string& name : points.children()) {
    if (name == "id" || name == "params") continue;
    const std::string variable = taken.count(name) ? name + ".metric" : name;
    taken.insert(variable);
    whole_column(variable, "/points/" + name);
    label(root, variable, declaration(outputs, OutputKind::Metric, name), coordinates);
  }

  // Arrays: every name any point has, with its shape at each point.
  std::map<std::string, ViewArray> arrays;
  const h5::Group arrays_root = root.open_group("arrays");
  for (std::size_t r = 0; r < P; ++r) {
    if (!arrays_root.exists(ids[r])) continue;
    const h5::Group at = arrays_root.open_group(ids[r]);
    for (const std::string& name : at.children()) {
      const h5::Group::Kind kind = at.dataset_kind(name);
      ViewArray& a = arrays[name];
      if (a.present.empty()) {
        a.name = name;
        a.present.assign(P, false);
        a.shape_of_row.resize(P);
        a.integer = kind == h5::Group::Kind::Integer;
      }
      a.present[r] = true;
      a.shape_of_row[r] = at.shape(name);
    }
  }
  std::map<std::string, std::size_t> dimension_length;
  std::string omitted;
  for (auto it = arrays.begin(); it != arrays.end();) {
    ViewArray& a = it->second;
    std::size_t rank = SIZE_MAX;
    bool same_rank = true;
    for (std::size_t r = 0; r < P; ++r) {
      if (!a.present[r]) continue;
      if (rank != SIZE_MAX && a.shape_of_row[r].size() != rank) same_rank = false;
      rank = a.shape_of_row[r].size();
    }
    if (!same_rank) {
      omitted += (omitted.empty() ? "" : ", ") + a.name + " (its rank differs between points)";
      it = arrays.erase(it);
      continue;
    }
    a.variable = taken.count(a.name) ? a.name + ".array" : a.name;
    taken.insert(a.variable);
    a.spec = declaration(outputs, OutputKind::Array, a.name);
    for (std::size_t k = 0; k < rank; ++k) {
      const bool sized_by_parameter =
          a.spec != nullptr && a.spec->shape.size() == rank &&
          std::any_of(columns.begin(), columns.end(), [&](const Column& c) { return c.name == a.spec->shape[k]; });
      a.dimensions.push_back(sized_by_parameter ? a.spec->shape[k] + "_index"
                                                : a.variable + "_dim" + std::to_string(k));
      std::size_t& length = dimension_length[a.dimensions.back()];
      for (std::size_t r = 0; r < P; ++r)
        if (a.present[r]) length = std::max(length, a.shape_of_row[r][k]);
    }
    ++it;
  }
  for (const auto& [name, length] : dimension_length) root.create_dimension(name, length);
  for (const auto& [name, a] : arrays) {
    std::vector<std::size_t> shape = lead_shape;
    std::vector<h5::Group::VirtualSource> sources;
    bool padded = false;
    for (const std::string& d : a.dimensions) shape.push_back(dimension_length[d]);
    for (std::size_t r = 0; r < P; ++r) {
      if (!a.present[r]) {
        padded = true;
        continue;
      }
      std::vector<std::size_t> offset = position(r), count(lead.size(), 1);
      for (std::size_t k = 0; k < a.dimensions.size(); ++k) {
        offset.push_back(0);
        count.push_back(a.shape_of_row[r][k]);
        padded = padded || a.shape_of_row[r][k] != dimension_length[a.dimensions[k]];
      }
      sources.push_back({"/arrays/" + ids[r] + "/" + name, offset, count});
    }
    const std::string copy = copied_type(root, a, ids);
    if (copy == "f8")
      write_copy<double>(root, a, ids, shape, lead.size(), position, h5::kMissingReal);
    else if (copy == "f4")
      write_copy<float>(root, a, ids, shape, lead.size(), position, float(h5::kMissingReal));
    else if (copy == "i8")
      write_copy<std::int64_t>(root, a, ids, shape, lead.size(), position, h5::kMissingInteger);
    else
      root.write_virtual(a.variable, shape, sources);
    std::vector<std::string> dimensions = lead;
    dimensions.insert(dimensions.end(), a.dimensions.begin(), a.dimensions.end());
    attach(root, a.variable, dimensions);
    label(root, a.variable, a.spec, coordinates);
    if (padded && a.integer) root.set_dataset_attr(a.variable, "_FillValue", h5::kMissingInteger);
    if (padded && !a.integer) root.set_dataset_attr(a.variable, "_FillValue", h5::kMissingReal);
  }
  if (!omitted.empty()) root.set_attr("labelled_view_omits", omitted);
}

}  // namespace sharp::runner
