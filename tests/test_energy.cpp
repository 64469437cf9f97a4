// Energy metering (core/energy.hpp): the stepped counter's window, power
// integration, RAPL's zones and wrap-around, the counters and the per-joule
// companions, each with exact numbers; and every way a counter fails gives
// a reason, never a figure.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "core/energy.hpp"
#include "core/meta.hpp"
#include "core/registrar.hpp"

using namespace pb;
using namespace pb::energy;

namespace {

// A counter that moves by 10 J every 100 ms (100 W), polled every 1 ms from
// t = 0 to t = end: the value a poll at t reads is the energy as of the last
// step, 10 J x floor(t / 0.1).
std::vector<Sample> stepped_polls(double end) {
  std::vector<Sample> out;
  for (int i = 0; i * 1e-3 <= end + 1e-12; ++i) out.push_back({i * 1e-3, 10.0 * (i / 100)});
  return out;
}
// Calls of `len` seconds back to back over [from, to].
std::vector<Call> back_to_back(double from, double to, double len) {
  std::vector<Call> out;
  for (int i = 0; from + (i + 1) * len <= to + 1e-12; ++i)
    out.push_back({from + i * len, from + (i + 1) * len});
  return out;
}

TEST(Energy, SteppedWindowRunsFromStepToStep) {
  // Steps seen at the polls t = 0.1, 0.2, ... (the poll before each at
  // 0.099 ...): each placed at the midpoint, 0.0995 ..., +- 0.0005 s.
  struct Case {
    double from, to, len;            // the calls
    double window, calls, per_call;  // what the window holds
  };
  const Case cases[] = {
      // 2 ms calls on to 0.52, short of the next step: 0.0995 .. 0.4995, 40 J, 200 calls.
      {0.0, 0.52, 0.002, 0.4, 200.0, 0.2},
      // 30 ms calls from 0.005: the ends (0.0995, 0.3995) cut the calls that
      // span them; 0.3 s of calls is 10.
      {0.005, 0.455, 0.03, 0.3, 10.0, 3.0},
  };
  for (const Case& c : cases) {
    const Result r = stepped_window(stepped_polls(0.6), back_to_back(c.from, c.to, c.len));
    ASSERT_TRUE(r.ok) << r.reason;
    EXPECT_NEAR(r.window_s, c.window, 1e-12);
    EXPECT_NEAR(r.calls, c.calls, 1e-9);
    EXPECT_NEAR(r.joules_per_call, c.per_call, 1e-9);
    EXPECT_NEAR(r.watts, 100.0, 1e-9);
    EXPECT_NEAR(r.error_bound, 0.001 / c.window, 1e-12);
  }
}

TEST(Energy, SteppedWindowBracketsEachStepWithTheReadBefore) {
  // Each read took 0.4 ms before returning at t: a step seen by the read
  // returning at 0.1 lies in (0.099 - 0.0004, 0.1), placed at 0.0993 +-
  // 0.0007 s. Both ends move alike, so the window keeps its 0.4 s and 40 J;
  // the bound is the two half spans, 1.4 ms, over it.
  auto polls = stepped_polls(0.6);
  for (auto& p : polls) p.read_s = 0.0004;
  const Result r = stepped_window(polls, back_to_back(0.0, 0.52, 0.002));
  ASSERT_TRUE(r.ok) << r.reason;
  EXPECT_NEAR(r.window_s, 0.4, 1e-12);
  EXPECT_NEAR(r.calls, 200.0, 1e-9);
  EXPECT_NEAR(r.joules_per_call, 0.2, 1e-9);
  EXPECT_NEAR(r.error_bound, 0.0014 / 0.4, 1e-12);
}

TEST(Energy, SteppedWindowTooShortSaysWhy) {
  const Result r = stepped_window(stepped_polls(0.5), back_to_back(0.05, 0.17, 0.01));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.reason.find("1 step(s) of the energy counter, fewer than two"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("about every 100 ms"), std::string::npos) << r.reason;
}

TEST(Energy, CounterGoingBackwardsGivesNoFigure) {
  auto polls = stepped_polls(0.6);
  polls[300].value = 1.0;  // 20 J at the poll before
  const Result r = stepped_window(polls, back_to_back(0.0, 0.5, 0.002));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.reason.find("went backwards (20.000 J, then 1.000 J)"), std::string::npos) << r.reason;
  EXPECT_FALSE(stepped_window(stepped_polls(0.6), {}).ok);
}

