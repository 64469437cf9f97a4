// The registrar turns every outcome of a Job into the right entry: timed with
// its counters, or skipped / errored with the disposition prefix the tools
// read. Drives fake Jobs through Google Benchmark itself, in process.
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/code.hpp"
#include "core/gpu.hpp"
#include "core/libraries.hpp"
#include "core/registrar.hpp"
#include "core/reporters.hpp"
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
      Seen s{run_flagged(r, 0), message_of(r, 0), {}, r.iterations};
      for (const auto& [k, c] : r.counters) s.counters[k] = c.value;
      const auto name = r.benchmark_name();  // Family/Variant/...
      const auto from = name.find('/') + 1;
      runs[name.substr(from, name.find('/', from) - from)] = s;
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

// A CPU job whose every run adds 1 J to a fake RAPL package counter: the
// registrar meters the timed loop through PARBENCH_POWERCAP_ROOT and writes
// exactly 1 J a call, and the work rate's per-joule companion.
struct JouleJob final : Job {
  explicit JouleJob(std::string file) : file(std::move(file)) {}
  std::string file;
  Backend backend() const override { return Backend::Cpu; }
  Support supports() override { return Support::yes(); }
  void prepare() override {}
  void reset() override {}
  void run() override {
    long long uj = 0;
    std::ifstream(file) >> uj;
    std::ofstream(file) << uj + 1000000 << "\n";
  }
  Check check() override { return Check{}; }
  void report(Counters& out, double seconds, std::int64_t iterations) override {
    out.emplace_back("test_calls_per_second", seconds > 0 ? iterations / seconds : 0);
  }
};

TEST(Registrar, MetersACpuJobsEnergyThroughRapl) {
  char tmpl[] = "/tmp/parbench-powercap-XXXXXX";
  const std::string root = mkdtemp(tmpl);
  const std::string zone = root + "/intel-rapl:0";
  mkdir(zone.c_str(), 0755);
  std::ofstream(zone + "/name") << "package-0\n";
  std::ofstream(zone + "/energy_uj") << "1000000\n";
  std::ofstream(zone + "/max_energy_range_uj") << "262143328850\n";
  setenv("PARBENCH_POWERCAP_ROOT", root.c_str(), 1);
  declare_counter("test_calls_per_second", CounterKind::Rate, "1/s");
  const std::string file = zone + "/energy_uj";
  register_job(
      RunName{"EnergyTest", "joule", {}}, [file] { return std::make_unique<JouleJob>(file); },
      RegisterOptions{})
      ->Iterations(20);
  Collect rep;
  benchmark::RunSpecifiedBenchmarks(&rep, "EnergyTest/");
  unsetenv("PARBENCH_POWERCAP_ROOT");
  std::system(("rm -rf " + root).c_str());
  ASSERT_EQ(rep.runs.count("joule"), 1u);
  const auto& c = rep.runs["joule"].counters;
  ASSERT_TRUE(c.count("joules_per_call"));
  EXPECT_DOUBLE_EQ(c.at("joules_per_call"), 1.0);
  EXPECT_GT(c.at("watts"), 0.0);
  EXPECT_NEAR(c.at("test_calls_per_J"), 1.0, 1e-9);  // a call a second over a joule a call
  const Registered* r = find_registered("EnergyTest/joule");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->energy.rfind("RAPL", 0), 0u) << r->energy;
}

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
        RunName{"RegistrarTest", name, {{"N", "42"}}}, [m] { return std::make_unique<FakeJob>(m); }, ro)
        ->Iterations(10);
  }
  auto excluded = ro;
  excluded.excluded = "size excluded by profile";
  bool built = false;
  register_job(
      RunName{"RegistrarTest", "excluded", {{"N", "42"}}},
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
  EXPECT_EQ(pass.counters.at("on_gpu"), 0);  // a CPU job
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

// Counts what the registrar does with the jobs of the kept-job test.
struct Tally {
  int built = 0, prepared = 0, checked = 0, runs = 0, live = 0, most_live = 0;
};

struct CountingJob final : Job {
  CountingJob(Tally& t, bool wrong) : t(t), wrong(wrong) {
    ++t.built;
    t.most_live = std::max(t.most_live, ++t.live);
  }
  ~CountingJob() override { --t.live; }
  Tally& t;
  bool wrong;
  Backend backend() const override { return Backend::Cpu; }
  void prepare() override { ++t.prepared; }
  void run() override {
    ++t.runs;
    volatile double x = 0;
    for (int i = 0; i < 1000; ++i) x = x + i;
  }
  Check check() override {
    ++t.checked;
    return wrong ? Check{false, "1 of 4 elements off", "full"} : Check{};
  }
  void report(Counters&, double, std::int64_t) override {}
};

struct CountRuns : benchmark::BenchmarkReporter {
  int runs = 0, flagged_runs = 0;
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& rs) override {
    for (const auto& r : rs)
      if (r.run_type == Run::RT_Iteration) {
        ++runs;
        flagged_runs += run_flagged(r, 0) ? 1 : 0;
      }
  }
};

