#include "core/registrar.hpp"

#include <new>

#include "core/gpu.hpp"
#include "core/mpi.hpp"

namespace pb {
namespace {

// Runs longer than this (seconds) skip the second warm-up: caches, clocks and
// page mappings are warm after the first, and each repeat would cost seconds.
constexpr double kSecondWarmupBelow = 1.0;

template <class S>
auto skip_impl(S& s, const std::string& m, int) -> decltype(s.SkipWithMessage(m), void()) {
  s.SkipWithMessage(m);
}
template <class S>
void skip_impl(S& s, const std::string& m, long) {
  s.SkipWithError(m.c_str());
}

void error(benchmark::State& state, const std::string& message) { state.SkipWithError(message.c_str()); }

}  // namespace

void skip(benchmark::State& state, const std::string& message) { skip_impl(state, message, 0); }

std::vector<Knobs> knob_values(Knob knob, const std::vector<int>& threads, const std::vector<int>& blocks) {
  std::vector<Knobs> out;
  if (knob == Knob::Threads)
    for (int t : threads) out.push_back({t, 0});
  else if (knob == Knob::Block)
    for (int b : blocks) out.push_back({1, b});
  else
    out.push_back({});
  return out;
}

void add_knob(Knob knob, const Knobs& k, RunName& name, RegisterOptions& ro) {
  if (knob == Knob::Threads) {
    name.args.emplace_back("threads", std::to_string(k.threads));
    ro.axes.emplace_back("cpu_threads", k.threads);
  } else if (knob == Knob::Block) {
    name.args.emplace_back("block", std::to_string(k.block));
    ro.axes.emplace_back("block", k.block);
  }
}

namespace {
// An MPI job that failed on some ranks leaves the others inside a collective:
// with several ranks the only way on is to stop them all, saying why.
void end_mpi_job(const Job* job, const std::exception& e) {
  if (job && job->backend() == Backend::Mpi && mpi::size() > 1)
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

void run_job(benchmark::State& state, const JobFactory& make, const RegisterOptions& opt) {
  for (const auto& [k, v] : opt.axes) state.counters[k] = v;
  std::unique_ptr<Job> job;
  std::unique_ptr<Timer> timer;
  try {
    if (!opt.excluded.empty()) return skip(state, kUnsupported + opt.excluded);
    Kept& k = kept();
    if (opt.id >= 0 && k.id == opt.id) {  // a later call of the instance prepared last
      job = std::move(k.job);
      timer = std::move(k.timer);
      k = Kept{};
    } else {
      release_kept_job();  // the previous instance's buffers go before this one's come
      job = make();
      // Before supports(): a CUDA variant may touch the device when it is built.
      if (job->backend() == Backend::Cuda && !gpu_status().available)
        return skip(state, kUnsupported + gpu_status().reason);
      Support s = job->supports();
      if (!s.ok()) return skip(state, kUnsupported + s.reason);
      job->prepare();
      timer = job->backend() == Backend::Cuda  ? make_cuda_timer(job->cuda_stream(), TimerOptions{opt.flush_l2})
              : job->backend() == Backend::Mpi ? make_mpi_timer()
                                               : make_cpu_timer();
      job->reset();
      const double first = timer->time(*job);  // warm-up, and the run that is verified
      Check c = job->check();
      if (!c.passed) return error(state, kIncorrect + c.message);
      if (first < kSecondWarmupBelow) {  // a run of seconds has warmed everything already
        job->reset();
        timer->time(*job);
      }
    }
    // Where it ran, for the tools (GPU variants are read against GPU ceilings).
    state.counters["on_gpu"] = job->backend() == Backend::Cuda ? 1 : 0;

    double total = 0.0;
    for (auto _ : state) {
      job->reset();
      double t = timer->time(*job);
      state.SetIterationTime(t);
      total += t;
    }
    Counters out;
    job->report(out, total, state.iterations());
    timer->add_counters(out);
    out.emplace_back("seconds_per_call", state.iterations() ? total / state.iterations() : 0.0);
    for (const auto& [name, v] : out) state.counters[name] = v;
    if (opt.id >= 0) kept() = Kept{opt.id, std::move(job), std::move(timer)};
  } catch (const OutOfMemory& e) {
    // Also reached from inside the timed loop: SkipWithError stops the timer and
    // marks the instance, which lets the runner accept the early exit.
    end_mpi_job(job.get(), e);
    error(state, kOutOfMemory + std::string(e.what()));
  } catch (const std::bad_alloc& e) {
    end_mpi_job(job.get(), e);
    error(state, kOutOfMemory + std::string("host allocation failed"));
  } catch (const std::exception& e) {
    end_mpi_job(job.get(), e);
    error(state, kFailed + std::string(e.what()));
  }
}

namespace {
std::vector<Registered>& registered_list() {
  static std::vector<Registered> list;
  return list;
}
}  // namespace

const std::vector<Registered>& registered() { return registered_list(); }

benchmark::internal::Benchmark* register_job(const RunName& name, JobFactory make,
                                             const RegisterOptions& opt) {
  RegisterOptions ro = opt;
  ro.id = int(registered_list().size());
  registered_list().push_back({name.format() + "/manual_time", opt.mpi});
  auto* b = benchmark::RegisterBenchmark(
      name.format().c_str(), [make = std::move(make), ro](benchmark::State& st) { run_job(st, make, ro); });
  b->UseManualTime()->Unit(opt.unit);
  return b;
}

}  // namespace pb
