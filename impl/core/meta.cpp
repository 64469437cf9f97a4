#include "core/meta.hpp"

#include <stdexcept>

namespace pb {

const char* to_string(Disposition d) {
  switch (d) {
    case Disposition::NotRun: return "not_run";
    case Disposition::Passed: return "passed";
    case Disposition::Unsupported: return "unsupported";
    case Disposition::Incorrect: return "incorrect";
    case Disposition::OutOfMemory: return "out_of_memory";
    case Disposition::Failed: return "failed";
  }
  return "?";
}

const char* to_string(Role r) {
  switch (r) {
    case Role::Variant: return "variant";
    case Role::Baseline: return "baseline";
    case Role::Ceiling: return "ceiling";
  }
  return "?";
}

const char* to_string(CounterKind k) {
  switch (k) {
    case CounterKind::Time: return "time";
    case CounterKind::Rate: return "rate";
    case CounterKind::Problem: return "problem";
    case CounterKind::Knob: return "knob";
    case CounterKind::Model: return "model";
    case CounterKind::Result: return "result";
    case CounterKind::Clock: return "clock";
    case CounterKind::Flag: return "flag";
    case CounterKind::Share: return "share";
  }
  return "?";
}

namespace {
std::map<std::string, CounterInfo>& counters() {
  // Core's own counters: written by the registrar and the timers for every family.
  static std::map<std::string, CounterInfo> m = {
      {"seconds_per_call", {CounterKind::Time, "s"}},
      {"on_gpu", {CounterKind::Flag, ""}},
      {"cpu_threads", {CounterKind::Knob, ""}},
      {"block", {CounterKind::Knob, ""}},
      {"block_x", {CounterKind::Knob, ""}},
      {"block_y", {CounterKind::Knob, ""}},
      {"ranks", {CounterKind::Knob, ""}},
      {"gpus", {CounterKind::Knob, ""}},
      {"sm_clock_min_mhz", {CounterKind::Clock, "MHz"}},
      {"sm_clock_max_mhz", {CounterKind::Clock, "MHz"}},
      {"sm_clock_limit_mhz", {CounterKind::Clock, "MHz"}},
      {"clock_event_reasons", {CounterKind::Clock, ""}},
      {"throttled", {CounterKind::Clock, ""}},
      // add_comm_counters: a multi-GPU variant's communication alone.
      {"comm_bytes_per_call", {CounterKind::Model, "B"}},
      {"comm_s", {CounterKind::Time, "s"}},
      {"comm_share", {CounterKind::Share, ""}},
      {"comm_exposed_share", {CounterKind::Share, ""}},
      {"comm_GBps", {CounterKind::Rate, "GB/s"}},
  };
  return m;
}
}  // namespace

void declare_counter(const std::string& name, CounterKind kind, const std::string& unit) {
  auto [it, added] = counters().emplace(name, CounterInfo{kind, unit});
  if (!added && (it->second.kind != kind || it->second.unit != unit))
    throw std::logic_error("counter " + name + " declared twice with different kinds or units");
}

const std::map<std::string, CounterInfo>& declared_counters() { return counters(); }

}  // namespace pb
