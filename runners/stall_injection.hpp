#pragma once
// Test hook that holds a point still so a test can catch a run midway whatever the machine's speed
// (docs/architecture.md#testing): SHARP_INJECT_STALL=<point id> makes that point wait before it
// starts; SHARP_INJECT_STALL=<point id>@checkpoint makes it wait right after it writes its first
// checkpoint. A stalled point waits until the run is interrupted (it then stops as any interrupted
// point does) or killed; every other point runs normally.
#include <string>

namespace sharp::runner {

enum class StallStage { before_start, after_checkpoint };

// Returns when the hook does not name this point and stage; otherwise waits for an interrupt and
// throws PointInterrupted.
void stall_if_injected(const std::string& point_id, StallStage stage);

}  // namespace sharp::runner