TEST(Energy, PowerSamplesIntegrated) {
  // Samples every 10 ms, 100 W up to 0.49 s and 300 W from 0.50 s: the
  // trapezoids over 0 .. 1 s give 100 x 0.49 + 200 x 0.01 (the ramp between
  // 0.49 and 0.50) + 300 x 0.5 = 201 J.
  std::vector<Sample> w;
  for (int i = 0; i <= 100; ++i) w.push_back({i * 0.01, i < 50 ? 100.0 : 300.0});
  const Result r = integrated_power(w, back_to_back(0.0, 1.0, 0.1));
  ASSERT_TRUE(r.ok) << r.reason;
  EXPECT_NEAR(r.calls, 10.0, 1e-12);
  EXPECT_NEAR(r.joules_per_call * r.calls, 100 * 0.49 + (100 + 300) / 2.0 * 0.01 + 300 * 0.5, 1e-9);
  EXPECT_LT(r.error_bound, 0);  // no bound from samples
  EXPECT_FALSE(integrated_power({{0.5, 100}}, back_to_back(0.0, 1.0, 0.1)).ok);
}

TEST(Energy, SeveralGpusSummed) {
  Result a, b;
  a.ok = b.ok = true;
  a.source = b.source = "NVML total energy";
  a.joules_per_call = 2.5, a.watts = 250, a.window_s = 0.8, a.calls = 320, a.error_bound = 0.004;
  b.joules_per_call = 1.5, b.watts = 150, b.window_s = 0.7, b.calls = 280, b.error_bound = 0.01;
  const Result s = sum({a, b});
  ASSERT_TRUE(s.ok) << s.reason;
  EXPECT_DOUBLE_EQ(s.joules_per_call, 4.0);
  EXPECT_DOUBLE_EQ(s.watts, 400.0);
  EXPECT_DOUBLE_EQ(s.window_s, 0.7);
  EXPECT_DOUBLE_EQ(s.calls, 280.0);
  EXPECT_DOUBLE_EQ(s.error_bound, 0.01);
  EXPECT_EQ(s.source, "NVML total energy, 2 GPUs summed");
  // One device alone is itself.
  const Result one = sum({b});
  EXPECT_TRUE(one.ok);
  EXPECT_DOUBLE_EQ(one.joules_per_call, 1.5);
  EXPECT_EQ(one.source, "NVML total energy");
  // A device without a bound leaves the sum without one.
  Result c = b;
  c.error_bound = -1;
  EXPECT_DOUBLE_EQ(sum({a, c}).error_bound, -1.0);
  // A device without a figure: none, saying which.
  Result d;
  d.reason = "fewer than two counter steps inside the calls";
  const Result no = sum({a, d});
  EXPECT_FALSE(no.ok);
  EXPECT_EQ(no.reason, "GPU 1: fewer than two counter steps inside the calls");
  EXPECT_FALSE(sum({}).ok);
}

TEST(Energy, WrappedDelta) {
  EXPECT_DOUBLE_EQ(wrapped_delta(5, 10, 0), 5);
  EXPECT_DOUBLE_EQ(wrapped_delta(262000, 10, 262143), 153);  // once round
  EXPECT_LT(wrapped_delta(10, 5, 0), 0);                     // backwards, nothing to wrap at
}

struct FakePowercap {
  std::string root;
  FakePowercap() {
    char tmpl[] = "/tmp/parbench-rapl-XXXXXX";
    root = mkdtemp(tmpl);
  }
  ~FakePowercap() { std::system(("rm -rf " + root).c_str()); }
  void zone(const std::string& z, const std::string& name, double uj, double range_uj) {
    mkdir((root + "/" + z).c_str(), 0755);
    write(z + "/name", name);
    write(z + "/energy_uj", std::to_string(static_cast<long long>(uj)));
    write(z + "/max_energy_range_uj", std::to_string(static_cast<long long>(range_uj)));
  }
  void write(const std::string& file, const std::string& text) {
    std::ofstream(root + "/" + file) << text << "\n";
  }
};

TEST(Energy, RaplPackagesAndDramWithWrapAround) {
  FakePowercap pc;
  pc.zone("intel-rapl:0", "package-0", 1.9e6, 2e6);
  pc.zone("intel-rapl:0:0", "core", 5e5, 2e6);  // inside the package: not added
  pc.zone("intel-rapl:0:1", "dram", 2e6, 6e6);
  const Rapl rapl = find_rapl(pc.root);
  ASSERT_EQ(rapl.domains.size(), 2u) << rapl.reason;
  EXPECT_EQ(rapl.domains[0].name, "package-0");
  EXPECT_EQ(rapl.domains[1].name, "dram");
  EXPECT_DOUBLE_EQ(rapl.domains[0].range_j, 2.0);
  auto meter = make_rapl_meter(pc.root);
  EXPECT_TRUE(meter->reads());
  meter->begin();
  for (int i = 0; i < 4; ++i) meter->call(0, 0);
  pc.write("intel-rapl:0/energy_uj", "400000");     // wrapped: 0.1 J to the top, 0.4 J after
  pc.write("intel-rapl:0:1/energy_uj", "3500000");  // 1.5 J
  const Result r = meter->end();
  ASSERT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.source, "RAPL");
  EXPECT_NEAR(r.joules_per_call, 2.0 / 4, 1e-12);
  EXPECT_GT(r.window_s, 0);
  EXPECT_NEAR(r.error_bound, 2e-3 / r.window_s, 1e-12);
}

