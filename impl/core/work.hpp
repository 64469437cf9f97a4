#pragma once
// Throughput, declared rather than computed by hand in each family: a
// family says once which counters its runs' work makes (Throughput, at
// registration, so the JSON declares them), a Job says what one run does
// (Work), and core divides by the run's seconds, in one place.
#include <string>
#include <utility>
#include <vector>

namespace pb {

using Counters = std::vector<std::pair<std::string, double>>;

// `amount` a second for runs of `seconds_per_run`; 0 where no run was timed.
inline double per_second(double amount, double seconds_per_run) {
  return seconds_per_run > 0 ? amount / seconds_per_run : 0.0;
}

// What one run does: each amount per unit of work (Throughput::per), and how
// many units one run holds (1 for "call"; k-means: its Lloyd iterations).
struct Work {
  double items = 0;  // the things a run processes (elements, updates, samples)
  double bytes = 0;  // the least bytes a run moves
  double flops = 0;  // its floating-point operations
  double units = 1;  // units of `per` in one run
};

// Which counters an amount of Work makes: a rate (per second), a model
// counter (per unit of work), or both.
enum class Show { None, Rate, Model, RateAndModel };

// What a family's runs count and the counters core derives from a Work:
//   items  <items>_per_second (1/s)
//   bytes  GBps (GB/s) and/or bytes_per_<per> (B)
//   flops  GFLOPS (GFLOP/s) and/or flops_per_<per> (flop)
// Named setters, so a declaration reads as what it is:
//   Throughput().items("elements").bytes(Show::Rate)
class Throughput {
 public:
  Throughput& items(std::string noun) {
    items_ = std::move(noun);
    return *this;
  }
  Throughput& bytes(Show s) {
    bytes_ = s;
    return *this;
  }
  Throughput& flops(Show s) {
    flops_ = s;
    return *this;
  }
  // The model counters' unit of work: "call" (one timed run, the default) or
  // a part every run repeats ("iteration").
  Throughput& per(std::string unit) {
    per_ = std::move(unit);
    return *this;
  }
  bool empty() const { return items_.empty() && bytes_ == Show::None && flops_ == Show::None; }
  // Declares every counter it makes (core/meta.hpp; idempotent).
  void declare() const;
  // The counters of `w` for runs of `seconds_per_run` seconds each.
  void add(Counters& out, const Work& w, double seconds_per_run) const;

 private:
  std::string items_;
  Show bytes_ = Show::None, flops_ = Show::None;
  std::string per_ = "call";
};

}  // namespace pb
