#include "runners/stall_injection.hpp"

#include <chrono>
#include <cstdlib>
#include <thread>

#include "runners/interrupt.hpp"

namespace sharp::runner {

void stall_if_injected(const std::string& point_id, StallStage stage) {
  const char* env = std::getenv("SHARP_INJECT_STALL");
  if (!env) return;
  const std::string want = point_id + (stage == StallStage::after_checkpoint ? "@checkpoint" : "");
  if (want != env) return;
  while (!interrupted()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  throw PointInterrupted();
}

}  // namespace sharp::runner