TEST(Registrar, KeepsAVerifiedJobAcrossTheCallsOfItsInstanceOnly) {
  Tally a, b, w;
  const std::pair<const char*, Tally*> cases[] = {{"a", &a}, {"b", &b}, {"wrong", &w}};
  for (const auto& [name, t] : cases) {
    Tally* tally = t;
    const bool wrong = tally == &w;
    register_job(
        RunName{"KeptJobTest", name, {}},
        [tally, wrong] { return std::make_unique<CountingJob>(*tally, wrong); }, RegisterOptions{})
        ->Iterations(5)
        ->Repetitions(3);  // with a fixed iteration count: one call per repetition
  }
  CountRuns rep;
  benchmark::RunSpecifiedBenchmarks(&rep, "KeptJobTest/");
  EXPECT_EQ(rep.runs, 9);
  EXPECT_EQ(rep.flagged_runs, 3);  // every repetition of the wrong one is an error entry
  for (Tally* t : {&a, &b}) {
    EXPECT_EQ(t->built, 1);  // prepared, warmed up and verified on the first call only
    EXPECT_EQ(t->prepared, 1);
    EXPECT_EQ(t->checked, 1);
    EXPECT_EQ(t->runs, 2 + 3 * 5);  // two warm-up runs, then 5 timed runs per repetition
  }
  EXPECT_EQ(a.live, 0) << "the next instance frees the kept job";
  EXPECT_EQ(b.live, 0) << "an incorrect instance frees it too";
  EXPECT_EQ(w.built, 3) << "an incorrect job is never kept: each call verifies afresh";
  EXPECT_EQ(w.checked, 3);
  EXPECT_EQ(w.live, 0);
  EXPECT_EQ(a.most_live + b.most_live + w.most_live, 3);
}

TEST(Registrar, ReleasesTheKeptJob) {
  Tally t;
  register_job(
      RunName{"ReleaseTest", "a", {}}, [&t] { return std::make_unique<CountingJob>(t, false); },
      RegisterOptions{})
      ->Iterations(2);
  CountRuns rep;
  benchmark::RunSpecifiedBenchmarks(&rep, "ReleaseTest/");
  EXPECT_EQ(t.live, 1);  // kept for a later call
  release_kept_job();
  EXPECT_EQ(t.live, 0);
}

