#include <gtest/gtest.h>

#include "core/run_name.hpp"
#include "core/status.hpp"

using namespace pb;

TEST(RunName, Formats) {
  RunName n{"GEMM", "CUDA.Tiled", {{"op", "AB"}, {"type", "f32"}, {"M", "64"}, {"block", "16"}}};
  EXPECT_EQ(n.format(), "GEMM/CUDA.Tiled/op:AB/type:f32/M:64/block:16");
  ASSERT_NE(n.get("block"), nullptr);
  EXPECT_EQ(*n.get("block"), "16");
  EXPECT_EQ(n.get("threads"), nullptr);
}

TEST(RunName, TokensHoldNoSeparator) {
  EXPECT_FALSE(valid_token("a/b"));
  EXPECT_FALSE(valid_token("a:b"));
  EXPECT_TRUE(valid_token("CUDA.RegBlock"));
}
