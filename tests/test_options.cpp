#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/options.hpp"
#include "core/status.hpp"

using namespace pb;

namespace {
Options parse(std::vector<std::string> args, std::vector<std::string>* left = nullptr) {
  args.insert(args.begin(), "bench");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = int(args.size());
  Options o = parse_options(argc, argv.data());
  if (left) left->assign(argv.begin() + 1, argv.begin() + argc);
  return o;
}
}  // namespace

TEST(Options, SizesAcceptSquareAndTriples) {
  auto s = parse_sizes("1000x1500x777,4096");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].m, 1000);
  EXPECT_EQ(s[0].n, 1500);
  EXPECT_EQ(s[0].k, 777);
  EXPECT_EQ(s[1].str(), "4096x4096x4096");
}

TEST(Options, SizesRejectNonsense) {
  for (const char* bad :
       {"", "0", "-5", "10x20", "12xab", "1x2x3x4", "1,,2", "99999999999", "4096x0x1", "3.5"})
    EXPECT_THROW(parse_sizes(bad), UsageError) << bad;
}

TEST(Options, ListsAreValidated) {
  EXPECT_EQ(parse_int_list("--threads", "1,2,16", 1, 64), (std::vector<int>{1, 2, 16}));
  EXPECT_THROW(parse_int_list("--threads", "0", 1, 64), UsageError);
  EXPECT_THROW(parse_int_list("--threads", "4,x", 1, 64), UsageError);
  EXPECT_THROW(parse_word_list("--op", "AB,XY", {"AB", "AtB"}), UsageError);
}

TEST(Options, ParbenchFlagsAreConsumedAndBenchmarkFlagsKept) {
  std::vector<std::string> left;
  auto o = parse({"--profile=smoke", "--benchmark_filter=GEMM", "--sizes=8x9x10", "--threads=1,3",
                  "--precision=f64", "--op=AtB", "--flush-l2", "--gpu-idle-start", "--seed=5", "--block=16"},
                 &left);
  EXPECT_EQ(o.profile, Profile::Smoke);
  ASSERT_TRUE(o.sizes);
  EXPECT_EQ((*o.sizes)[0].str(), "8x9x10");
  EXPECT_EQ(*o.threads, (std::vector<int>{1, 3}));
  EXPECT_EQ(*o.precisions, std::vector<std::string>{"f64"});
  EXPECT_EQ(*o.ops, std::vector<std::string>{"AtB"});
  EXPECT_EQ(*o.blocks, std::vector<int>{16});
  EXPECT_TRUE(o.flush_l2);
  EXPECT_TRUE(o.gpu_idle_start);
  EXPECT_FALSE(parse({}).gpu_idle_start);
  EXPECT_EQ(o.seed, 5u);
  EXPECT_EQ(left, std::vector<std::string>{"--benchmark_filter=GEMM"});
}

TEST(Options, ThreadsCoresIsTheHostsCoreCount) {
  EXPECT_EQ(*parse({"--threads=cores"}).threads, std::vector<int>{core_count()});
  EXPECT_EQ(*parse({"--threads=1,cores"}).threads, (std::vector<int>{1, core_count()}));
  EXPECT_EQ(default_thread_axis().back(), core_count());
  EXPECT_THROW(parse({"--threads=core"}), UsageError);
}

TEST(Options, UnknownFlagsAndValuesAreUsageErrors) {
  EXPECT_THROW(parse({"--profile=huge"}), UsageError);
  EXPECT_THROW(parse({"--precision=f16"}), UsageError);
  EXPECT_THROW(parse({"--frobnicate"}), UsageError);
  EXPECT_THROW(parse({"--sizes"}), UsageError);
}

TEST(Options, DefaultThreadAxisEndsAtCoreCount) {
  auto t = default_thread_axis();
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(t.front(), 1);
  EXPECT_EQ(t.back(), core_count());
}
