#pragma once
// Learning-rate schedules. docs/science.md#max-retrieval: at constant lr the max-retrieval accuracy swings by ±1.5 points
// for thousands of steps, so the lr is decayed to make the final model reliably >= 98%.
//   constant: lr
//   cosine:   linear warmup over `warmup` steps, then lr_end + (lr − lr_end)·(1 + cos(π·progress))/2,
//             progress from 0 to 1 over the remaining steps, lr_end = lr · final_fraction
//   step:     warmup, then lr, ×0.1 from 50% of the steps, ×0.01 from 75%
// `step` below counts from 0 (the update that makes the t-th step uses at(t − 1)).
#include <cstdint>
#include <string>
#include <vector>

namespace sharp::nn {

enum class ScheduleKind { Constant, Cosine, Step };

ScheduleKind parse_schedule_kind(const std::string& name);  // throws sharp::BadInput
const std::vector<std::string>& schedule_kind_names();  // constant, cosine, step

struct LrSchedule {
  ScheduleKind kind = ScheduleKind::Cosine;
  double lr = 1e-3;
  std::int64_t total_steps = 1;
  std::int64_t warmup_steps = 0;
  double final_fraction = 0.0;  // cosine only

  double at(std::int64_t step) const;
};

}  // namespace sharp::nn
