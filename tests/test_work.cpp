// Throughput declared once (core/work.hpp): the counters a Throughput makes
// from a Job's Work, their names, units and exact values, and what the
// registrar writes for an instance that declares one.
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "core/meta.hpp"
#include "core/registrar.hpp"
#include "core/work.hpp"

using namespace pb;

namespace {

std::map<std::string, double> as_map(const Counters& c) {
  std::map<std::string, double> m;
  for (const auto& [k, v] : c) m[k] = v;
  return m;
}

// A CPU job of 1000 items and 4000 bytes a run, and one counter of its own.
struct WorkJob final : Job {
  Backend backend() const override { return Backend::Cpu; }
  void prepare() override {}
  void run() override {
    volatile double x = 0;
    for (int i = 0; i < 1000; ++i) x = x + i;  // something to time
  }
  Check check() override { return Check{}; }
  Work work() const override {
    Work w;
    w.items = 1000;
    w.bytes = 4000;
    return w;
  }
  void report(Counters& out, double, std::int64_t) override { out.emplace_back("test_own", 7); }
};

struct Counted : benchmark::BenchmarkReporter {
  std::map<std::string, double> counters;
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& rs) override {
    for (const auto& r : rs)
      for (const auto& [k, c] : r.counters) counters[k] = c.value;
  }
};

}  // namespace

TEST(Work, ItemsAndBytesAsRates) {
  // 1000 elements and 8000 bytes in 0.5 ms: 2e6 elements/s and 16 GB/s.
  Work w;
  w.items = 1000;
  w.bytes = 8000;
  Counters out;
  Throughput().items("elements").bytes(Show::Rate).add(out, w, 0.0005);
  const auto m = as_map(out);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_DOUBLE_EQ(m.at("elements_per_second"), 2e6);
  EXPECT_DOUBLE_EQ(m.at("GBps"), 0.016);
}

TEST(Work, ModelCountersPerCallAndRates) {
  // A GEMM of 2 GFLOP a call and 3 MB at least, one call in 0.25 s.
  Work w;
  w.flops = 2e9;
  w.bytes = 3e6;
  Counters out;
  Throughput().bytes(Show::Model).flops(Show::RateAndModel).add(out, w, 0.25);
  const auto m = as_map(out);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_DOUBLE_EQ(m.at("GFLOPS"), 8.0);
  EXPECT_EQ(m.at("flops_per_call"), 2e9);
  EXPECT_EQ(m.at("bytes_per_call"), 3e6);
  EXPECT_EQ(m.count("GBps"), 0u) << "bytes shown as a model only";
}

TEST(Work, UnitsOfACallScaleTheRatesNotTheModel) {
  // k-means: 4 MB read an iteration, 5 iterations a run of 0.01 s: 2 GB/s;
  // the model counter stays per iteration.
  Work w;
  w.bytes = 4e6;
  w.flops = 1e6;
  w.units = 5;
  Counters out;
  Throughput().bytes(Show::RateAndModel).flops(Show::Model).per("iteration").add(out, w, 0.01);
  const auto m = as_map(out);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_DOUBLE_EQ(m.at("GBps"), 2.0);
  EXPECT_EQ(m.at("bytes_per_iteration"), 4e6);
  EXPECT_EQ(m.at("flops_per_iteration"), 1e6);
}

TEST(Work, NoTimedRunGivesZeroRates) {
  Work w;
  w.items = 10, w.bytes = 10, w.flops = 10;
  Counters out;
  Throughput().items("updates").bytes(Show::Rate).flops(Show::Rate).add(out, w, 0.0);
  for (const auto& [name, v] : out) EXPECT_EQ(v, 0.0) << name;
  EXPECT_EQ(per_second(5, 0), 0.0);
  EXPECT_EQ(per_second(5, 2), 2.5);
}

TEST(Work, EmptyThroughputMakesNothing) {
  Work w;
  w.items = 1;
  Counters out;
  Throughput t;
  EXPECT_TRUE(t.empty());
  t.add(out, w, 1.0);
  EXPECT_TRUE(out.empty());
}

TEST(Work, DeclaresEachCounterWithItsKindAndUnit) {
  Throughput()
      .items("test_widgets")
      .bytes(Show::RateAndModel)
      .flops(Show::RateAndModel)
      .per("test_step")
      .declare();
  const auto& d = declared_counters();
  ASSERT_TRUE(d.count("test_widgets_per_second"));
  EXPECT_EQ(d.at("test_widgets_per_second").kind, CounterKind::Rate);
  EXPECT_EQ(d.at("test_widgets_per_second").unit, "1/s");
  EXPECT_EQ(d.at("GBps").unit, "GB/s");
  EXPECT_EQ(d.at("GFLOPS").unit, "GFLOP/s");
  EXPECT_EQ(d.at("bytes_per_test_step").kind, CounterKind::Model);
  EXPECT_EQ(d.at("bytes_per_test_step").unit, "B");
  EXPECT_EQ(d.at("flops_per_test_step").unit, "flop");
  // A rate's per-joule companion comes with it (meta.hpp).
  EXPECT_TRUE(d.count("test_widgets_per_J"));
  EXPECT_TRUE(d.count("GB_per_J"));
}

TEST(Work, RegistrarWritesTheRatesOfTheJobsWork) {
  RegisterOptions ro;
  ro.throughput = Throughput().items("test_items").bytes(Show::RateAndModel);
  register_job(
      RunName{"WorkTest", "job", {}}, [] { return std::make_unique<WorkJob>(); }, ro)
      ->Iterations(20);
  ASSERT_TRUE(declared_counters().count("test_items_per_second")) << "declared when registered";
  Counted rep;
  benchmark::RunSpecifiedBenchmarks(&rep, "WorkTest/");
  const auto& c = rep.counters;
  ASSERT_TRUE(c.count("seconds_per_call"));
  const double s = c.at("seconds_per_call");
  ASSERT_GT(s, 0.0);
  EXPECT_NEAR(c.at("test_items_per_second") * s, 1000.0, 1e-9 * 1000);
  EXPECT_NEAR(c.at("GBps") * 1e9 * s, 4000.0, 1e-9 * 4000);
  EXPECT_EQ(c.at("bytes_per_call"), 4000.0);
  EXPECT_EQ(c.at("test_own"), 7.0) << "report() adds the job's own counters";
}
