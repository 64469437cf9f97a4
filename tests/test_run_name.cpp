#include <gtest/gtest.h>

#include "core/run_name.hpp"
#include "core/status.hpp"

using namespace pb;

TEST(RunName, FormatsAndParsesBack) {
  RunName n{"GEMM", "CUDA.Tiled", {{"op", "AB"}, {"type", "f32"}, {"M", "64"}, {"block", "16"}}, "", ""};
  EXPECT_EQ(n.format(), "GEMM/CUDA.Tiled/op:AB/type:f32/M:64/block:16");
  auto p = parse_run_name(n.format() + "/manual_time");
  EXPECT_EQ(p.family, "GEMM");
  EXPECT_EQ(p.variant, "CUDA.Tiled");
  EXPECT_EQ(p.args, n.args);
  EXPECT_EQ(p.time_kind, "manual_time");
  EXPECT_EQ(p.aggregate, "");
  ASSERT_NE(p.get("block"), nullptr);
  EXPECT_EQ(*p.get("block"), "16");
  EXPECT_EQ(p.get("threads"), nullptr);
}

TEST(RunName, ReadsAggregateSuffixes) {
  for (const char* agg : {"mean", "median", "stddev", "cv"}) {
    auto p = parse_run_name(std::string("GEMM/OMP/M:8/threads:4/manual_time_") + agg);
    EXPECT_EQ(p.aggregate, agg);
    EXPECT_EQ(p.time_kind, "manual_time");
    EXPECT_EQ(*p.get("threads"), "4");
  }
  auto p = parse_run_name("GEMM/OMP/M:8/threads:4_median");
  EXPECT_EQ(p.aggregate, "median");
  EXPECT_EQ(*p.get("threads"), "4");
}

TEST(RunName, RejectsNamesOutsideTheGrammar) {
  EXPECT_THROW(parse_run_name("GEMM"), UsageError);
  EXPECT_THROW(parse_run_name("GEMM/OMP/threads"), UsageError);
  EXPECT_THROW(parse_run_name("GEMM/OMP/:4"), UsageError);
  EXPECT_THROW(parse_run_name("GEMM//M:4"), UsageError);
  EXPECT_FALSE(valid_token("a/b"));
  EXPECT_FALSE(valid_token("a:b"));
  EXPECT_TRUE(valid_token("CUDA.RegBlock"));
}
