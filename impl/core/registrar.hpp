#pragma once
// The one place where Jobs become Google Benchmark instances.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "core/code.hpp"
#include "core/job.hpp"
#include "core/knobs.hpp"
#include "core/meta.hpp"
#include "core/run_name.hpp"

namespace pb {

struct RegisterOptions {
  benchmark::TimeUnit unit = benchmark::kMicrosecond;
  bool flush_l2 = false;
  Counters axes;  // numeric axes of the instance, written as counters
  // Non-empty: the profile leaves this instance out; it reports "unsupported: "
  // + this reason without building the job.
  std::string excluded;
  bool mpi = false;  // the job runs collectives: the only kind run under mpirun with P > 1
  // The GPUs the instance uses at once (a GPU backend's; over MPI ranks, all
  // the ranks'): ci/run-suite runs only one-GPU instances side by side.
  int gpus = 1;
  // What the instance is, written into its JSON entry (core/meta.hpp): the
  // family's speedup baseline, a machine ceiling or a variant; where it runs;
  // and which counter reads as a fraction of which kind of ceiling.
  Role role = Role::Variant;
  Backend backend = Backend::Cpu;
  Rate rate;
  // The counters the job's Work makes (core/work.hpp), declared when the
  // instance is registered and written after its timed runs.
  Throughput throughput;
  // The external library whose build the timed run's speed depends on
  // ("openblas", "cublas", "cub", "thrust", "nccl"; empty: none), so a comparison
  // checks that library's version only for the entries that call it.
  std::string library;
  // The sources that hold the code the instance runs (core/code.hpp): its
  // JSON entry's "code" is their fingerprint. Every family instance names
  // them; the tests check that each has a fingerprint.
  Code code;
  // Ceilings: the least timed seconds of runs each call takes its fastest from
  // (besides at least 5 runs; registrar.cpp).
  double ceiling_seconds = 0.5;
  // A time cap from the variant's own speed (profiles that have one, CPU
  // jobs): instances with the same speed_key (the run name without its
  // problem sizes) share one measured speed, seconds per unit of `work`; an
  // instance that speed says would take over call_budget seconds a call
  // reports "unsupported" instead of running. Empty key: no time cap.
  std::string speed_key;
  double work = 0;           // the family's measure of this instance (M*N*K, N*D*K, n ...)
  const char* measure = "";  // its name, for the reason
  double call_budget = 0;    // seconds
  std::string profile;       // for the reason
  // Set by register_job: the instance's index, under which run_job keeps its
  // prepared, verified job between Google Benchmark's calls. -1: not kept.
  int id = -1;
};

// Every registered instance, in registration order: its full name (as Google
// Benchmark filters and reports it), whether it is an MPI job, what it is, and
// how it ended (set by run_job; NotRun until then).
struct Registered {
  std::string name;
  bool mpi = false;
  Role role = Role::Variant;
  Backend backend = Backend::Cpu;
  int gpus = 1;  // RegisterOptions::gpus
  // How its energy was metered (the meter's source, with a note on the
  // error bound) or "unavailable: why"; empty when not metered.
  std::string energy;
  Rate rate;
  std::string library;
  std::string library_version;  // core/libraries.hpp; empty without a library
  Code code;
  std::string code_fingerprint;  // 16 hex digits; empty when the build's table lacks a source of `code`
  Disposition disposition = Disposition::NotRun;
  std::string reason;    // why, when not passed
  std::string verified;  // how its result was checked (Check::method), once it passed the check
};
const std::vector<Registered>& registered();
// The instance registered as `function_name` (RunName::format(); Google
// Benchmark reports it as a Run's run_name.function_name), or nullptr.
const Registered* find_registered(const std::string& function_name);

// Registers `name` (all instances use manual time: the backend's Timer measures
// run() alone). Returns the Benchmark for further settings.
benchmark::internal::Benchmark* register_job(const RunName& name, JobFactory make,
                                             const RegisterOptions& opt);

// Drives one instance (the contract in core/job.hpp). Exposed for tests.
// Google Benchmark calls an instance's function several times (while it grows
// the iteration count, then once per repetition). For an instance with an id,
// the job that was prepared, warmed up and verified on the first call is kept
// and the later calls only time it, so preparation and verification (seconds
// for 2^28 elements) happen once per instance. One job is kept at a time: the
// next instance frees it before preparing its own.
void run_job(benchmark::State& state, const JobFactory& make, const RegisterOptions& opt);

// Frees the kept job (before the CUDA runtime or MPI shut down).
void release_kept_job();

// Whether run_job meters the energy of the timed calls (bench --no-energy
// turns it off; on by default).
void set_energy_metering(bool on);
// A repetition's energy as counters: joules_per_call, watts,
// energy_window_s, energy_error_bound, and for each family work rate in
// `out` its per-joule companion (meta.hpp: rate x `rate_seconds`, the
// seconds a call the rate was computed from, / joules_per_call). Returns what the entry's JSON says of it:
// the source with a note when the error bound is over energy::kMaxError or missing, or "unavailable: why"
// (and no counter).
std::string add_energy_counters(Counters& out, const energy::Result& r, double rate_seconds);

// The instances of a variant's knob: one per thread count or block size.
// Knob::BlockShape: one per 2-D block shape (x, y); Knob::Gpus: one per GPU
// count and scaling ("strong", "weak": Knobs::weak; the family grows a weak
// instance's problem with the GPU count).
struct BlockShape {
  int x = 0, y = 0;
};
std::vector<Knobs> knob_values(Knob knob, const std::vector<int>& threads, const std::vector<int>& blocks,
                               const std::vector<BlockShape>& shapes = {}, const std::vector<int>& gpus = {1},
                               const std::vector<std::string>& scalings = {"strong"});
// Adds the knob to the run name (threads:T / block:B / block:XxY / [scaling:weak/]gpus:G) and as a
// counter (cpu_threads / block / gpus: Google Benchmark's JSON has a "threads" field of its own).
void add_knob(Knob knob, const Knobs& k, RunName& name, RegisterOptions& ro);

// Skip with a reason. Google Benchmark 1.8 has SkipWithMessage; 1.7 only
// SkipWithError, so there the reason travels as an error whose message starts
// with the disposition prefix (status.hpp), which the tools read as a skip.
void skip(benchmark::State& state, const std::string& message);

}  // namespace pb
