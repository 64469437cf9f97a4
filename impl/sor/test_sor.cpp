// Red-black SOR: the reference against mathematics (the analytic problem's
// discretisation error falls as h^2) and against an independent point-by-point
// red-black Gauss-Seidel; every registered variant with each knob value
// against the reference on odd, non-square and tiny grids, both fields,
// prepared twice; the verifier against broken fields (a missed halo exchange
// among them); bad problems.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/gpu.hpp"
#include "sor/registry.hpp"
#include "sor/sor.hpp"
#include "tests/gpu_test.hpp"
#include "tests/variant_cases.hpp"

using namespace pb;
using namespace pb::sor;

namespace {

using pb::testing::VariantCase;
std::vector<VariantCase> all_variants() { return pb::testing::variant_cases(registry(), 32, 256); }

Problem make(std::int64_t m, std::int64_t n, int sweeps, double omega, Field f) {
  Problem p;
  p.m = m, p.n = n, p.sweeps = sweeps, p.omega = omega, p.field = f;
  return p;
}

// Max |u - exact| over the interior of the analytic problem after solving to
// a residual far below the discretisation error.
double analytic_error(std::int64_t m, std::int64_t n) {
  // The optimal omega of the model problem for the larger side.
  const double h = 1.0 / double(std::max(m, n) - 1);
  Problem p = make(m, n, 200000, 2.0 / (1.0 + std::sin(std::acos(-1.0) * h)), Field::Analytic);
  auto u = make_inputs(p, 7).u0;
  const int done = solve(p, u, 0, 1e-13, 10);
  EXPECT_LT(done, p.sweeps) << "did not converge on " << p.str();
  double worst = 0;
  for (std::int64_t i = 1; i < m - 1; ++i)
    for (std::int64_t j = 1; j < n - 1; ++j)
      worst = std::max(worst, std::fabs(u[std::size_t(i * n + j)] -
                                        analytic_solution(double(i) * p.step_x(), double(j) * p.step_y())));
  return worst;
}

TEST(SorReference, DiscretisationErrorFallsAsHSquared) {
  // Square grids and grids with h1 != h2 (r != 1): halving h divides the error by about 4.
  for (auto [m, n] : {std::pair<int, int>{17, 17}, {17, 33}}) {
    const double e1 = analytic_error(m, n), e2 = analytic_error(2 * m - 1, 2 * n - 1),
                 e3 = analytic_error(4 * m - 3, 4 * n - 3);
    EXPECT_GT(e1, 1e-6) << "an error this small means the test measures nothing";
    EXPECT_NEAR(e1 / e2, 4.0, 0.5) << m << "x" << n << ": " << e1 << " then " << e2;
    EXPECT_NEAR(e2 / e3, 4.0, 0.3) << m << "x" << n << ": " << e2 << " then " << e3;
  }
}

TEST(SorReference, MatchesPointByPointGaussSeidel) {
  // Written differently from sweep(): every point visited in row order, its
  // colour tested, the neighbours read through (i, j).
  for (Field f : {Field::Vortex, Field::Analytic}) {
    Problem p = make(23, 18, 5, 1.3, f);
    auto in = make_inputs(p, 3);
    auto ref = in.u0;
    solve(p, ref, 1);
    auto u = in.u0;
    const Consts c = consts(p);
    auto at = [&](std::int64_t i, std::int64_t j) { return u[std::size_t(i * p.n + j)]; };
    for (int s = 0; s < p.sweeps; ++s)
      for (int colour = 0; colour < 2; ++colour)
        for (std::int64_t i = 1; i < p.m - 1; ++i)
          for (std::int64_t j = 1; j < p.n - 1; ++j)
            if ((i + j) % 2 == colour)
              u[std::size_t(i * p.n + j)] =
                  relax(c, i, j, at(i, j), at(i + 1, j), at(i - 1, j), at(i, j + 1), at(i, j - 1));
    for (std::size_t k = 0; k < u.size(); ++k) ASSERT_EQ(u[k], ref[k]) << "point " << k << " of " << p.str();
  }
}

TEST(SorReference, ThreadsChangeNoBit) {
  Problem p = make(101, 77, 6, 1.7, Field::Vortex);
  auto in = make_inputs(p, 5);
  auto one = in.u0, three = in.u0;
  solve(p, one, 1);
  solve(p, three, 3);
  EXPECT_EQ(one, three);
}

TEST(SorReference, ResidualFallsAndToleranceStops) {
  Problem p = make(33, 41, 5000, 1.8, Field::Vortex);
  auto u = make_inputs(p, 1).u0;
  std::vector<double> trace;
  const int done = solve(p, u, 0, 1e-10, 5, &trace);
  ASSERT_GE(trace.size(), 3u);
  EXPECT_LT(done, p.sweeps);
  EXPECT_EQ(done % 5, 0);
  EXPECT_LE(trace.back(), 1e-10);
  EXPECT_GT(trace[trace.size() - 2], 1e-10) << "it should stop at the first check below the tolerance";
  EXPECT_LT(trace.back(), trace.front() * 1e-6);
  EXPECT_DOUBLE_EQ(residual(p, u), trace.back());
}

TEST(SorReference, InputsAreNeverZeroAndKeepTheBoundary) {
  Problem p = make(40, 31, 1, 1.5, Field::Analytic);
  auto in = make_inputs(p, 9);
  for (std::int64_t i = 1; i < p.m - 1; ++i)
    for (std::int64_t j = 1; j < p.n - 1; ++j) {
      const double v = in.u0[std::size_t(i * p.n + j)];
      EXPECT_TRUE(v > 0 && v < 1) << v;
    }
  EXPECT_DOUBLE_EQ(in.u0[std::size_t(5 * p.n + 0)], analytic_solution(5 * p.step_x(), 0));
  EXPECT_DOUBLE_EQ(in.u0[std::size_t((p.m - 1) * p.n + 7)], analytic_solution(1.0, 7 * p.step_y()));
  // The seed changes the interior.
  EXPECT_NE(make_inputs(p, 10).u0, in.u0);
}

TEST(SorVerify, CatchesBrokenFields) {
  Problem p = make(40, 36, 8, 1.5, Field::Vortex);
  Case c(p, 11);
  const auto& ref = c.reference();
  EXPECT_TRUE(verify(p, c.inputs.u0, ref, ref).passed);
  auto bad = ref;
  bad[std::size_t(17 * p.n + 9)] *= 1 + 1e-8;
  EXPECT_FALSE(verify(p, c.inputs.u0, ref, bad).passed);
  bad = ref;
  bad[3] += 1e-12;  // a boundary point must not move at all
  auto chk = verify(p, c.inputs.u0, ref, bad);
  EXPECT_FALSE(chk.passed);
  EXPECT_NE(chk.message.find("boundary"), std::string::npos) << chk.message;
  // Seed 002's two-GPU seam: the rows split at `cut`, each part swept with
  // the other part's rows next to the cut never exchanged (read as they were
  // at the start).
  const std::int64_t cut = p.m / 2;
  const Consts k = consts(p);
  auto seam = c.inputs.u0;
  const auto& start = c.inputs.u0;
  auto nb = [&](std::int64_t from, std::int64_t i, std::int64_t j) {
    const bool across = (from < cut) != (i < cut);
    return (across ? start : seam)[std::size_t(i * p.n + j)];
  };
  for (int sw = 0; sw < p.sweeps; ++sw)
    for (int colour = 0; colour < 2; ++colour)
      for (std::int64_t i = 1; i < p.m - 1; ++i)
        for (std::int64_t j = 1 + ((i + 1 + colour) & 1); j < p.n - 1; j += 2) {
          double& x = seam[std::size_t(i * p.n + j)];
          x = relax(k, i, j, x, nb(i, i + 1, j), nb(i, i - 1, j), nb(i, i, j + 1), nb(i, i, j - 1));
        }
  chk = verify(p, c.inputs.u0, ref, seam);
  EXPECT_FALSE(chk.passed);
  // The worst point is next to the cut.
  EXPECT_TRUE(chk.message.find("worst (" + std::to_string(cut - 1) + ",") != std::string::npos ||
              chk.message.find("worst (" + std::to_string(cut) + ",") != std::string::npos)
      << chk.message;
  bad = ref;
  bad.pop_back();
  EXPECT_FALSE(verify(p, c.inputs.u0, ref, bad).passed);
}

TEST(SorProblem, BadProblemsAreUsageErrors) {
  EXPECT_THROW(validate(make(2, 10, 1, 1.5, Field::Vortex)), UsageError);
  EXPECT_THROW(validate(make(10, 2, 1, 1.5, Field::Vortex)), UsageError);
  EXPECT_THROW(validate(make(10, 10, 1, 0.0, Field::Vortex)), UsageError);
  EXPECT_THROW(validate(make(10, 10, 1, 2.0, Field::Vortex)), UsageError);
  EXPECT_THROW(validate(make(10, 10, 1, std::nan(""), Field::Vortex)), UsageError);
  EXPECT_THROW(validate(make(10, 10, 0, 1.5, Field::Vortex)), UsageError);
  Problem p = make(10, 10, 1, 1.5, Field::Vortex);
  p.h1 = -0.1;
  EXPECT_THROW(validate(p), UsageError);
  EXPECT_NO_THROW(validate(make(3, 3, 1, 1.99, Field::Analytic)));
  EXPECT_THROW(parse_field("laplace"), UsageError);
}

class SorVariants : public ::testing::TestWithParam<VariantCase> {
 protected:
  void SetUp() override {
    if (on_gpu(entry().backend)) PB_SKIP_WITHOUT_GPU();
  }
  const sor::Entry& entry() const { return pb::testing::find_variant(registry(), GetParam().name); }
  // p, then another problem of other inputs on the same variant (a reset or
  // prepare that kept the old field shows), then p's again after a reset.
  void expect_matches(const Problem& p) {
    auto v = entry().make(GetParam().knobs);
    ASSERT_TRUE(v->supports(p).ok()) << p.str();
    Problem q = p;
    q.field = p.field == Field::Vortex ? Field::Analytic : Field::Vortex;
    q.omega = 1.9;
    Case first(p, 0x51), second(q, 0x52);
    for (int round = 0; round < 3; ++round) {
      const Problem& r = round == 1 ? q : p;
      Case& c = round == 1 ? second : first;
      v->prepare(r, c.inputs);
      std::vector<double> u;
      v->reset();
      v->run();
      v->result(u);
      auto chk = verify(r, c.inputs.u0, c.reference(), u);
      EXPECT_TRUE(chk.passed) << "round " << round << " " << r.str() << ": " << chk.message;
    }
  }
};

TEST_P(SorVariants, OddAndTinyGrids) {
  for (auto [m, n] : {std::pair<int, int>{3, 3}, {4, 7}, {7, 4}, {5, 1000}, {67, 45}, {130, 257}, {33, 33}})
    expect_matches(make(m, n, 3, 1.5, Field::Vortex));
}

// More interior rows than 65535 blocks of 4 rows cover: the columns kernel's
// row segments go on into grid.z. Variants whose grid cannot cover it say so.
TEST_P(SorVariants, TallGrid) {
  const Problem p = make(262150, 5, 2, 1.5, Field::Vortex);
  const auto s = entry().make(GetParam().knobs)->supports(p);
  if (!s.ok()) {
    EXPECT_NE(s.reason.find("65535"), std::string::npos) << s.reason;
    return;
  }
  expect_matches(p);
}

TEST_P(SorVariants, ManySweepsAndOmegas) {
  for (double w : {0.7, 1.0, 1.95}) expect_matches(make(61, 80, 25, w, Field::Analytic));
}

TEST_P(SorVariants, ResetRestoresTheStart) {
  // Two runs after one prepare, each from the start: the same field.
  Problem p = make(50, 51, 4, 1.6, Field::Vortex);
  Case c(p, 0x77);
  auto v = entry().make(GetParam().knobs);
  v->prepare(p, c.inputs);
  std::vector<double> a, b;
  v->reset();
  v->run();
  v->result(a);
  v->reset();
  v->run();
  v->result(b);
  EXPECT_EQ(a, b);
  EXPECT_TRUE(verify(p, c.inputs.u0, c.reference(), b).passed);
}

PB_INSTANTIATE_CPU_AND_GPU(SorVariants, all_variants());

}  // namespace