// The JSON file carries parbench's schema: every entry says how it ended,
// what it is, where it ran, what its rate reads against, the fingerprint of
// its code and the library it calls with its version (only where it names
// them); the context lists the counters' kinds;
// nothing is NaN; the counts give the exit status.
TEST(Registrar, JsonCarriesTheSchemaAndTheOutcomesCount) {
  const Outcomes before = outcomes();
  RegisterOptions ro;
  ro.axes = {{"N", 42}};
  const std::pair<const char*, Mode> cases[] = {{"pass", Mode::Pass},
                                                {"wrong", Mode::Wrong},
                                                {"unsupported", Mode::Unsupported},
                                                {"oom", Mode::OutOfMemory}};
  for (const auto& [name, mode] : cases) {
    Mode m = mode;
    auto r = ro;
    if (m == Mode::Pass) {
      r.role = Role::Baseline;
      r.rate = Rate{"runs_per_second", "test_kind"};
      r.library = "openblas";
      r.code = "impl/gemm/cpu/openblas.cpp";  // a source of the build's code table
    }
    register_job(
        RunName{"SchemaTest", name, {{"N", "42"}}}, [m] { return std::make_unique<FakeJob>(m); },
        r)
        ->Iterations(3)
        ->Repetitions(2);  // aggregates: the cv of the constant 0 on_gpu is 0/0
  }
  auto json = make_file_reporter("json");
  std::ostringstream out;
  json->SetOutputStream(&out);
  json->SetErrorStream(&out);
  benchmark::RunSpecifiedBenchmarks(json.get(), "SchemaTest/");
  const std::string s = out.str();
  EXPECT_EQ(s.find("NaN"), std::string::npos);
  EXPECT_EQ(s.find("Infinity"), std::string::npos);
  EXPECT_NE(s.find("\"on_gpu\": null"), std::string::npos) << "the undefined cv is written as null";
  EXPECT_NE(s.find("\"parbench_schema\": 1"), std::string::npos);
  EXPECT_NE(s.find("\"seconds_per_call\": {\"kind\": \"time\", \"unit\": \"s\", \"better\": \"lower\"}"),
            std::string::npos);
  // The fingerprint of the code it names, and the library's version after the library.
  const std::string code = code_fingerprint(Code("impl/gemm/cpu/openblas.cpp"));
  ASSERT_EQ(code.size(), 16u);
  // A passed CPU entry says how its energy was metered: by RAPL, or why not
  // (this machine's RAPL zones may be absent or root-only).
  EXPECT_NE(
      s.find("{\"disposition\": \"passed\", \"role\": \"baseline\", \"device\": \"cpu\", \"energy\": \"RAPL"),
      s.find("{\"disposition\": \"passed\", \"role\": \"baseline\", \"device\": \"cpu\", \"energy\": "
             "\"unavailable: RAPL: "))
      << s;
  EXPECT_NE(
      s.find("\", \"rate\": {\"counter\": \"runs_per_second\", \"ceiling\": \"test_kind\"}, \"code\": \"" +
             code + "\", \"library\": \"openblas\", \"library_version\": \"" + library_version("openblas") +
             "\"}"),
      std::string::npos)
      << s;
  EXPECT_NE(
      s.find("{\"disposition\": \"incorrect\", \"reason\": \"3 of 9 elements off\", \"role\": \"variant\""),
      std::string::npos);
  EXPECT_NE(s.find("{\"disposition\": \"unsupported\", \"reason\": \"not this shape\""), std::string::npos);
  EXPECT_NE(s.find("{\"disposition\": \"out_of_memory\", \"reason\": \"asked for 1 PB\""), std::string::npos);
  // Every entry, repetitions and aggregates, has the object once.
  std::size_t entries = 0, objects = 0;
  for (auto p = s.find("\"name\": "); p != std::string::npos; p = s.find("\"name\": ", p + 1)) ++entries;
  for (auto p = s.find("\"parbench\": {"); p != std::string::npos; p = s.find("\"parbench\": {", p + 1))
    ++objects;
  EXPECT_EQ(entries, objects);
  // Only the passed instance names a library: its repetitions and aggregates.
  std::size_t passed = 0, libraries = 0;
  for (auto p = s.find("{\"disposition\": \"passed\""); p != std::string::npos;
       p = s.find("{\"disposition\": \"passed\"", p + 1))
    ++passed;
  for (auto p = s.find("\"library\": "); p != std::string::npos; p = s.find("\"library\": ", p + 1))
    ++libraries;
  EXPECT_EQ(libraries, passed);
  EXPECT_GE(libraries, 2u);
  const auto incorrect = s.find("{\"disposition\": \"incorrect\"");
  ASSERT_NE(incorrect, std::string::npos);
  EXPECT_EQ(s.substr(incorrect, s.find('}', incorrect) - incorrect).find("library"), std::string::npos)
      << "an instance without a library has no library key";
  EXPECT_EQ(s.substr(incorrect, s.find('}', incorrect) - incorrect).find("\"code\""), std::string::npos)
      << "an instance that names no code has no code key";
  EXPECT_GE(entries, 4u + 2u + 4u);  // 2 passed repetitions and their aggregates, and the others

  const Outcomes after = outcomes();
  EXPECT_EQ(after.passed - before.passed, 1);
  EXPECT_EQ(after.incorrect - before.incorrect, 1);
  EXPECT_EQ(after.unsupported - before.unsupported, 1);
  EXPECT_EQ(after.out_of_memory - before.out_of_memory, 1);
  EXPECT_EQ(after.errors() - before.errors(), 2);
}

