#pragma once
// The one reader of merged result files (schema sharp/1, docs/architecture.md#hdf5-schema): what a
// file holds per point id — parameters, metrics, named arrays — and its root attributes. It refuses
// missing, incomplete and foreign files with sharp::BadInput naming the file, so callers never
// parse the layout themselves (lib/ deserialises models from what this returns).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "runners/param_spec.hpp"
#include "runners/record.hpp"
#include "runners/value.hpp"

namespace sharp::h5 {
class File;
}

namespace sharp::runner {

using Metric = std::variant<double, std::int64_t>;

class ResultFile {
 public:
  // Opens PATH. `experiments`: the experiment names accepted (empty: any). Throws sharp::BadInput
  // ("'PATH' does not exist", "... is not a complete result file", "... holds experiment 'x', not
  // train-max") when the file cannot be used.
  // A file whose data do not match its `checksum` is refused ("'PATH': checksum mismatch: ...");
  // one without a checksum (written before files carried one) is read, with note() saying so
  // (printed once per process on stderr). Each file is verified once per process while its size,
  // time and inode stay the same.
  static ResultFile open(const std::string& path, const std::vector<std::string>& experiments = {});
  const std::string& note() const { return note_; }

  const std::string& path() const { return path_; }
  const std::string& experiment() const { return experiment_; }
  const std::vector<std::string>& ids() const { return ids_; }  // /points/id, in file order
  bool has(const std::string& id) const;
  // One point's parameters (/points/params/<name>) and metrics (/points/<name>). Throw BadInput
  // for an unknown id.
  std::map<std::string, Value> params(const std::string& id) const;
  std::map<std::string, Metric> metrics(const std::string& id) const;
  // One point's array names (/arrays/<id>/, sorted; empty when it has none), one array, and every
  // array whose name starts with `prefix`, keyed by the rest of the name ("param." -> "psi.0.weight").
  std::vector<std::string> arrays(const std::string& id) const;
  Array array(const std::string& id, const std::string& name) const;
  std::map<std::string, Array> arrays_with_prefix(const std::string& id, const std::string& prefix) const;
  // A root attribute as text (integers in decimal); throws BadInput when absent.
  std::string attribute(const std::string& name) const;
  bool has_attribute(const std::string& name) const;
  const std::string& config() const { return config_; }  // /config

 private:
  std::size_t row(const std::string& id) const;

  std::string path_, experiment_, config_, note_;
  std::shared_ptr<const h5::File> file_;  // open read-only while any copy lives; arrays are read on demand
  std::vector<std::string> ids_;
  std::map<std::string, std::size_t> rows_;
  std::map<std::string, std::vector<Value>> params_;  // columns of /points/params, read at open
  std::map<std::string, std::vector<Metric>> metrics_;  // columns of /points, read at open
};

// A point of a result file as users write it: "FILE.h5#ID" -> {FILE.h5, ID} (ID empty without '#').
std::pair<std::string, std::string> split_point_reference(const std::string& reference);

// A parameter whose values name points of result files of the accepted experiments (e.g.
// --checkpoint of the experiments that read trained models): FILE.h5 stands for every point of the
// file (one value FILE.h5#ID each, in file order), FILE.h5#ID for one. Each value is checked:
// "cannot be read: 'x.h5' holds experiment 'bounds', not train-max", "names no point of 'x.h5'".
ParamSpec point_reference_param(std::string name, std::string default_value, std::string help,
                                std::vector<std::string> experiments);

// The derived parameter kModelFingerprint of a grid whose parameter `reference` names models by
// point_reference_param: weights_fingerprint of the point's param.* arrays (runners/result_checksum.hpp),
// or "none" for the value "none". A result then records which weights it scored, and a resumed run
// recomputes a point whose model was replaced since (docs/architecture.md#points-parts-merge-resume).
ParamSpec model_fingerprint_param(const std::string& reference, const std::vector<std::string>& experiments);

// Opens the file of a reference FILE.h5#ID and checks the point exists (BadInput otherwise).
struct ResultPoint {
  ResultFile file;
  std::string id;
};
ResultPoint open_point_reference(const std::string& reference, const std::vector<std::string>& experiments);

}  // namespace sharp::runner