TEST(Energy, RaplFailuresSayWhy) {
  EXPECT_NE(find_rapl("/nonexistent-powercap").reason.find("no powercap interface"), std::string::npos);
  FakePowercap empty;
  EXPECT_NE(find_rapl(empty.root).reason.find("no RAPL package or DRAM zone"), std::string::npos);
  auto none = make_rapl_meter("/nonexistent-powercap");
  EXPECT_FALSE(none->reads());  // the loop takes no clock reads for it
  EXPECT_FALSE(make_unavailable_meter("why")->reads());
  none->begin();
  none->call(0, 1);
  const Result r = none->end();
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.reason.find("no powercap interface"), std::string::npos);
  // A counter that cannot be read (a folder where the file should be), and
  // one that holds no number.
  FakePowercap bad;
  bad.zone("intel-rapl:0", "package-0", 1e6, 2e6);
  std::remove((bad.root + "/intel-rapl:0/energy_uj").c_str());
  mkdir((bad.root + "/intel-rapl:0/energy_uj").c_str(), 0755);
  double j = 0;
  std::string why;
  EXPECT_FALSE(read_joules(find_rapl(bad.root).domains.at(0), j, why));
  EXPECT_NE(why.find("cannot read"), std::string::npos) << why;
  FakePowercap text;
  text.zone("intel-rapl:0", "package-0", 1e6, 2e6);
  text.write("intel-rapl:0/energy_uj", "n/a");
  EXPECT_FALSE(read_joules(find_rapl(text.root).domains.at(0), j, why));
  EXPECT_NE(why.find("does not hold a number"), std::string::npos) << why;
  // Backwards without a range to wrap at.
  FakePowercap back;
  back.zone("intel-rapl:0", "package-0", 1e6, 0);
  auto m = make_rapl_meter(back.root);
  m->begin();
  m->call(0, 1);
  back.write("intel-rapl:0/energy_uj", "10");
  const Result b = m->end();
  EXPECT_FALSE(b.ok);
  EXPECT_NE(b.reason.find("went backwards"), std::string::npos) << b.reason;
}

TEST(Energy, PerJouleNamesAndUnits) {
  EXPECT_EQ(per_joule_name("elements_per_second"), "elements_per_J");
  EXPECT_EQ(per_joule_name("GFLOPS"), "GFLOP_per_J");
  EXPECT_EQ(per_joule_name("busbw_GBps"), "busbw_GB_per_J");
  EXPECT_EQ(per_joule_name("frames"), "frames_per_W");
  EXPECT_EQ(per_joule_name("comm_GBps"), "");
  EXPECT_EQ(per_joule_name("GFLOP_per_J"), "");
  EXPECT_EQ(per_joule_unit("GFLOP/s"), "GFLOP/J");
  EXPECT_EQ(per_joule_unit("1/s"), "1/J");
  declare_counter("test_things_per_second", CounterKind::Rate, "things/s");
  const auto& d = declared_counters();
  ASSERT_TRUE(d.count("test_things_per_J"));
  EXPECT_EQ(d.at("test_things_per_J").unit, "things/J");
  EXPECT_EQ(d.at("test_things_per_J").kind, CounterKind::Rate);
}

TEST(Energy, CountersFromAResult) {
  declare_counter("test_things_per_second", CounterKind::Rate, "things/s");
  Result r;
  r.ok = true;
  r.source = "NVML total energy";
  r.joules_per_call = 2, r.watts = 100, r.window_s = 0.5, r.error_bound = 0.01;
  Counters out{{"test_things_per_second", 50.0}, {"comm_GBps", 7.0}, {"bytes_per_call", 1.0}};
  EXPECT_EQ(add_energy_counters(out, r, 0.02), "NVML total energy");
  std::map<std::string, double> got(out.begin(), out.end());
  EXPECT_DOUBLE_EQ(got.at("joules_per_call"), 2);
  EXPECT_DOUBLE_EQ(got.at("watts"), 100);
  EXPECT_DOUBLE_EQ(got.at("energy_window_s"), 0.5);
  EXPECT_DOUBLE_EQ(got.at("energy_error_bound"), 0.01);
  EXPECT_DOUBLE_EQ(got.at("test_things_per_J"), 50 * 0.02 / 2);  // 1 thing a call, 2 J a call
  EXPECT_FALSE(got.count("comm_GB_per_J"));
  r.error_bound = 0.05;
  Counters more;
  EXPECT_EQ(add_energy_counters(more, r, 0.02),
            "NVML total energy (error bound 5.0%, over 2%: the 0.500 s window is too short)");
  r.error_bound = -1;
  Counters sampled;
  EXPECT_EQ(add_energy_counters(sampled, r, 0.02), "NVML total energy (no error bound)");
  Result none;
  none.source = "RAPL";
  none.reason = "permission denied";
  Counters nothing;
  EXPECT_EQ(add_energy_counters(nothing, none, 0.02), "unavailable: RAPL: permission denied");
  EXPECT_TRUE(nothing.empty());
}

}  // namespace
