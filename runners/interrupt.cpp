#include "runners/interrupt.hpp"

#include <signal.h>

#include <atomic>

namespace sharp::runner {
namespace {

std::atomic<int> g_signal{0};
struct sigaction g_old_int {
}, g_old_term{};

extern "C" void on_signal(int sig) {
  if (g_signal.exchange(sig) != 0) {  // the second signal: the default action, now
    ::signal(sig, SIG_DFL);
    ::raise(sig);
  }
}

}  // namespace

InterruptHandlers::InterruptHandlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, &g_old_int);
  ::sigaction(SIGTERM, &sa, &g_old_term);
}

InterruptHandlers::~InterruptHandlers() {
  ::sigaction(SIGINT, &g_old_int, nullptr);
  ::sigaction(SIGTERM, &g_old_term, nullptr);
}

bool interrupted() { return g_signal.load(std::memory_order_relaxed) != 0; }
void request_interrupt() {
  int expected = 0;
  g_signal.compare_exchange_strong(expected, SIGTERM);
}
int interrupt_signal() { return g_signal.load(); }

}  // namespace sharp::runner
