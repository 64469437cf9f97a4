// The registrar turns every outcome of a Job into the right entry: timed with
// its counters, or skipped / errored with the disposition prefix the tools
// read. Drives fake Jobs through Google Benchmark itself, in process.
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>

#include "core/registrar.hpp"
#include "core/run_name.hpp"

using namespace pb;

namespace {

// Google Benchmark 1.8 reports skips as `skipped` / `skip_message`; 1.7 as
// `error_occurred` / `error_message`.
template <class R>
auto message_of(const R& r, int) -> decltype(r.skip_message, std::string()) {
  return r.skip_message;
}
template <class R>
std::string message_of(const R& r, long) {
  return r.error_message;
}
template <class R>
auto flagged(const R& r, int) -> decltype(r.skipped, bool()) {
  return r.skipped != decltype(r.skipped){};
}
template <class R>
bool flagged(const R& r, long) {
  return r.error_occurred;
}

struct Collect : benchmark::BenchmarkReporter {
  struct Seen {
    bool flagged;
    std::string message;
    std::map<std::string, double> counters;
    benchmark::IterationCount iterations;
  };
  std::map<std::string, Seen> runs;
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& rs) override {
    for (const auto& r : rs) {
      Seen s{flagged(r, 0), message_of(r, 0), {}, r.iterations};
      for (const auto& [k, c] : r.counters) s.counters[k] = c.value;
      runs[parse_run_name(r.benchmark_name()).variant] = s;  // the run-name grammar holds for these too
    }
  }
};

enum class Mode { Pass, Wrong, Unsupported, OutOfMemory, ThrowInLoop };

struct FakeJob final : Job {
  explicit FakeJob(Mode m) : mode(m) {}
  Mode mode;
  int runs = 0, resets = 0;
  Backend backend() const override { return Backend::Cpu; }
  Support supports() override {
    return mode == Mode::Unsupported ? Support::no("not this shape") : Support::yes();
  }
  void prepare() override {
    if (mode == Mode::OutOfMemory) throw pb::OutOfMemory("asked for 1 PB");
  }
  void reset() override { ++resets; }
  void run() override {
    if (++runs > 3 && mode == Mode::ThrowInLoop) throw std::runtime_error("kernel fault");
    volatile double x = 0;
    for (int i = 0; i < 1000; ++i) x = x + i;  // something to time
  }
  Check check() override {
    return mode == Mode::Wrong ? Check{false, "3 of 9 elements off", "full"} : Check{};
  }
  void report(Counters& out, double seconds, std::int64_t iterations) override {
    out.emplace_back("runs_per_second", seconds > 0 ? iterations / seconds : 0);
    out.emplace_back("resets_match_runs", resets == runs ? 1.0 : 0.0);
  }
};

TEST(Registrar, EveryDispositionBecomesTheRightEntry) {
  RegisterOptions ro;
  ro.axes = {{"N", 42}};
  const std::pair<const char*, Mode> cases[] = {{"pass", Mode::Pass},
                                                {"wrong", Mode::Wrong},
                                                {"unsupported", Mode::Unsupported},
                                                {"oom", Mode::OutOfMemory},
                                                {"throw", Mode::ThrowInLoop}};
  for (const auto& [name, mode] : cases) {
    Mode m = mode;
    register_job(
        RunName{"RegistrarTest", name, {{"N", "42"}}, "", ""}, [m] { return std::make_unique<FakeJob>(m); },
        ro)
        ->Iterations(10);
  }
  auto excluded = ro;
  excluded.excluded = "size excluded by profile";
  bool built = false;
  register_job(
      RunName{"RegistrarTest", "excluded", {{"N", "42"}}, "", ""},
      [&built] {
        built = true;
        return std::make_unique<FakeJob>(Mode::Pass);
      },
      excluded);
  Collect rep;
  benchmark::RunSpecifiedBenchmarks(&rep, "RegistrarTest/");
  ASSERT_EQ(rep.runs.size(), 6u);
  EXPECT_TRUE(rep.runs.at("excluded").flagged);
  EXPECT_EQ(rep.runs.at("excluded").message, "unsupported: size excluded by profile");
  EXPECT_FALSE(built) << "an excluded instance must not build its job";
  const auto& pass = rep.runs.at("pass");
  EXPECT_FALSE(pass.flagged) << pass.message;
  EXPECT_EQ(pass.iterations, 10);
  EXPECT_EQ(pass.counters.at("N"), 42);
  EXPECT_GT(pass.counters.at("runs_per_second"), 0);
  EXPECT_EQ(pass.counters.at("resets_match_runs"), 1);  // reset() before every run, timed or not
  EXPECT_GT(pass.counters.at("seconds_per_call"), 0);

  const auto& wrong = rep.runs.at("wrong");
  EXPECT_TRUE(wrong.flagged);
  EXPECT_EQ(wrong.message, "incorrect: 3 of 9 elements off");
  const auto& unsup = rep.runs.at("unsupported");
  EXPECT_TRUE(unsup.flagged);
  EXPECT_EQ(unsup.message, "unsupported: not this shape");
  const auto& oom = rep.runs.at("oom");
  EXPECT_TRUE(oom.flagged);
  EXPECT_EQ(oom.message, "out of memory: asked for 1 PB");
  const auto& thrown = rep.runs.at("throw");
  EXPECT_TRUE(thrown.flagged);
  EXPECT_EQ(thrown.message, "failed: kernel fault");
}

}  // namespace
