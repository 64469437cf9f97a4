// Google Benchmark's flags as bench checks them (core/gb_flags.hpp), for the
// library of either spelling of --benchmark_min_time, whichever this build has.
#include <gtest/gtest.h>

#include <cstdlib>
#include <deque>
#include <string>
#include <vector>

#include "core/gb_flags.hpp"
#include "core/status.hpp"

using pb::UsageError;
using pb::gb_flags::checked;

namespace {

// The message of the UsageError that checked() throws, or "" when it passes.
std::string refusal(const std::string& name, const std::string& value, bool suffix = true) {
  try {
    checked(name, value, suffix);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(GbFlags, MinTimeInEitherSpellingForEitherLibrary) {
  // 1.8 reads "<seconds>s" and "<count>x"; 1.7 a bare number of seconds.
  EXPECT_EQ(checked("benchmark_min_time", "0.02", true), "0.02s");
  EXPECT_EQ(checked("benchmark_min_time", "0.02s", true), "0.02s");
  EXPECT_EQ(checked("benchmark_min_time", "100x", true), "100x");
  EXPECT_EQ(checked("benchmark_min_time", "0.02", false), "0.02");
  EXPECT_EQ(checked("benchmark_min_time", "0.02s", false), "0.02");
  EXPECT_EQ(checked("benchmark_min_time", "2", false), "2");
  EXPECT_EQ(checked("benchmark_min_time", "1e-2s", false), "1e-2");
  EXPECT_EQ(checked("benchmark_min_time", ".5", true), ".5s");
  EXPECT_EQ(
      refusal("benchmark_min_time", "100x", false),
      "--benchmark_min_time=100x: iterations (NNx) need Google Benchmark 1.8 or later, and this bench is "
      "built with an older one: give seconds, e.g. 0.5");
  for (const char* v :
       {"", "s", "x", "0.02ms", "-1", "0", "0s", "nan", "inf", "1e9", "2.5x", "0x", "0.02 s", "0x10", "1,5"})
    EXPECT_NE(refusal("benchmark_min_time", v), "") << v;
  EXPECT_EQ(refusal("benchmark_min_time", "0.02ms"),
            "--benchmark_min_time=0.02ms: not seconds (0.5 or 0.5s) or iterations (100x)");
}

TEST(GbFlags, ChoicesBooleansAndCounts) {
  EXPECT_EQ(refusal("benchmark_format", "xml"),
            "--benchmark_format=xml: unknown value (one of console, json, csv)");
  EXPECT_EQ(refusal("benchmark_out_format", "xml"),
            "--benchmark_out_format=xml: unknown value (one of console, json, csv)");
  EXPECT_EQ(refusal("benchmark_time_unit", "hours"),
            "--benchmark_time_unit=hours: unknown value (one of ns, us, ms, s)");
  for (const char* v : {"json", "console", "csv"}) EXPECT_EQ(refusal("benchmark_format", v), "") << v;
  // The library compares the format and the unit exactly, and exits 0 with its usage otherwise.
  EXPECT_NE(refusal("benchmark_format", "JSON"), "");
  EXPECT_NE(refusal("benchmark_time_unit", "MS"), "");
  for (const char* v : {"ns", "us", "ms", "s"}) EXPECT_EQ(refusal("benchmark_time_unit", v), "") << v;
  for (const char* v : {"true", "false", "yes", "no", "on", "off", "1", "0", "T", "n"})
    EXPECT_EQ(refusal("benchmark_report_aggregates_only", v), "") << v;
  EXPECT_EQ(refusal("benchmark_list_tests", "maybe"),
            "--benchmark_list_tests=maybe: not a boolean (true or false)");
  EXPECT_EQ(refusal("benchmark_color", "auto"), "");
  EXPECT_NE(refusal("benchmark_color", "sometimes"), "");
  EXPECT_EQ(refusal("benchmark_repetitions", "10"), "");
  for (const char* v : {"0", "-3", "", "ten", "1.5", "10000000"})
    EXPECT_EQ(refusal("benchmark_repetitions", v),
              "--benchmark_repetitions=" + std::string(v) + ": not a count of at least 1")
        << v;
  EXPECT_EQ(refusal("v", "2"), "");
  EXPECT_NE(refusal("v", "-1"), "");
  EXPECT_EQ(refusal("benchmark_min_warmup_time", "0.5"), "");
  EXPECT_NE(refusal("benchmark_min_warmup_time", "0.5s"), "");
  EXPECT_EQ(refusal("benchmark_context", "a=1,b=two"), "");
  for (const char* v : {"a", "=1", "a=1,", "a=1,,b=2"}) EXPECT_NE(refusal("benchmark_context", v), "") << v;
  // Flags it does not check pass unchanged: parbench's own, a filter.
  EXPECT_EQ(checked("benchmark_filter", "GEMM(", true), "GEMM(");
  EXPECT_EQ(checked("profile", "anything", true), "anything");
}

TEST(GbFlags, ArgumentsAndEnvironmentRewrittenInPlace) {
  std::vector<std::string> args = {"bench", "--benchmark_min_time=0.02s", "--profile=smoke",
                                   "--benchmark_min_time", "--benchmark_format=json"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::deque<std::string> storage;
  pb::gb_flags::check(int(args.size()), argv.data(), false, storage);
  EXPECT_EQ(std::string(argv[1]), "--benchmark_min_time=0.02");
  EXPECT_EQ(std::string(argv[2]), "--profile=smoke");
  EXPECT_EQ(std::string(argv[3]), "--benchmark_min_time");
  EXPECT_EQ(storage.size(), 1u);

  std::string bad = "--benchmark_time_unit=hours";
  char* one[] = {args[0].data(), bad.data(), nullptr};
  EXPECT_THROW(pb::gb_flags::check(2, one, true, storage), UsageError);

  setenv("BENCHMARK_MIN_TIME", "0.5", 1);
  pb::gb_flags::check(1, argv.data(), true, storage);
  EXPECT_STREQ(std::getenv("BENCHMARK_MIN_TIME"), "0.5s");
  setenv("BENCHMARK_FORMAT", "xml", 1);
  try {
    pb::gb_flags::check(1, argv.data(), true, storage);
    ADD_FAILURE() << "BENCHMARK_FORMAT=xml passed";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "BENCHMARK_FORMAT=xml: unknown value (one of console, json, csv)");
  }
  unsetenv("BENCHMARK_FORMAT");
  unsetenv("BENCHMARK_MIN_TIME");
}