TEST(Registrar, MultiGpuRunsNeedOneModel) {
  EXPECT_EQ(mixed_gpu_models({"H100", "H100", "H100"}), "");
  EXPECT_EQ(mixed_gpu_models({"H100"}), "");
  EXPECT_EQ(
      mixed_gpu_models({"H100", "A100", "H100", "L4"}),
      "GPUs of different models (0: H100, 1: A100, 3: L4): a run split evenly over GPUs needs one model");
}

TEST(Registrar, TeamLayoutOverRanks) {
  // One process, 4 GPUs: devices 0..3, members 0..3; part q on member q % 4.
  TeamLayout one = TeamLayout::make(4, 1, 0, 0, 1, 4);
  EXPECT_EQ(one.why_not(4), "");
  EXPECT_EQ(one.per, 4);
  EXPECT_EQ(one.base, 0);
  EXPECT_EQ(one.holder(6), 2);
  EXPECT_EQ(one.why_not(3), "fewer parts than GPUs");
  EXPECT_EQ(TeamLayout::make(4, 1, 0, 0, 1, 2).why_not(4), "asks for 4 GPUs, 2 visible");
  // 2 hosts x 2 ranks, 2 GPUs a rank (8 in all); rank 3 is host 1's second:
  // its devices 2 and 3, members 6 and 7.
  TeamLayout r3 = TeamLayout::make(8, 4, 3, 1, 2, 4);
  EXPECT_EQ(r3.why_not(8), "");
  EXPECT_EQ(r3.per, 2);
  EXPECT_EQ(r3.base, 2);
  EXPECT_EQ(r3.first, 6);
  EXPECT_EQ(r3.holder(7), 1);
  EXPECT_EQ(r3.holder(5), -1);  // rank 2's
  EXPECT_EQ(r3.why_not(16), "over MPI ranks every GPU holds one part");
  // The same ranks where the launcher shows each its own 2 GPUs: from 0.
  TeamLayout own = TeamLayout::make(8, 4, 3, 1, 2, 2);
  EXPECT_EQ(own.base, 0);
  EXPECT_EQ(own.why_not(8), "");
  // More ranks on a host than its GPUs; GPUs that do not split evenly.
  EXPECT_EQ(TeamLayout::make(5, 5, 0, 0, 5, 4).why_not(5),
            "5 ranks on this host x 1 GPUs a rank need 5 GPUs, 4 visible");
  EXPECT_EQ(TeamLayout::make(3, 2, 0, 0, 2, 4).why_not(3), "3 GPUs do not split evenly over 2 ranks");
}

