// Fixtures are the ground every check stands on: pin their output so a
// change to a generator is a deliberate, versioned event (fixtures::kVersion).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "fixtures/fixtures.hpp"
#include "gemm/gemm.hpp"

using namespace pb;

TEST(Fixtures, HashIsPinned) {
  // SplitMix64 reference outputs for seed 0: the first values of the
  // published generator started from state 0.
  EXPECT_EQ(fixtures::hash(0, 0), 0xe220a8397b1dcdafull);
  EXPECT_EQ(fixtures::hash(0, 1), 0x6e789e6aa1b965f4ull);
  EXPECT_EQ(fixtures::hash(0, 2), 0x06c45d188009454full);
}

TEST(Fixtures, GoldenChecksums) {
  std::vector<float> f(1000);
  std::vector<double> d(1000);
  fixtures::fill_uniform(f.data(), f.size(), 42);
  fixtures::fill_uniform(d.data(), d.size(), 42);
  EXPECT_EQ(fixtures::checksum(f.data(), f.size() * sizeof(float)), 0x7d39a3d5e528f5c1ull);
  EXPECT_EQ(fixtures::checksum(d.data(), d.size() * sizeof(double)), 0x9efd37e85f77e065ull);
  EXPECT_EQ(fixtures::seed_for(1, "gemm.AB.f32.A", {4, 5, 6}), 0x9bc1e92c7a4cea0bull);
}

TEST(Fixtures, NoZerosAndInRange) {
  std::vector<float> f(1 << 20);
  fixtures::fill_uniform(f.data(), f.size(), 7);
  double sum = 0;
  for (float v : f) {
    ASSERT_NE(v, 0.0f);
    ASSERT_GT(v, -1.0f);
    ASSERT_LT(v, 1.0f);
    sum += v;
  }
  EXPECT_LT(std::fabs(sum / f.size()), 0.01);  // mean of 2^20 U(-1,1): sd 5.6e-4
}

TEST(Fixtures, ValueDependsOnlyOnSeedAndIndex) {
  std::vector<double> whole(100), tail(40);
  fixtures::fill_uniform(whole.data(), whole.size(), 99);
  for (int i = 0; i < 40; ++i) tail[i] = fixtures::unit_symmetric(fixtures::hash(99, 60 + i));
  for (int i = 0; i < 40; ++i) EXPECT_EQ(whole[60 + i], tail[i]);
}

TEST(Fixtures, SeedDependsOnNameShapeAndBase) {
  auto s = fixtures::seed_for(1, "x", {2, 3});
  EXPECT_NE(s, fixtures::seed_for(2, "x", {2, 3}));
  EXPECT_NE(s, fixtures::seed_for(1, "y", {2, 3}));
  EXPECT_NE(s, fixtures::seed_for(1, "x", {3, 2}));
  EXPECT_EQ(s, fixtures::seed_for(1, "x", {2, 3}));
}

TEST(Fixtures, GemmInputsAreDeterministicAndDistinct) {
  gemm::Problem p{gemm::Op::ABtC, 7, 9, 5};
  auto a = gemm::make_inputs<float>(p, 3), b = gemm::make_inputs<float>(p, 3);
  EXPECT_EQ(a.a, b.a);
  EXPECT_EQ(a.b, b.b);
  EXPECT_EQ(a.c, b.c);
  ASSERT_EQ(a.c.size(), 63u);
  EXPECT_NE(a.a[0], a.b[0]);  // operands are seeded separately
  auto other = gemm::make_inputs<float>(p, 4);
  EXPECT_NE(a.a, other.a);
}
