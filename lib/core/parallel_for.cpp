#include "core/parallel_for.hpp"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <stdexcept>

namespace sharp {
namespace {

struct Injection {
  std::mutex mutex;
  std::string loop;  // "" = none
  std::size_t index = 0;
  std::atomic<bool> active{false};  // the fast path of every loop: one relaxed load
};

Injection& injection() {
  static Injection* in = [] {
    auto* i = new Injection;  // never destroyed: loops may run during static destruction
    if (const char* env = std::getenv("SHARP_INJECT_LOOP_FAILURE")) {
      std::lock_guard lock(i->mutex);
      const std::string spec = env;
      const auto at = spec.find('@');
      i->loop = spec.substr(0, at);
      i->index = at == std::string::npos ? 0 : std::strtoull(spec.c_str() + at + 1, nullptr, 10);
      i->active = !i->loop.empty();
    }
    return i;
  }();
  return *in;
}

}  // namespace

void set_loop_failure_injection(const std::string& spec) {
  Injection& in = injection();
  std::lock_guard lock(in.mutex);
  const auto at = spec.find('@');
  in.loop = spec.substr(0, at);
  in.index = at == std::string::npos ? 0 : std::strtoull(spec.c_str() + at + 1, nullptr, 10);
  in.active = !in.loop.empty();
}

namespace detail {

std::size_t injected_failure_index(const char* loop) {
  Injection& in = injection();
  if (!in.active.load(std::memory_order_relaxed)) return kNoInjection;
  std::lock_guard lock(in.mutex);
  return in.loop == loop ? in.index : kNoInjection;
}

void throw_injected_failure(const char* loop, std::size_t index) {
  throw std::runtime_error("injected failure in parallel loop '" + std::string(loop) + "' at index " +
                           std::to_string(index) + " (SHARP_INJECT_LOOP_FAILURE)");
}

}  // namespace detail
}  // namespace sharp
