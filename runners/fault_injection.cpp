#include "runners/fault_injection.hpp"

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "runners/interrupt.hpp"

namespace fs = std::filesystem;

namespace sharp::runner {
namespace {

// The hook's setting, "" when unset: every hook is read the same way, and only a registered one.
std::string setting(const FaultHook& hook) {
  const char* value = std::getenv(hook.variable);
  return value ? value : "";
}

}  // namespace

void stall_if_injected(const std::string& point_id, StallStage stage) {
  const std::string stall = setting(kStallHook);
  if (stall.empty() || stall != point_id + (stage == StallStage::after_checkpoint ? "@checkpoint" : "")) return;
  while (!interrupted()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  throw PointInterrupted();
}

void fail_if_injected(const std::string& point_id) {
  if (setting(kFailureHook) == point_id)
    throw std::runtime_error("injected failure (" + std::string(kFailureHook.variable) + "=" + point_id + ")");
}

void kill_cleanup_if_injected(const std::string& deleting) {
  if (setting(kKillHook) != "cleanup") return;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(deleting, ec)) {
    fs::remove(entry.path(), ec);
    ::raise(SIGKILL);
  }
}

Record inject_output_fault(Record record) {
  const std::string f = setting(kOutputFaultHook);
  if (f.empty()) return record;
  if (f == "undeclared") {
    record.set("injected_undeclared_output", 0.0);
  } else if (f == "missing") {
    if (!record.metrics.empty())
      record.metrics.erase(record.metrics.begin());
    else if (!record.arrays.empty())
      record.arrays.erase(record.arrays.begin());
  } else if (f == "mistyped") {
    if (!record.metrics.empty()) {
      auto& v = record.metrics.begin()->second;
      if (std::holds_alternative<double>(v))
        v = std::int64_t{0};
      else
        v = 0.0;
    } else if (!record.arrays.empty()) {
      Array& a = record.arrays.begin()->second;
      if (auto* d = std::get_if<std::vector<double>>(&a.data))
        a.data = std::vector<std::int64_t>(d->size(), 0);
      else
        a.data = std::vector<double>(std::get<std::vector<std::int64_t>>(a.data).size(), 0.0);
    }
  } else {
    throw std::runtime_error(std::string(kOutputFaultHook.variable) + "='" + f +
                             "' (allowed: undeclared, missing, mistyped)");
  }
  return record;
}

}  // namespace sharp::runner
