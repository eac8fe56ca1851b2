#pragma once
// The contract between an experiment and the runner (docs/architecture.md#experiment-contract). An experiment
// declares its parameters and random streams and computes one point: params -> metrics and arrays.
// It never opens files, parses argv or talks MPI; the runner does all of that.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runners/checkpoint_state.hpp"
#include "runners/grid.hpp"
#include "runners/output_spec.hpp"
#include "runners/param_spec.hpp"
#include "runners/record.hpp"

namespace sharp::runner {

// A long point's progress at one of its milestones (a training's evaluation): `done` of `total`
// units, `first` of them done before this run (a resumed checkpoint), and what the point has to say
// ("loss 0.41, exact match 0.65"). The runner adds the time elapsed and the time remaining.
struct PointProgress {
  std::string unit;  // "step"
  std::int64_t done = 0, total = 0, first = 0;
  std::string detail;
};

// Services the runner offers to a point while it runs.
class PointContext {
 public:
  virtual ~PointContext() = default;
  // OpenMP threads this point may use; its data must not depend on the number.
  virtual int threads() const = 0;
  // Key of a declared random stream: a hash of the seed, the stream's name and the values of the
  // parameters it depends on (see StreamSpec). Feed it to sharp::rng.
  virtual std::uint64_t stream_key(const std::string& stream) const = 0;
  // Checkpoints of long points (<id>.ckpt.h5 beside the part file, replaced atomically). A point
  // that supports them calls load_checkpoint() once at start and save_checkpoint() whenever
  // checkpoint_due() says so; the runner removes the checkpoint when the point completes.
  virtual std::optional<CheckpointState> load_checkpoint() = 0;
  virtual void save_checkpoint(const CheckpointState& state) = 0;
  virtual bool checkpoint_due() const = 0;
  // One progress line on stderr (runners/progress.hpp), unless --quiet.
  virtual void report_progress(const PointProgress& progress) { (void)progress; }
};

class Experiment {
 public:
  virtual ~Experiment() = default;
  // Short name: the binary is sharp-<name>, the default output results/<name>.h5.
  virtual std::string name() const = 0;
  // One paragraph for --help: what is computed, citing its docs/science.md section.
  virtual std::string summary() const = 0;
  virtual std::vector<ParamSpec> parameters() const = 0;
  // Every metric and array run() returns (docs/architecture.md#declared-outputs); the runner
  // refuses a record with an undeclared, missing or mistyped output.
  virtual std::vector<OutputSpec> outputs() const = 0;
  virtual std::vector<StreamSpec> streams() const { return {}; }
  // Checks across parameters (e.g. two-point logits need n >= 2): throw BadInput naming the flags.
  virtual void validate(const Point&) const {}
  // Relative cost, used to run expensive points first and to balance shards.
  virtual double estimated_cost(const Point&) const { return 1.0; }
  // Reconstructed or non-obvious choices, recorded in the result file's root attribute "notes".
  virtual std::string notes() const { return ""; }
  virtual Record run(const Point& point, PointContext& ctx) const = 0;
};

}  // namespace sharp::runner
