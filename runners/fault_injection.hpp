#pragma once
// Every test hook of the runner in one place (docs/architecture.md#testing): an environment variable
// SHARP_INJECT_* that a fault or end-to-end test sets to make one chosen thing go wrong on any
// machine. Unset (or empty), a hook does nothing. kFaultHooks lists them all, with the one in lib/
// that lib reads itself (lib cannot see runners/); tests/faults/test_fault_hooks_registered.py checks
// that every hook a test sets or the code reads is listed here.
#include <string>

#include "runners/record.hpp"

namespace sharp::runner {

struct FaultHook {
  const char* variable;  // SHARP_INJECT_*
  const char* setting;  // the values it takes
  const char* effect;  // what goes wrong, and where
};

inline constexpr FaultHook kStallHook{
    "SHARP_INJECT_STALL", "<point id>[@checkpoint]",
    "the point waits before it starts (or right after its first checkpoint) until the run is interrupted or "
    "killed, so a test catches a run midway with every other point finished"};
inline constexpr FaultHook kFailureHook{"SHARP_INJECT_FAILURE", "<point id>", "the point throws before it starts"};
inline constexpr FaultHook kKillHook{"SHARP_INJECT_KILL", "cleanup",
                                     "the removal of the parts directory after the merge dies (SIGKILL) midway"};
inline constexpr FaultHook kOutputFaultHook{"SHARP_INJECT_OUTPUT_FAULT", "undeclared|missing|mistyped",
                                            "each record breaks its declared outputs before it is checked"};
inline constexpr FaultHook kLoopFailureHook{
    "SHARP_INJECT_LOOP_FAILURE", "<loop name>[@<index>]",
    "iteration <index> (default 0) of every parallel loop of that name throws (read by lib/core/parallel_for.cpp)"};

inline constexpr FaultHook kFaultHooks[] = {kStallHook, kFailureHook, kKillHook, kOutputFaultHook, kLoopFailureHook};

// SHARP_INJECT_STALL: where a point may be held still.
enum class StallStage { before_start, after_checkpoint };

// Returns when SHARP_INJECT_STALL does not name this point and stage; otherwise waits for an
// interrupt and throws PointInterrupted (as any interrupted point stops).
void stall_if_injected(const std::string& point_id, StallStage stage);

// SHARP_INJECT_FAILURE: throws std::runtime_error "injected failure (...)" when it names this point.
void fail_if_injected(const std::string& point_id);

// SHARP_INJECT_KILL=cleanup: removes one file of `deleting` (the parts directory being removed) and
// dies by SIGKILL, as a run killed halfway through its cleanup.
void kill_cleanup_if_injected(const std::string& deleting);

// SHARP_INJECT_OUTPUT_FAULT=undeclared|missing|mistyped damages a record before check_record sees
// it (adds an undeclared metric; removes, or flips the element type of, the first metric by name,
// or the first array when there is no metric). Returns the record unchanged when the variable is
// unset; throws std::runtime_error for another value.
Record inject_output_fault(Record record);

}  // namespace sharp::runner