TEST(Registrar, CommunicationCountersWithExactNumbers) {
  Counters out;
  add_comm_counters(out, CommProfile{8e9, 2.0}, 4.0);  // 8 GB alone in 2 s, in a 4 s call
  const std::map<std::string, double> got(out.begin(), out.end());
  EXPECT_EQ(got,
            (std::map<std::string, double>{
                {"comm_bytes_per_call", 8e9}, {"comm_s", 2.0}, {"comm_share", 0.5}, {"comm_GBps", 4.0}}));
  Counters none;
  add_comm_counters(none, CommProfile{}, 4.0);  // one GPU: nothing moved, nothing written
  EXPECT_TRUE(none.empty());
  // The call without its exchange took 3.5 s of the 4 s: it adds 1/8.
  Counters exposed;
  add_comm_counters(exposed, CommProfile{8e9, 2.0, 3.5}, 4.0);
  const std::map<std::string, double> exposed_got(exposed.begin(), exposed.end());
  EXPECT_EQ(exposed_got.at("comm_exposed_share"), 0.125);
  // Faster with it than without (noise): nothing exposed, never below 0.
  Counters hidden;
  add_comm_counters(hidden, CommProfile{8e9, 2.0, 4.2}, 4.0);
  const std::map<std::string, double> hidden_got(hidden.begin(), hidden.end());
  EXPECT_EQ(hidden_got.at("comm_exposed_share"), 0.0);
}

TEST(Reporters, NonFiniteValuesBecomeNull) {
  const std::string in =
      "{\n  \"a\": NaN,\n  \"b\": -NaN,\n  \"c\": Infinity,\n  \"d\": -Infinity\n  \"e\": \"NaN\",\n"
      "  \"f\": 1.5,\n  \"msg\": \"x\\\": NaN\"\n}";
  const std::string want =
      "{\n  \"a\": null,\n  \"b\": null,\n  \"c\": null,\n  \"d\": null\n  \"e\": \"NaN\",\n"
      "  \"f\": 1.5,\n  \"msg\": \"x\\\": NaN\"\n}";
  EXPECT_EQ(without_nonfinite(in), want);
}

// A job whose first timed run is slow: a disturbed run.
struct OneSlowRun final : Job {
  int timed = 0, runs = 0;
  double reported = -1;
  Backend backend() const override { return Backend::Cpu; }
  void prepare() override {}
  void run() override {
    // Runs 1 and 2 are the warm-ups; a Ceiling takes 5 more before the loop.
    if (++runs == 3) std::this_thread::sleep_for(std::chrono::milliseconds(60));
  }
  Check check() override { return {}; }
  void report(Counters& out, double seconds, std::int64_t iterations) override {
    reported = seconds / double(iterations);
    out.emplace_back("runs", runs);
  }
};

TEST(Registrar, AVariantReportsItsMeanRun) {
  OneSlowRun* seen = nullptr;
  register_job(
      RunName{"MeanRunTest", "v", {}},
      [&seen] {
        auto j = std::make_unique<OneSlowRun>();
        seen = j.get();
        return j;
      },
      RegisterOptions{})
      ->Iterations(4);
  CountRuns rep;
  benchmark::RunSpecifiedBenchmarks(&rep, "MeanRunTest/");
  ASSERT_EQ(rep.runs, 1);
  ASSERT_NE(seen, nullptr);  // kept after its instance, until released
  EXPECT_EQ(seen->runs, 2 + 4);
  EXPECT_GT(seen->reported, 0.060 / 4) << "the slow run is one of the four timed";
  release_kept_job();
}

TEST(Registrar, ACeilingTakesAtLeastFiveRunsAndTheBest) {
  OneSlowRun* seen = nullptr;
  RegisterOptions ro;
  ro.role = Role::Ceiling;
  ro.ceiling_seconds = 0;
  register_job(
      RunName{"CeilingBestTest", "c", {}},
      [&seen] {
        auto j = std::make_unique<OneSlowRun>();
        seen = j.get();
        return j;
      },
      ro)
      ->Iterations(4);
  CountRuns rep;
  benchmark::RunSpecifiedBenchmarks(&rep, "CeilingBestTest/");
  ASSERT_EQ(rep.runs, 1);
  ASSERT_NE(seen, nullptr);
  EXPECT_EQ(seen->runs, 2 + 5 + 4);
  EXPECT_GE(seen->reported, 0.0);
  EXPECT_LT(seen->reported, 0.030) << "the slow run (60 ms) is not the ceiling's";
  release_kept_job();
}

}  // namespace

