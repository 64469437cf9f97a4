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
    case CounterKind::Energy: return "energy";
    case CounterKind::Power: return "power";
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
      // The energy of the timed calls (core/energy.hpp), where it was metered.
      {"joules_per_call", {CounterKind::Energy, "J"}},
      {"watts", {CounterKind::Power, "W"}},
      {"energy_window_s", {CounterKind::Clock, "s"}},
      {"energy_error_bound", {CounterKind::Clock, ""}},
  };
  return m;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
const std::string& core_rate() {
  static const std::string comm = "comm_GBps";
  return comm;
}
}  // namespace

std::string per_joule_name(const std::string& rate) {
  // Core's rate, and a per-joule counter itself, get none.
  if (rate == core_rate() || ends_with(rate, "_per_J") || ends_with(rate, "_per_W")) return "";
  for (const auto& [tail, with] : {std::pair<std::string, std::string>{"_per_second", "_per_J"},
                                   {"GFLOPS", "GFLOP_per_J"},
                                   {"GBps", "GB_per_J"}})
    if (ends_with(rate, tail)) return rate.substr(0, rate.size() - tail.size()) + with;
  return rate + "_per_W";
}

std::string per_joule_unit(const std::string& unit) {
  return ends_with(unit, "/s") ? unit.substr(0, unit.size() - 2) + "/J" : unit + "/W";
}

void declare_counter(const std::string& name, CounterKind kind, const std::string& unit) {
  auto [it, added] = counters().emplace(name, CounterInfo{kind, unit});
  if (!added && (it->second.kind != kind || it->second.unit != unit))
    throw std::logic_error("counter " + name + " declared twice with different kinds or units");
  if (kind == CounterKind::Rate)
    if (const std::string per_joule = per_joule_name(name); !per_joule.empty())
      declare_counter(per_joule, CounterKind::Rate, per_joule_unit(unit));
}

const std::map<std::string, CounterInfo>& declared_counters() { return counters(); }

}  // namespace pb
