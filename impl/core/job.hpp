#pragma once
// The timing contract, in one place.
//
// A Job is one benchmark instance: a variant bound to its problem and inputs.
// The registrar (registrar.hpp) drives every Job the same way:
//
//   supports()             no allocation yet; a reason ends the instance as "unsupported"
//   prepare()              untimed: allocate, generate or fetch inputs, upload
//   reset(); run()         once, untimed: warm-up and the run that is verified
//   check()                untimed: download the result, compare with the family reference
//   reset(); run()         once more, untimed: second warm-up (skipped when the
//                          first run took over a second)
//   loop: reset(); run()   only run() is timed, by the backend's Timer
//   work(), report()       family counters: core derives the rates from work()
//                          (core/work.hpp); report() adds the rest
//
// Google Benchmark calls an instance several times (growing the iteration
// count, then once per repetition). The registrar keeps the last instance's
// prepared, verified Job, so a later call of the same instance goes straight
// to the timed loop (and report()); a Job must stay ready to time after it.
//
// run() of a CPU job is complete when it returns (wall clock). run() of a CUDA
// job enqueues its work on cuda_stream() and may return early: the CUDA timer
// brackets it with events on that stream and waits for the stop event.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/energy.hpp"
#include "core/status.hpp"
#include "core/work.hpp"

namespace pb {

// Mpi: a CPU job whose run() makes collective calls on every rank (core/mpi.hpp);
// MpiCuda: a CUDA job that does, each rank driving its own GPUs.
enum class Backend { Cpu, Cuda, Mpi, MpiCuda };
inline bool on_gpu(Backend b) { return b == Backend::Cuda || b == Backend::MpiCuda; }
inline bool collective(Backend b) { return b == Backend::Mpi || b == Backend::MpiCuda; }

class Job {
 public:
  virtual ~Job() = default;
  virtual Backend backend() const = 0;
  virtual Support supports() { return Support::yes(); }
  virtual void prepare() = 0;
  virtual void reset() {}
  virtual void run() = 0;
  virtual Check check() = 0;
  // CUDA jobs: the cudaStream_t that run() enqueues on (as void*: this header
  // stays free of CUDA so the driver never needs nvcc).
  virtual void* cuda_stream() { return nullptr; }
  // What one run does, for the rate counters of the instance's Throughput
  // (RegisterOptions::throughput); called after the timed runs.
  virtual Work work() const { return {}; }
  // Counters other than the work's (a residual, a loss, a communication
  // profile), from the summed timed seconds over `iterations` runs.
  virtual void report(Counters& /*out*/, double /*seconds*/, std::int64_t /*iterations*/) {}
};

using JobFactory = std::function<std::unique_ptr<Job>()>;

// What a multi-GPU variant moves between GPUs in one timed call, and how long
// that communication takes alone (an untimed pass that issues only it, in the
// call's order): bytes 0 when the variant moves nothing (one GPU). Where the
// variant can, also the call without its communication (another untimed
// pass: the same work, nothing exchanged; its result is not used).
struct CommProfile {
  double bytes = 0;
  double seconds = 0;
  double compute_seconds = 0;  // 0: not measured
};
// comm_bytes_per_call, comm_s, comm_share (comm_s over the timed call's
// seconds, which overlap hides: the share it would take alone) and comm_GBps;
// with compute_seconds, comm_exposed_share: the share of the call that the
// communication adds, 1 - compute_seconds / seconds per call (at least 0),
// what overlap failed to hide. Nothing when the profile moved nothing.
void add_comm_counters(Counters& out, const CommProfile& c, double seconds_per_call);

// Times single runs of a Job. One implementation per backend.
class Timer {
 public:
  virtual ~Timer() = default;
  virtual double time(Job& job) = 0;             // seconds of one job.run(), complete
  virtual void add_counters(Counters&) const {}  // e.g. the SM clock seen while timing
  // A meter of the energy the timed calls spend on the device this timer
  // times (core/energy.hpp): the CPU's RAPL zones, the GPU's NVML counter.
  virtual std::unique_ptr<energy::Meter> energy_meter() const = 0;
};

std::unique_ptr<Timer> make_cpu_timer();
// Wall clock from a barrier to the end of run(), the maximum over ranks.
std::unique_ptr<Timer> make_mpi_timer();
// `inner` (a CUDA timer of this rank's stream) started after a barrier, the
// maximum over ranks.
std::unique_ptr<Timer> make_mpi_timer(std::unique_ptr<Timer> inner);

}  // namespace pb