// Every axis a knob adds to an instance (its counter in the JSON) is a
// declared counter, so the schema check accepts it (the gpus axis was not).
TEST(Registrar, EveryKnobAxisIsADeclaredCounter) {
  for (Knob knob : {Knob::None, Knob::Threads, Knob::Block, Knob::BlockShape, Knob::Gpus}) {
    RunName name{"F", "V", {}};
    RegisterOptions ro;
    Knobs k;
    k.threads = 2, k.block = 16, k.block_y = 8, k.gpus = 2;
    add_knob(knob, k, name, ro);
    EXPECT_EQ(ro.axes.empty(), knob == Knob::None);
    for (const auto& axis : ro.axes)
      EXPECT_TRUE(declared_counters().count(axis.first)) << axis.first << " is not declared";
  }
}

namespace {

// A job whose run takes 10 ms, whatever its size.
struct TenMsRun final : Job {
  Backend backend() const override { return Backend::Cpu; }
  void prepare() override {}
  void run() override { std::this_thread::sleep_for(std::chrono::milliseconds(10)); }
  Check check() override { return {}; }
  void report(Counters&, double, std::int64_t) override {}
};

TEST(Registrar, TheTimeCapJudgesALargerSizeByTheSpeedOfASmallerOne) {
  // Three sizes of one key (work 1, 1000, 100) with a 4 s budget: the first
  // runs (10 ms for work 1), the second would take 10 s or more at that
  // speed and is left out, saying why; the third (about 1 s, 4x slack for a
  // loaded machine's sleeps) runs. A fourth, of another key, runs although
  // it is as large as the second.
  int built = 0;
  const std::pair<const char*, double> sizes[] = {{"s1", 1}, {"s1000", 1000}, {"s100", 100}};
  for (const auto& [size, work] : sizes) {
    RegisterOptions ro;
    ro.speed_key = "TimeCapTest/v/threads:1";
    ro.work = work, ro.measure = "n", ro.call_budget = 4, ro.profile = "default";
    register_job(
        RunName{"TimeCapTest", size, {}},
        [&built] {
          ++built;
          return std::make_unique<TenMsRun>();
        },
        ro)
        ->Iterations(2);
  }
  RegisterOptions other;
  other.speed_key = "TimeCapTest/w/threads:1";
  other.work = 1000, other.measure = "n", other.call_budget = 4, other.profile = "default";
  register_job(
      RunName{"TimeCapTest", "other", {}},
      [&built] {
        ++built;
        return std::make_unique<TenMsRun>();
      },
      other)
      ->Iterations(2);
  Collect rep;
  benchmark::RunSpecifiedBenchmarks(&rep, "TimeCapTest/");
  release_kept_job();
  EXPECT_FALSE(rep.runs["s1"].flagged);
  EXPECT_TRUE(rep.runs["s1000"].flagged);
  EXPECT_NE(
      rep.runs["s1000"].message.find("unsupported: size excluded by profile 'default': at this machine's "
                                     "speed for n = 1 ("),
      std::string::npos)
      << rep.runs["s1000"].message;
  const std::string& why = rep.runs["s1000"].message;
  const auto at = why.find("a call would take about ");
  ASSERT_NE(at, std::string::npos) << why;
  EXPECT_GE(std::stod(why.substr(at + 24)), 10.0) << why;
  EXPECT_NE(why.find("the profile runs up to 4 s a call (use --profile=full)"), std::string::npos) << why;
  EXPECT_FALSE(rep.runs["s100"].flagged) << rep.runs["s100"].message;
  EXPECT_FALSE(rep.runs["other"].flagged);
  EXPECT_EQ(built, 3) << "the left-out instance builds no job";
}

}  // namespace
