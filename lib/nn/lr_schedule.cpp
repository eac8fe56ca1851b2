#include "nn/lr_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/errors.hpp"

namespace sharp::nn {

const std::vector<std::string>& schedule_kind_names() {
  static const std::vector<std::string> names = {"constant", "cosine", "step"};
  return names;
}

ScheduleKind parse_schedule_kind(const std::string& name) {
  if (name == "constant") return ScheduleKind::Constant;
  if (name == "cosine") return ScheduleKind::Cosine;
  if (name == "step") return ScheduleKind::Step;
  throw BadInput("learning-rate schedule '" + name + "' is unknown (allowed: constant, cosine, step)");
}

double LrSchedule::at(std::int64_t step) const {
  if (kind == ScheduleKind::Constant) return lr;
  if (step < warmup_steps) return lr * double(step + 1) / double(warmup_steps);
  const double span = double(std::max<std::int64_t>(1, total_steps - warmup_steps));
  const double progress = std::clamp(double(step - warmup_steps) / span, 0.0, 1.0);
  if (kind == ScheduleKind::Step) return progress < 0.5 ? lr : progress < 0.75 ? 0.1 * lr : 0.01 * lr;
  const double end = lr * final_fraction;
  return end + (lr - end) * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
}

}  // namespace sharp::nn
