#include "core/registrar.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <new>
#include <string>
#include <unordered_map>

#include "core/duet.hpp"
#include "core/family.hpp"
#include "core/fault.hpp"
#include "core/gpu.hpp"
#include "core/instructions.hpp"
#include "core/libraries.hpp"
#include "core/mpi.hpp"
#include "core/progress.hpp"

namespace pb {
namespace {

// Runs longer than this (seconds) skip the second warm-up: caches, clocks and
// page mappings are warm after the first, and each repeat would cost seconds.
constexpr double kSecondWarmupBelow = 1.0;

// A ceiling is what every other number is read against, so one disturbed run
// must not lower it: each call of a Ceiling instance times at least this many
// runs, and at least RegisterOptions::ceiling_seconds of them, before Google
// Benchmark's loop, and its rate counters come from the fastest run (STREAM's
// convention: a limit is the best the machine did).
constexpr std::size_t kCeilingRuns = 5;

template <class S>
auto skip_impl(S& s, const std::string& m, int) -> decltype(s.SkipWithMessage(m), void()) {
  s.SkipWithMessage(m);
}
template <class S>
void skip_impl(S& s, const std::string& m, long) {
  s.SkipWithError(m.c_str());
}

void error(benchmark::State& state, const std::string& message) { state.SkipWithError(message.c_str()); }

std::vector<Registered>& registered_list() {
  static std::vector<Registered> list;
  return list;
}

// An error seen in any call of an instance is its disposition, whatever a
// later call of it does.
void record(int id, Disposition d, const std::string& reason = {}) {
  if (id < 0 || id >= int(registered_list().size())) return;
  Registered& r = registered_list()[std::size_t(id)];
  if (is_error(r.disposition)) return;
  r.disposition = d;
  r.reason = reason;
}

// Seconds per unit of work of each speed key, from its largest passed
// instance so far (RegisterOptions::speed_key), and that instance's work.
struct Speed {
  double seconds_per_work = 0, work = 0;
};
std::unordered_map<std::string, Speed>& speeds() {
  static std::unordered_map<std::string, Speed> m;
  return m;
}

// Why the time cap leaves this instance out, or empty.
std::string over_time_cap(const RegisterOptions& opt) {
  if (opt.speed_key.empty() || opt.call_budget <= 0) return {};
  auto it = speeds().find(opt.speed_key);
  if (it == speeds().end()) return {};
  const double predicted = it->second.seconds_per_work * opt.work;
  if (predicted <= opt.call_budget) return {};
  char buf[320];
  std::snprintf(
      buf, sizeof buf,
      "size excluded by profile '%s': at this machine's speed for %s = %.3g (%.3g s a call), a call "
      "would take about %.3g s; the profile runs up to %g s a call (use --profile=full)",
      opt.profile.c_str(), opt.measure, it->second.work, it->second.seconds_per_work * it->second.work,
      predicted, opt.call_budget);
  return buf;
}

void record_speed(const RegisterOptions& opt, double seconds_per_call) {
  if (opt.speed_key.empty() || opt.work <= 0 || seconds_per_call <= 0) return;
  Speed& s = speeds()[opt.speed_key];
  if (opt.work >= s.work) s = Speed{seconds_per_call / opt.work, opt.work};
}

}  // namespace

void skip(benchmark::State& state, const std::string& message) { skip_impl(state, message, 0); }

std::vector<Knobs> knob_values(Knob knob, const std::vector<int>& threads, const std::vector<int>& blocks,
                               const std::vector<BlockShape>& shapes, const std::vector<int>& gpus,
                               const std::vector<std::string>& scalings) {
  std::vector<Knobs> out;
  if (knob == Knob::Threads)
    for (int t : threads) out.push_back({t, 0});
  else if (knob == Knob::Block)
    for (int b : blocks) out.push_back({1, b});
  else if (knob == Knob::BlockShape)
    for (const auto& s : shapes) out.push_back({1, s.x, s.y});
  else if (knob == Knob::Gpus)
    for (const auto& scaling : scalings)
      for (int g : gpus) {
        Knobs k;
        k.gpus = g;
        k.weak = scaling == "weak";
        out.push_back(k);
      }
  else
    out.push_back({});
  return out;
}

namespace {
bool energy_metering = true;
}
void set_energy_metering(bool on) { energy_metering = on; }

std::string add_energy_counters(Counters& out, const energy::Result& r, double rate_seconds) {
  if (!r.ok) return "unavailable: " + (r.source.empty() ? std::string() : r.source + ": ") + r.reason;
  const Counters rates = out;
  out.emplace_back("joules_per_call", r.joules_per_call);
  out.emplace_back("watts", r.watts);
  out.emplace_back("energy_window_s", r.window_s);
  if (r.error_bound >= 0) out.emplace_back("energy_error_bound", r.error_bound);
  const auto& declared = declared_counters();
  for (const auto& [name, v] : rates) {
    auto it = declared.find(name);
    if (it == declared.end() || it->second.kind != CounterKind::Rate) continue;
    const std::string per_joule = per_joule_name(name);
    if (per_joule.empty() || !declared.count(per_joule) || !(r.joules_per_call > 0)) continue;
    out.emplace_back(per_joule, v * rate_seconds / r.joules_per_call);
  }
  char note[160] = "";
  if (r.error_bound < 0)
    std::snprintf(note, sizeof note, " (no error bound)");
  else if (r.error_bound > energy::kMaxError)
    std::snprintf(note, sizeof note, " (error bound %.1f%%, over %.0f%%: the %.3f s window is too short)",
                  100 * r.error_bound, 100 * energy::kMaxError, r.window_s);
  return r.source + note;
}

void add_knob(Knob knob, const Knobs& k, RunName& name, RegisterOptions& ro) {
  if (knob == Knob::Threads) {
    name.args.emplace_back("threads", std::to_string(k.threads));
    ro.axes.emplace_back("cpu_threads", k.threads);
  } else if (knob == Knob::Block) {
    name.args.emplace_back("block", std::to_string(k.block));
    ro.axes.emplace_back("block", k.block);
  } else if (knob == Knob::BlockShape) {
    name.args.emplace_back("block", std::to_string(k.block) + "x" + std::to_string(k.block_y));
    ro.axes.emplace_back("block", double(k.block) * k.block_y);
    ro.axes.emplace_back("block_x", k.block);
    ro.axes.emplace_back("block_y", k.block_y);
  } else if (knob == Knob::Gpus) {
    if (k.weak) name.args.emplace_back("scaling", "weak");
    name.args.emplace_back("gpus", std::to_string(k.gpus));
    ro.axes.emplace_back("gpus", k.gpus);
    ro.gpus = k.gpus;
  }
}

namespace {
// An MPI job that failed on some ranks leaves the others inside a collective:
// with several ranks the only way on is to stop them all, saying why.
void end_mpi_job(const Job* job, const std::exception& e) {
  if (job && collective(job->backend()) && mpi::size() > 1)
    mpi::abort((std::string("an MPI job failed on this rank, ending every rank: ") + e.what()).c_str());
}

// The last instance's prepared and verified job (see run_job in the header).
struct Kept {
  int id = -1;
  std::unique_ptr<Job> job;
  std::unique_ptr<Timer> timer;
};
Kept& kept() {
  static Kept k;
  return k;
}
}  // namespace

void release_kept_job() { kept() = Kept{}; }

void add_comm_counters(Counters& out, const CommProfile& c, double seconds_per_call) {
  if (c.bytes <= 0) return;
  out.emplace_back("comm_bytes_per_call", c.bytes);
  out.emplace_back("comm_s", c.seconds);
  out.emplace_back("comm_share", seconds_per_call > 0 ? c.seconds / seconds_per_call : 0.0);
  out.emplace_back("comm_GBps", per_second(c.bytes, c.seconds) * 1e-9);
  if (c.compute_seconds > 0 && seconds_per_call > 0)
    out.emplace_back("comm_exposed_share", std::max(0.0, 1.0 - c.compute_seconds / seconds_per_call));
}

void run_job(benchmark::State& state, const JobFactory& make, const RegisterOptions& opt) {
  for (const auto& [k, v] : opt.axes) state.counters[k] = v;
  std::unique_ptr<Job> job;
  std::unique_ptr<Timer> timer;
  progress::instance_started(opt.id);
  duet::instance_started(opt.id);
  auto unsupported = [&](const std::string& why) {
    record(opt.id, Disposition::Unsupported, why);
    skip(state, kUnsupported + why);
  };
  auto fail = [&](Disposition d, const char* prefix, const std::string& why) {
    record(opt.id, d, why);
    error(state, prefix + why);
  };
  try {
    if (!opt.excluded.empty()) return unsupported(opt.excluded);
    Kept& k = kept();
    if (opt.id >= 0 && k.id == opt.id) {  // a later call of the instance prepared last
      job = std::move(k.job);
      timer = std::move(k.timer);
      k = Kept{};
    } else {
      release_kept_job();  // the previous instance's buffers go before this one's come
      // An instance that already passed a call is judged by nothing else: a
      // later call (another repetition) runs too, whatever its time was.
      const bool passed_before =
          opt.id >= 0 && registered()[std::size_t(opt.id)].disposition == Disposition::Passed;
      if (const std::string why = passed_before ? std::string() : over_time_cap(opt); !why.empty())
        return unsupported(why);
      // The ranks of a collective job decide together whether it runs: a rank
      // that cannot build, support or prepare it tells every rank, all record
      // the same entry and go on, and none is left waiting in a collective.
      const bool together = opt.mpi && mpi::size() > 1;
      std::string error;
      bool out_of_memory = false;
      // A set-up step: on several ranks its exception is kept for the ranks'
      // verdict, not thrown past the others.
      auto step = [&](const std::function<void()>& f) {
        try {
          f();
        } catch (const std::exception& e) {
          if (!together) throw;
          error = e.what();
          out_of_memory = dynamic_cast<const OutOfMemory*>(&e) || dynamic_cast<const std::bad_alloc*>(&e);
        }
      };
      // Every rank records the first failing rank's message, as out of
      // memory where any rank ran out.
      auto agreed_failure = [&](const std::string& first) {
        const bool oom = mpi::any(out_of_memory);
        fail(oom ? Disposition::OutOfMemory : Disposition::Failed, oom ? kOutOfMemory : kFailed, first);
      };
      Support s = Support::yes();
      step([&] {
        if (opt.id >= 0) inject_test_fault(registered()[std::size_t(opt.id)].name);
        job = make();
        // Before supports(): a CUDA variant may touch the device when it is built.
        s = on_gpu(job->backend()) && !gpu_status().available ? Support::no(gpu_status().reason)
                                                              : job->supports();
      });
      if (together) {
        if (const std::string first = mpi::first_error(error); !first.empty()) return agreed_failure(first);
        // One model over every rank's GPUs, as in one process (mixed_gpu_models).
        if (on_gpu(opt.backend) && !mpi::same(std::hash<std::string>{}(current_gpu_name())) && s.ok())
          s = Support::no(
              "the ranks' GPUs are not all one model: a run split evenly over GPUs needs one model");
        const std::string first = mpi::first_error(s.ok() ? "" : s.reason);
        if (!first.empty()) return unsupported(s.ok() ? first : s.reason);
      }
      if (!s.ok()) return unsupported(s.reason);
      step([&] { job->prepare(); });
      if (together)
        if (const std::string first = mpi::first_error(error); !first.empty()) return agreed_failure(first);
      if (on_gpu(job->backend())) {
        timer = make_cuda_timer(job->cuda_stream(), TimerOptions{opt.flush_l2});
        if (collective(job->backend())) timer = make_mpi_timer(std::move(timer));
      } else {
        timer = job->backend() == Backend::Mpi ? make_mpi_timer() : make_cpu_timer();
      }
      job->reset();
      const double first = timer->time(*job);  // warm-up, and the run that is verified
      Check c = job->check();
      if (!c.passed) return fail(Disposition::Incorrect, kIncorrect, c.message);
      if (opt.id >= 0) registered_list()[std::size_t(opt.id)].verified = c.method;
      if (first < kSecondWarmupBelow) {  // a run of seconds has warmed everything already
        job->reset();
        timer->time(*job);
      }
      duet::ready_to_time(opt.id);
    }
    // Where it ran, for the tools (GPU variants are read against GPU ceilings).
    state.counters["on_gpu"] = on_gpu(job->backend()) ? 1 : 0;

    const bool ceiling = opt.role == Role::Ceiling;
    double best = 0.0, sampled = 0.0;
    if (ceiling)
      for (std::size_t n = 0; n < kCeilingRuns || sampled < opt.ceiling_seconds; ++n) {
        job->reset();
        const double t = timer->time(*job);
        best = n == 0 ? t : std::min(best, t);
        sampled += t;
      }
    // The energy of this repetition's timed calls, metered beside them (a
    // GPU's meter polls NVML on a thread of its own, which moves no time:
    // docs/perf/energy.md). A run over several GPUs of this process sums
    // them; GPUs of several processes, and an interconnect ceiling's, are
    // not metered.
    std::unique_ptr<energy::Meter> meter;
    if (!energy_metering)
      meter = nullptr;
    else if (opt.gpus > 1 && opt.role == Role::Ceiling)
      meter = energy::make_unavailable_meter("an interconnect ceiling's GPUs are not metered");
    else if (opt.gpus > 1 && (!on_gpu(job->backend()) || mpi::size() > 1))
      meter = energy::make_unavailable_meter("the GPUs of several processes are not metered together");
    else
      meter = opt.gpus > 1 ? gpus_energy_meter(opt.gpus) : timer->energy_meter();
    if (meter) meter->begin();
    const bool spans = meter && meter->reads();
    double total = 0.0;
    const bool count = !on_gpu(job->backend()) && instructions::counting();
    for (auto _ : state) {
      job->reset();
      const double began = spans ? energy::now() : 0.0;
      if (count) instructions::begin();
      double t = timer->time(*job);
      if (count) instructions::end();
      if (spans) meter->call(began, energy::now());
      state.SetIterationTime(t);
      total += t;
      best = std::min(best, t);
    }
    if (count && opt.id >= 0) instructions::dump(registered()[std::size_t(opt.id)].name, state.iterations());
    const energy::Result spent = meter ? meter->end() : energy::Result{};
    Counters out;
    // A ceiling's counters describe its fastest run, as if every call took that long.
    const double timed = ceiling ? best * double(state.iterations()) : total;
    opt.throughput.add(out, job->work(), state.iterations() ? timed / double(state.iterations()) : 0.0);
    job->report(out, timed, state.iterations());
    timer->add_counters(out);
    const double per_call = state.iterations() ? total / state.iterations() : 0.0;
    out.emplace_back("seconds_per_call", per_call);
    if (meter) {
      // The rates' seconds: the fastest run's for a ceiling, as above.
      const std::string how = add_energy_counters(out, spent, ceiling ? best : per_call);
      if (opt.id >= 0) registered_list()[std::size_t(opt.id)].energy = how;
    }
    if (state.iterations()) record_speed(opt, total / double(state.iterations()));
    for (const auto& [name, v] : out) state.counters[name] = v;
    record(opt.id, Disposition::Passed);
    if (opt.id >= 0) kept() = Kept{opt.id, std::move(job), std::move(timer)};
  } catch (const OutOfMemory& e) {
    // Also reached from inside the timed loop: SkipWithError stops the timer and
    // marks the instance, which lets the runner accept the early exit.
    end_mpi_job(job.get(), e);
    fail(Disposition::OutOfMemory, kOutOfMemory, e.what());
  } catch (const std::bad_alloc& e) {
    end_mpi_job(job.get(), e);
    fail(Disposition::OutOfMemory, kOutOfMemory, "host allocation failed");
  } catch (const std::exception& e) {
    end_mpi_job(job.get(), e);
    fail(Disposition::Failed, kFailed, e.what());
  }
}

const std::vector<Registered>& registered() { return registered_list(); }

namespace {
std::unordered_map<std::string, int>& index_by_name() {
  static std::unordered_map<std::string, int> m;
  return m;
}
}  // namespace

const Registered* find_registered(const std::string& function_name) {
  auto it = index_by_name().find(function_name);
  return it == index_by_name().end() ? nullptr : &registered_list()[std::size_t(it->second)];
}

benchmark::internal::Benchmark* register_job(const RunName& name, JobFactory make,
                                             const RegisterOptions& opt) {
  RegisterOptions ro = opt;
  ro.id = int(registered_list().size());
  opt.throughput.declare();
  Registered r;
  r.name = name.format() + "/manual_time";
  r.mpi = opt.mpi;
  r.role = opt.role;
  r.backend = opt.backend;
  r.gpus = opt.gpus;
  r.rate = opt.rate;
  r.library = opt.library;
  if (!opt.library.empty()) r.library_version = library_version(opt.library);
  r.code = opt.code;
  r.code_fingerprint = code_fingerprint(opt.code);
  index_by_name()[name.format()] = ro.id;
  registered_list().push_back(std::move(r));
  auto* b = benchmark::RegisterBenchmark(
      name.format().c_str(), [make = std::move(make), ro](benchmark::State& st) { run_job(st, make, ro); });
  b->UseManualTime()->Unit(opt.unit);
  return b;
}

}  // namespace pb
