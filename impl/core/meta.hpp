#pragma once
// What the harness knows about its numbers, written into the JSON so the tools
// read meaning instead of guessing it from variant names (README, "JSON").
//
// Per entry ("parbench" object): disposition and reason, role (baseline /
// ceiling / variant), device, and the rate that reads as a fraction of a
// ceiling kind. Per file (context "parbench_counters"): every counter's kind
// and unit, declared here by core and by each family where it emits them.
#include <map>
#include <string>
#include <utility>

namespace pb {

inline constexpr int kSchemaVersion = 1;

// How an instance ended. NotRun: registered but not (yet) reached.
enum class Disposition { NotRun, Passed, Unsupported, Incorrect, OutOfMemory, Failed };
const char* to_string(Disposition d);  // "passed", "unsupported", "incorrect", "out_of_memory", "failed"
inline bool is_error(Disposition d) {
  return d == Disposition::Incorrect || d == Disposition::OutOfMemory || d == Disposition::Failed;
}

// Baseline: the family's reference, that speedup is measured from (one
// variant per family). Ceiling: a limit of the machine (the Ceiling family).
enum class Role { Variant, Baseline, Ceiling };
const char* to_string(Role r);

// A counter of the entry that reads as a fraction of a ceiling of `kind`
// (e.g. "GFLOPS" against "gemm_f32") measured on the same device in the same
// run. A Ceiling entry's Rate names the kind it measures. Empty: none.
struct Rate {
  Rate() = default;
  Rate(std::string counter_, std::string kind_, std::string roof_ = {})
      : counter(std::move(counter_)), kind(std::move(kind_)), roof(std::move(roof_)) {}
  std::string counter;
  std::string kind;
  // The compute ceiling that bounds the entry's floating-point work where the
  // rate is read against another kind (a double-precision stencil rated by
  // bandwidth: "gemm_f64"); empty: `kind` itself, or no floating-point work.
  // The roofline draws only that roof, not every precision's.
  std::string roof;
  bool empty() const { return counter.empty(); }
};

// time: seconds, lower is better; rate: per second, higher is better;
// problem: describes the input; knob: threads / block / ranks; model: work per
// call (flops, bytes); result: what the algorithm computed; clock: GPU clock
// readings; flag: a 0/1 fact; share: a measured part of a run (the GEMM share
// of an MLP step, the near ties of a TF32 k-means): neither the work done nor
// a speed, so a comparison does not require it equal.
// Energy (joules, lower is better) and Power (watts) are measured beside the
// time (core/energy.hpp); a family's work rates get a companion per joule.
enum class CounterKind { Time, Rate, Problem, Knob, Model, Result, Clock, Flag, Share, Energy, Power };
const char* to_string(CounterKind k);

struct CounterInfo {
  CounterKind kind;
  std::string unit;
};

// Declares a counter the harness may write (idempotent; a second declaration
// with another kind is a programming error and throws std::logic_error).
void declare_counter(const std::string& name, CounterKind kind, const std::string& unit = "");
const std::map<std::string, CounterInfo>& declared_counters();

// A family's work rate (kind Rate, unit "X/s") declares with it its work
// per joule, unit "X/J": the rate over the average power of the timed
// calls. Its name: "_per_second" becomes "_per_J", GFLOPS GFLOP_per_J, GBps
// GB_per_J, any other rate name + "_per_W" (a rate per watt is work per
// joule). Empty for core's own rates (the communication's), which are not a
// family's work, and for a per-joule counter.
std::string per_joule_name(const std::string& rate);
std::string per_joule_unit(const std::string& rate_unit);

}  // namespace pb
