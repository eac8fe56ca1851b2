#pragma once
// SIGINT and SIGTERM during a run (docs/architecture.md#interrupts). The first signal asks the run
// to stop: no new point starts, a point that checkpoints saves its state and stops, the others
// finish; then the run prints "interrupted: K of N points done, rerun the same command to resume"
// and exits 3 without merging. A second signal ends the process at once (the default action);
// the finished points are safe either way, since every file is written under a temporary name.
namespace sharp::runner {

// Installs the handlers for its lifetime (the previous ones are restored after).
class InterruptHandlers {
 public:
  InterruptHandlers();
  ~InterruptHandlers();
  InterruptHandlers(const InterruptHandlers&) = delete;
  InterruptHandlers& operator=(const InterruptHandlers&) = delete;
};

bool interrupted();  // a first SIGINT or SIGTERM has arrived
void request_interrupt();  // the same from inside (MPI: another rank was interrupted)
int interrupt_signal();  // the signal that arrived, 0 if none

// Thrown by a point that stops for an interrupt after saving its checkpoint.
struct PointInterrupted {};

}  // namespace sharp::runner
