// Registry-driven k-means correctness: every variant with each knob value, on
// uniform and blob data, odd shapes, K = N, fixed-loop and converging runs,
// must end with the reference's assignment and iteration count. Exact ties
// and empty clusters follow the documented rules in every variant.
#include <cblas.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/gpu.hpp"
#include "core/mpi.hpp"
#include "kmeans/kmeans.hpp"
#include "kmeans/registry.hpp"
#include "tests/gpu_test.hpp"
#include "tests/variant_cases.hpp"

using namespace pb;
using namespace pb::kmeans;

namespace {

using pb::testing::VariantCase;
std::vector<VariantCase> all_variants() { return pb::testing::variant_cases(registry(), 32, 256); }
const kmeans::Entry& find(const std::string& name) { return pb::testing::find_variant(registry(), name); }

Criteria fixed(int loops) {
  Criteria c;
  c.fixed = true;
  c.loops = loops;
  return c;
}
// A converging run that goes on until at most 0.1% of the points change
// (or nothing moves by 1e-6): dozens of iterations on small uniform data.
Criteria tight() {
  Criteria c;
  c.min_changes = 0.001;
  c.precision = 1e-6;
  return c;
}

class KMeansVariants : public ::testing::TestWithParam<VariantCase> {
 protected:
  void SetUp() override {
    if (on_gpu(find(GetParam().name).backend)) PB_SKIP_WITHOUT_GPU();
  }
  Result run(const Problem& p, const Inputs& in) {
    auto v = find(GetParam().name).make(GetParam().knobs);
    auto s = v->supports(p);
    if (!s.ok()) {
      unsupported_ = s.reason;
      return {};
    }
    v->prepare(p, in);
    Result r;
    for (int rep = 0; rep < 2; ++rep) {  // reset() must restore the starting state
      v->reset();
      v->run();
      v->result(r);
    }
    return r;
  }
  // A double problem, or for a single-precision-only variant the same in f32.
  Result run_f64_or_f32(Problem p, const Inputs& in) {
    Result r = run(p, in);
    if (unsupported_.rfind("type f64:", 0) == 0) {
      unsupported_.clear();
      p.type = Type::F32;
      r = run(p, in);
    }
    return r;
  }
  std::string unsupported_;
};

TEST_P(KMeansVariants, MatchReference) {
  const Problem problems[] = {{1000, 4, 8, Dist::Uniform, Criteria{}},
                              {777, 3, 5, Dist::Blobs, Criteria{}},
                              {1, 1, 1, Dist::Uniform, Criteria{}},
                              {50, 3, 50, Dist::Uniform, Criteria{}},  // K = N
                              {500, 7, 1, Dist::Blobs, Criteria{}},    // K = 1: every point in one cluster
                              {2050, 33, 70, Dist::Blobs, fixed(4)},
                              {2048, 2, 16, Dist::Uniform, fixed(3)},
                              {3000, 100, 55, Dist::Uniform, Criteria{}},
                              // CUDA.OneRead's tensor-core pass: D and K at and under its tiles' 16 and 32.
                              {4099, 16, 32, Dist::Blobs, fixed(3)},
                              {1003, 13, 20, Dist::Uniform, Criteria{}},
                              {70001, 16, 16, Dist::Blobs, fixed(2)},
                              // CUDA.DMMA's 32-centroid tiles (its 64-centroid ones need D <= 104).
                              {1500, 120, 40, Dist::Uniform, fixed(2)},
                              // More than two of its 64-centroid tiles (the copy of the third);
                              // D past its 32-centroid tiles (64-point blocks); OneRead's K-32, D-8 pass.
                              {3001, 20, 150, Dist::Blobs, fixed(2)},
                              {700, 160, 20, Dist::Uniform, fixed(2)},
                              {2000, 5, 24, Dist::Uniform, fixed(3)},
                              // CUDA.DMMA's 64-centroid tiles six deep, so each buffer's mbarrier
                              // phase wraps (bulk copies, D even) and cp.async's groups go round
                              // (D odd).
                              {2000, 10, 330, Dist::Uniform, fixed(2)},
                              {2000, 11, 330, Dist::Blobs, fixed(2)},
                              // CUDA.DMMA's 32-centroid tiles (8 warps) with unpadded rows (D % 8
                              // == 4): its halves of points apart, three tiles.
                              {1500, 124, 70, Dist::Blobs, fixed(2)},
                              // Unpadded rows with six 64-centroid tiles (16 warps, the buffers'
                              // barriers and mbarrier phases go round), with 4 warps (D = 164), and
                              // with the sums not fused (N / K > 10,000).
                              {2000, 20, 330, Dist::Uniform, fixed(2)},
                              {700, 164, 70, Dist::Uniform, fixed(2)},
                              {30001, 12, 2, Dist::Blobs, fixed(2)},
                              // CUDA.DMMA's delta sums: points still moving past its refreshes
                              // (iterations 16 and 32 start the sums from zero), with bulk copies of
                              // unpadded rows (D = 12) and cp.async (D = 9), in fixed runs and in a
                              // converging one (44 iterations), which reads the flag each iteration.
                              {3000, 12, 40, Dist::Uniform, fixed(40)},
                              {2500, 9, 30, Dist::Uniform, fixed(35)},
                              {2500, 9, 30, Dist::Uniform, tight()},
                              // More points than one pass of the largest grid covers: kernels go round
                              // their grid-stride loops and AllGPU carries block sums across tiles.
                              {300000, 8, 16, Dist::Blobs, fixed(2)}};
  for (const auto& p : problems) {
    Case data(p, 0x5eed);
    unsupported_.clear();
    Result r = run(p, data.inputs);
    if (!unsupported_.empty()) {
      // Only the shared-memory variants may decline, for lack of shared memory,
      // CUDA.OneRead for points wider than its registers hold, and the MPI
      // variant when run with more ranks than points.
      const bool fewer_points = p.n < mpi::size() && unsupported_ == "more ranks than points";
      const bool too_wide = GetParam().name == "CUDA.OneRead" && p.d > 32 &&
                            unsupported_.find("in registers") != std::string::npos;
      const bool single_only = unsupported_.rfind("type f64:", 0) == 0;  // CUDA.TF32
      EXPECT_TRUE(unsupported_.find("shared memory") != std::string::npos || fewer_points || too_wide ||
                  single_only)
          << unsupported_;
      continue;
    }
    Check c = compare(p, data.reference(), r);
    EXPECT_TRUE(c.passed) << GetParam().label << " " << p.str() << ": " << c.message;
    EXPECT_GE(r.iterations, 1);
  }
}

// Exact ties go to the lowest cluster index; an empty cluster keeps its centroid.
TEST_P(KMeansVariants, TiesAndEmptyClusters) {
  Problem p{5, 1, 3, Dist::Uniform, fixed(1)};
  Inputs in;
  in.points = {0, 1, 2, 4, 3};  // 1 is equidistant from centroids 0 and 2; 3 from 2 and 4
  in.init = {0, 2, 100};        // nothing is near 100
  Result r = run_f64_or_f32(p, in);
  ASSERT_TRUE(unsupported_.empty()) << unsupported_;
  EXPECT_EQ(r.assign, (std::vector<int>{0, 0, 1, 1, 1}));
  EXPECT_DOUBLE_EQ(r.centroids[0], 0.5);
  EXPECT_DOUBLE_EQ(r.centroids[1], 3.0);
  EXPECT_DOUBLE_EQ(r.centroids[2], 100.0);
  EXPECT_EQ(r.iterations, 1);
  EXPECT_DOUBLE_EQ(r.inertia, 0 + 1 + 0 + 4 + 1);
}

// Exact ties across a GPU kernel's lanes, warps and tiles of centroids go to
// the lowest index too. K = 200 on a line, every value a small integer (exact
// in TF32 products as in double): centroid j at 300 + 8j, except two at 0
// (indices 5 and 2: columns of different lanes of a quad), two at 100 (9 and
// 70: different halves of a 128-centroid tile) and two at 200 (150 and 20:
// different tiles). One point sits on each centroid.
TEST_P(KMeansVariants, TiesAcrossTiles) {
  const int K = 200;
  Problem p{K, 1, K, Dist::Uniform, fixed(1)};
  Inputs in;
  in.init.resize(K);
  for (int j = 0; j < K; ++j) in.init[j] = 300 + 8 * j;
  const int groups[3][2] = {{5, 2}, {9, 70}, {150, 20}};
  for (int g = 0; g < 3; ++g)
    for (int j : groups[g]) in.init[j] = 100 * g;
  in.points = in.init;
  std::vector<int> want(K);
  for (int j = 0; j < K; ++j) want[j] = j;
  for (const auto& g : groups) want[g[0]] = want[g[1]] = std::min(g[0], g[1]);
  Result r = run_f64_or_f32(p, in);
  ASSERT_TRUE(unsupported_.empty()) << unsupported_;
  EXPECT_EQ(r.assign, want);
  EXPECT_EQ(r.inertia, 0.0);
}

// Single precision: a variant that claims it ends each run with a last step
// check_last_step accepts (TF32 near ties allowed), on the shapes its
// kernels tile awkwardly; every other variant is refused by the Job.
TEST_P(KMeansVariants, SinglePrecisionLastStep) {
  const auto& e = find(GetParam().name);
  const Problem problems[] = {{1000, 4, 8, Dist::Uniform, fixed(3), Type::F32},
                              {4099, 16, 32, Dist::Blobs, fixed(3), Type::F32},
                              {2050, 33, 70, Dist::Uniform, fixed(2), Type::F32},
                              {3001, 64, 150, Dist::Uniform, fixed(2), Type::F32},
                              {1000, 128, 40, Dist::Blobs, fixed(2), Type::F32},  // CUDA.TF32's widest
                              {20000, 8, 300, Dist::Uniform, fixed(3), Type::F32},
                              {50, 3, 50, Dist::Uniform, fixed(2), Type::F32},  // K = N
                              // A million points a cluster, and CUDA.TF32's blocks taking
                              // many tiles of points each on its persistent grid.
                              {2000000, 8, 2, Dist::Uniform, fixed(2), Type::F32}};
  for (const auto& p : problems) {
    kmeans::Job job(e, GetParam().knobs, p, 0x5eed);
    const Support s = job.supports();
    if (!e.traits.single) {
      EXPECT_FALSE(s.ok()) << GetParam().label << " runs f32 without claiming it";
      continue;
    }
    unsupported_.clear();
    Case data(p, 0x5eed);
    Result r = run(p, data.inputs);
    if (!unsupported_.empty()) {  // only a GPU with too little shared memory for the widest
      EXPECT_NE(unsupported_.find("shared memory"), std::string::npos) << unsupported_;
      continue;
    }
    Ties ties;
    Check c = check_last_step(p, data.inputs, r, &ties);
    EXPECT_TRUE(c.passed) << GetParam().label << " " << p.str() << ": " << c.message;
    // The baseline (Seq) computes exact distances on the floats: no near ties.
    if (e.role == Role::Baseline) {
      EXPECT_EQ(ties.points, 0) << p.str();
    }
  }
}

PB_INSTANTIATE_CPU_AND_GPU(KMeansVariants, all_variants());

// Seed 001's tiling must carry K x D far beyond shared memory.
TEST(GpuKMeansTiled, LargeKTimesD) {
  PB_SKIP_WITHOUT_GPU();
  Problem p{4000, 300, 2000, Dist::Blobs, fixed(2)};
  Case data(p, 3);
  for (const char* name : {"CUDA.Tiled", "CUDA.GEMM", "CUDA.Shared", "CUDA.AllGPU"}) {
    auto v = find(name).make({1, 128});
    if (std::string(name) == "CUDA.Shared" || std::string(name) == "CUDA.AllGPU") {
      EXPECT_FALSE(v->supports(p).ok()) << name << " should not fit K*D = 600000 in shared memory";
      continue;
    }
    ASSERT_TRUE(v->supports(p).ok());
    v->prepare(p, data.inputs);
    v->reset();
    v->run();
    Result r;
    v->result(r);
    auto c = compare(p, data.reference(), r);
    EXPECT_TRUE(c.passed) << name << ": " << c.message;
  }
}

// BLAS runs each dgemm on one OpenBLAS thread; once the variant is freed the
// process-wide count is the one it found (references and later variants use it).
TEST(KMeansBlas, GivesBackOpenBlasThreadCount) {
  openblas_set_num_threads(2);  // not 1, whatever this machine's cores
  const int before = openblas_get_num_threads();
  ASSERT_EQ(before, 2);
  Problem p{500, 4, 6, Dist::Blobs, fixed(2)};
  const auto in = make_inputs(p, 3);
  {
    auto v = find("BLAS").make(pb::Knobs{2, 0});
    v->prepare(p, in);
    EXPECT_EQ(openblas_get_num_threads(), 1);
  }
  EXPECT_EQ(openblas_get_num_threads(), before);
}

TEST(KMeansReference, CompareCatchesDifferences) {
  Problem p{300, 2, 4, Dist::Blobs, Criteria{}};
  Case data(p, 9);
  Result r = data.reference();
  EXPECT_TRUE(compare(p, data.reference(), r).passed);
  auto bad = r;
  bad.assign[17] = (bad.assign[17] + 1) % 4;
  auto c = compare(p, data.reference(), bad);
  EXPECT_FALSE(c.passed);
  EXPECT_NE(c.message.find("point 17"), std::string::npos) << c.message;
  bad = r;
  bad.iterations += 1;
  EXPECT_FALSE(compare(p, data.reference(), bad).passed);
  bad = r;
  bad.centroids[3] *= 1 + 1e-6;
  EXPECT_FALSE(compare(p, data.reference(), bad).passed);
}

// check_last_step on three points in one dimension, centroids starting at 0
// and 10: 4.99 is 0.2 nearer 0 (24.9001 against 25.1001), a near tie within
// its bound 2^-9 (2 x 24.9001 + 0 + 100) = 0.29258; 3 is 40 nearer 0.
TEST(KMeansReference, LastStepAllowsTF32TiesOnly) {
  const Problem p{3, 1, 2, Dist::Uniform, fixed(1), Type::F32};
  Inputs in;
  in.points = {4.99, 3.0, 9.0};
  in.init = {0.0, 10.0};
  Result r;
  r.iterations = 1;
  r.last_start = {0.0, 10.0};
  r.assign = {1, 0, 1};                   // 4.99 to the farther centroid: a tie
  r.centroids = {3.0, (4.99 + 9.0) / 2};  // the means of those points
  r.inertia = 25.1001 + 9.0 + 1.0;
  Ties ties;
  Check c = check_last_step(p, in, r, &ties);
  ASSERT_TRUE(c.passed) << c.message;
  EXPECT_EQ(ties.points, 1);
  EXPECT_NEAR(ties.worst, 0.2 / (std::ldexp(2 * 24.9001 + 100, -9)), 1e-9);
  EXPECT_DOUBLE_EQ(tf32_tie_bound(24.9001, 0, 100), (2 * 24.9001 + 100) / 512);
  // The inertia within the sum of each distance's bound, 2^-10 (xx + c):
  // (24.9001 + 100 + 9 + 0 + 81 + 100) / 1024 = 0.30752.
  auto bad = r;
  bad.inertia += 0.25;
  EXPECT_TRUE(check_last_step(p, in, bad).passed);
  bad.inertia += 0.1;
  EXPECT_NE(check_last_step(p, in, bad).message.find("inertia"), std::string::npos);
  bad = r;
  bad.assign = {1, 1, 1};  // 3 to 10: 40 farther, far past its bound
  bad.centroids = {0.0, (4.99 + 3.0 + 9.0) / 3};
  c = check_last_step(p, in, bad);
  EXPECT_FALSE(c.passed);
  EXPECT_NE(c.message.find("point 1 in cluster 1, nearest 0"), std::string::npos) << c.message;
  bad = r;
  bad.centroids[1] += 1e-3;
  EXPECT_NE(check_last_step(p, in, bad).message.find("centroid 1"), std::string::npos);
  bad = r;
  bad.iterations = 2;
  EXPECT_FALSE(check_last_step(p, in, bad).passed);
  bad = r;
  bad.last_start.clear();
  EXPECT_FALSE(check_last_step(p, in, bad).passed);
  bad = r;
  bad.assign[2] = 2;
  EXPECT_FALSE(check_last_step(p, in, bad).passed);
}

// Type f32: the double problem's points rounded to float, and a fixed
// number of iterations.
TEST(KMeansReference, SinglePrecisionInputsAndRules) {
  Problem d{500, 3, 4, Dist::Blobs, fixed(2)};
  Problem f = d;
  f.type = Type::F32;
  const auto a = make_inputs(d, 3), b = make_inputs(f, 3);
  ASSERT_EQ(a.points.size(), b.points.size());
  std::size_t moved = 0;
  for (std::size_t i = 0; i < a.points.size(); ++i) {
    EXPECT_EQ(b.points[i], double(float(a.points[i])));
    moved += b.points[i] != a.points[i];
  }
  EXPECT_GT(moved, a.points.size() / 2);  // the f64 data are not floats already
  EXPECT_EQ(b.init[3], b.points[125 * 3]);
  EXPECT_NO_THROW(validate(f));
  f.crit = Criteria{};
  EXPECT_THROW(validate(f), UsageError);
  EXPECT_NE(f.str().find("f32"), std::string::npos);
  EXPECT_FALSE(Case::same_inputs(d, Problem{500, 3, 4, Dist::Blobs, fixed(2), Type::F32}));
}

TEST(KMeansReference, ObjectiveNeverIncreases) {
  // Lloyd's iterations never increase the sum of squared distances: the
  // inertia after L + 1 iterations is at most that after L.
  double last = 0;
  for (int loops = 1; loops <= 6; ++loops) {
    Problem p{3000, 5, 12, Dist::Blobs, fixed(loops)};
    Result r;
    lloyd(p, make_inputs(p, 4), 0, r);
    EXPECT_EQ(r.iterations, loops);
    if (loops > 1) {
      EXPECT_LE(r.inertia, last * (1 + 1e-12)) << "after " << loops << " iterations";
    }
    last = r.inertia;
  }
}

TEST(KMeansReference, ValidateRejectsImpossibleProblems) {
  EXPECT_THROW(validate({10, 2, 11, Dist::Uniform, Criteria{}}), UsageError);  // K > N
  EXPECT_THROW(validate({10, 2, 0, Dist::Uniform, Criteria{}}), UsageError);
  EXPECT_THROW(validate({10, 0, 2, Dist::Uniform, Criteria{}}), UsageError);
  EXPECT_THROW(validate({0, 2, 2, Dist::Uniform, Criteria{}}), UsageError);
  Criteria bad;
  bad.min_changes = 1.5;
  EXPECT_THROW(validate({10, 2, 2, Dist::Uniform, bad}), UsageError);
  bad = Criteria{};
  bad.precision = -1;
  EXPECT_THROW(validate({10, 2, 2, Dist::Uniform, bad}), UsageError);
  EXPECT_NO_THROW(validate({10, 2, 10, Dist::Uniform, Criteria{}}));
}

TEST(KMeansReference, InputsArePinned) {
  Problem p{100, 3, 4, Dist::Uniform, Criteria{}};
  auto in = make_inputs(p, 1);
  EXPECT_EQ(in.init.size(), 12u);
  EXPECT_EQ(in.init[3], in.points[25 * 3]);  // centroid 1 is point 1*100/4
  for (double v : in.points) ASSERT_NE(v, 0.0);
  EXPECT_EQ(make_inputs(p, 1).points, in.points);
  EXPECT_NE(make_inputs(p, 2).points, in.points);
}

}  // namespace
