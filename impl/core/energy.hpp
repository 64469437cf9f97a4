#pragma once
// Energy of a timed loop: a meter reads a cumulative energy counter (the
// GPU's through NVML, the CPU's through the Linux powercap RAPL zones)
// around the timed calls of one repetition, and says what the reads allow:
// joules per call, average watts, and a bound on the error, or why there is
// no figure. A meter never changes how the calls are timed; where a counter
// cannot be read the entry says energy is unavailable and why.
#include <memory>
#include <string>
#include <vector>

namespace pb::energy {

// One read of a cumulative counter on the host's steady clock (seconds):
// joules so far (an energy counter) or watts now (a power sample), read
// some time during the `read_s` seconds before t, when the read returned.
struct Sample {
  double t = 0, value = 0, read_s = 0;
};
// One timed call on the same clock: from before its launch to after its end.
struct Call {
  double begin = 0, end = 0;
};

struct Result {
  bool ok = false;
  std::string source;  // what was read (a short label, written into the entry)
  std::string reason;  // why there is no figure, when !ok
  double joules_per_call = 0, watts = 0, window_s = 0, calls = 0;
  // The largest relative error the reads allow; negative when they give no
  // bound (integrated power samples).
  double error_bound = -1;
};

// The error an entry may carry and still be called bounded: its JSON says
// when a window was too short for this.
constexpr double kMaxError = 0.02;

// A counter that moves in steps (NVML's total energy: about 100 ms apart on
// an H100), polled while the calls run. A read between steps returns the
// energy as of the last step, so the window runs from the first step seen
// inside the calls' span to the last: the energy between two steps is exact.
// A step happened between the start of the read before the one that saw it
// and the end of that read (a read may sample its value anywhere inside it);
// the midpoint stands for it, so each end is known to half that span, and the
// calls the window holds are counted by their overlap with it (a call cut by
// an end counts the fraction inside). The energy per call is the window's
// energy over those calls: what the loop spent per call, the host's gaps
// between calls included. Bound: the two ends' half spans over the window.
// Fewer than two steps inside the span, or a counter that goes backwards:
// no figure, and why.
Result stepped_window(const std::vector<Sample>& polls, const std::vector<Call>& calls);

// Power samples (watts) integrated by the trapezoid rule over the calls'
// span, for a device without an energy counter. No error bound: the
// samples are the device's own averages over an interval it does not say.
Result integrated_power(const std::vector<Sample>& watts, const std::vector<Call>& calls);

// The energy of one run over several devices, each metered on its own
// (several GPUs of one process): joules per call and watts summed, the
// window and calls the shortest's, and the bound the largest (a sum's
// relative error is at most its largest term's), none when any has none;
// no figure when any device has none, saying which ("GPU i: why").
Result sum(const std::vector<Result>& parts);

// end - begin of a counter that wraps to zero past `range` (RAPL's
// energy_uj at max_energy_range_uj), assuming at most one wrap between the
// reads; negative when end < begin and there is no range to wrap at.
double wrapped_delta(double begin, double end, double range);

// The RAPL zones of the Linux powercap interface whose energy a CPU run
// spends: every package and its DRAM domain.
struct RaplDomain {
  std::string name;    // package-0, dram, ...
  std::string file;    // .../energy_uj
  double range_j = 0;  // max_energy_range_uj in joules
};
struct Rapl {
  std::vector<RaplDomain> domains;
  std::string reason;  // why there are none, when empty
};
// The powercap directory: PARBENCH_POWERCAP_ROOT where set (a container
// that mounts it elsewhere; the tests' fake one), else /sys/class/powercap.
std::string powercap_root();
Rapl find_rapl(const std::string& root = powercap_root());
// The domain's counter in joules; false with why (permission, a read error).
bool read_joules(const RaplDomain& d, double& joules, std::string& why);

// Seconds on the steady clock the meters and the calls share.
double now();

// One repetition's meter: begin() before the first timed call, call() after
// each with the call's span, end() after the last.
class Meter {
 public:
  virtual ~Meter() = default;
  virtual void begin() = 0;
  // Whether it reads a counter at all: one that only says why not needs no
  // call spans, and the loop takes no clock reads for it.
  virtual bool reads() const { return true; }
  void call(double begin, double end) { calls_.push_back({begin, end}); }
  virtual Result end() = 0;

 protected:
  std::vector<Call> calls_;
};

// The CPU's meter: the RAPL domains read at the loop's ends (they update
// about every millisecond, the bound's unit); reasons for no figure kept.
std::unique_ptr<Meter> make_rapl_meter(const std::string& root = powercap_root());
// A meter that only says why there is no figure.
std::unique_ptr<Meter> make_unavailable_meter(const std::string& why);

}  // namespace pb::energy
