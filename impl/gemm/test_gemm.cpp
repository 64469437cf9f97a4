// Registry-driven GEMM correctness: every listed variant, with each of its
// knob values, for both precisions and all three operations, on awkward
// shapes, checked by the same oracle the benchmarks use. GPU variants skip,
// saying so, where no CUDA device is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>

#include "core/gpu.hpp"
#include "gemm/cpu/simd.hpp"
#include "gemm/cuda/raster.hpp"
#include "gemm/cuda/streamk.hpp"
#include "gemm/gemm.hpp"
#include "gemm/registry.hpp"
#include "tests/gpu_test.hpp"
#include "tests/variant_cases.hpp"

using namespace pb;
using namespace pb::gemm;

#ifdef PARBENCH_WITH_CUDA
namespace pb::gemm {
const std::vector<std::string>& pipelined_tiles();                                 // gemm/cuda/pipelined.cu
const std::vector<std::string>& dmma_tiles();                                      // gemm/cuda/dmma.cu
std::unique_ptr<Variant<float>> make_cuda_wgmma(int streamk_rounds, bool staged);  // gemm/cuda/wgmma.cu
}  // namespace pb::gemm
#endif

namespace {

struct Shape {
  std::int64_t m, n, k;
};

// 1x1x1; one less / more than the 16, 32 and 128 tiles in every dimension;
// seed 003's odd 1000x1500x777; tall-skinny and short-wide; K = 1.
// Multiples of 4 in every dimension take RegBlock's 16-byte-load path
// ({132, 136, 20}, {256, 128, 64}); more than 65535 row tiles take the
// kernels' grid-stride loop over rows (16-row tiles at 1048577, 128-row
// tiles at 8388609). OMP.Blocked's cache blocks end inside {127, 129, 17}
// (MC = 128 rows), {9, 10, 385} (KC = 256 and 384) and {3, 4100, 5} (NC =
// 3072 and 4096 columns).
const Shape kShapes[] = {{1, 1, 1},         {15, 17, 16},    {33, 31, 32},    {127, 129, 17}, {129, 127, 65},
                         {1000, 1500, 777}, {2050, 3, 5},    {3, 2049, 64},   {130, 6, 1},    {132, 136, 20},
                         {256, 128, 64},    {1048577, 2, 3}, {8388609, 2, 1}, {3, 4100, 5},   {9, 10, 385}};

struct Case_ {
  std::string variant;
  Knobs knobs;
  Op op;
  bool f64;
  std::string label;
  Precision prec = Precision::Native;  // TF32 / BF16: a tensor_registry() variant on float
  bool gpu = false;                    // the variant runs on a GPU
  int simd = -1;                       // OMP.Blocked with this kernel (a Simd), not the host's widest
};

void PrintTo(const Case_& c, std::ostream* os) { *os << c.label; }

std::vector<Case_> all_cases() {
  std::vector<Case_> out;
  for (bool f64 : {false, true})
    for (Op op : {Op::AB, Op::AtB, Op::ABtC})
      for (const auto& e : registry<float>()) {  // float and double lists are the same
        // threads 1 and 3 (an uneven row split); the variant's own block sizes
        for (auto k : knob_values(e.knob, {1, 3}, e.blocks)) {
          std::string label = std::string(e.name) + "_" + to_string(op) + (f64 ? "_f64" : "_f32");
          if (e.knob == Knob::Threads) label += "_threads" + std::to_string(k.threads);
          if (e.knob == Knob::Block) label += "_block" + std::to_string(k.block);
          for (auto& c : label)
            if (c == '.') c = '_';
          out.push_back({e.name, k, op, f64, label, Precision::Native, on_gpu(e.backend)});
        }
      }
  // OMP.Blocked with each narrower kernel the host can run (the registry's
  // entry runs the widest): every kernel is checked where it can run.
  for (bool f64 : {false, true})
    for (Op op : {Op::AB, Op::AtB, Op::ABtC})
      for (Simd simd : {Simd::Baseline, Simd::Avx2})
        if (simd != widest_simd() && host_supports(simd))
          for (int threads : {1, 3}) {
            Knobs k;
            k.threads = threads;
            std::string label = std::string("OMP_Blocked_") + to_string(simd) + "_" + to_string(op) +
                                (f64 ? "_f64" : "_f32") + "_threads" + std::to_string(threads);
            out.push_back({"OMP.Blocked", k, op, f64, label, Precision::Native, false, int(simd)});
          }
#ifdef PARBENCH_WITH_CUDA
  // Every tile configuration of the tunable kernels, forced: on these small
  // shapes the tuned table picks only some of them.
  for (bool f64 : {false, true}) {
    const char* variant = f64 ? "CUDA.DMMA" : "CUDA.Pipelined";
    const auto& names = f64 ? dmma_tiles() : pipelined_tiles();
    for (Op op : {Op::AB, Op::AtB, Op::ABtC})
      for (std::size_t i = 0; i < names.size(); ++i) {
        Knobs k;
        k.tile = int(i);
        std::string label =
            std::string(variant) + "_" + to_string(op) + (f64 ? "_f64" : "_f32") + "_tile" + names[i];
        for (auto& c : label)
          if (c == '.') c = '_';
        out.push_back({variant, k, op, f64, label, Precision::Native, true});
      }
  }
#endif
  for (Precision prec : {Precision::TF32, Precision::BF16})
    for (Op op : {Op::AB, Op::AtB, Op::ABtC})
      for (const auto& e : tensor_registry()) {
        std::string label = std::string(e.name) + "_" + to_string(op) + "_" + to_string(prec);
        for (auto& c : label)
          if (c == '.') c = '_';
        out.push_back({e.name, Knobs{}, op, false, label, prec, on_gpu(e.backend)});
      }
  return out;
}

template <class T>
const gemm::Entry<T>& find(const std::string& name, Precision prec = Precision::Native) {
  if constexpr (std::is_same<T, float>::value)
    if (prec != Precision::Native) {
      for (const auto& e : tensor_registry())
        if (name == e.name) return e;
    }
  for (const auto& e : registry<T>())
    if (name == e.name) return e;
  throw std::logic_error("no variant " + name);
}

// The inputs and reference of the shapes whose reference costs most to build
// (M N K >= kCachedWork: 1000x1500x777, 1.2 G multiply-adds) are kept for
// the whole process, so every variant of a shard checks against one
// reference per (op, precision, type). The rest are rebuilt per test: their
// references are cheap and some are large (8388609x2 holds 16 M doubles of
// value and as many of bound).
constexpr double kCachedWork = 1e8;

template <class T>
Case<T>& case_for(const Problem& p) {
  static std::mutex mu;
  static std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t, int>, std::unique_ptr<Case<T>>>
      kept;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = kept[{int(p.op), p.m, p.n, p.k, int(p.prec)}];
  if (!slot) slot = std::make_unique<Case<T>>(p, 0x5eed);
  return *slot;
}

template <class T>
void check_variant(const Case_& c) {
  const auto& e = find<T>(c.variant, c.prec);
  if (on_gpu(e.backend)) PB_SKIP_WITHOUT_GPU();
  // A variant may refuse one precision as a whole (CUDA.Pipelined is a float
  // kernel, CUDA.DMMA a double one) when it runs the other, and a kernel for
  // a newer GPU everything ("needs sm_90..."), never some shapes of a
  // precision.
  int refused = 0;
  std::string reason;
  for (const auto& s : kShapes) {
    Problem p{c.op, s.m, s.n, s.k, c.prec};
    auto v = c.simd < 0 ? e.make(c.knobs) : make_cpu_blocked<T>(c.knobs.threads, Simd(c.simd));
    if (!v->supports(p).ok()) {
      ++refused, reason = v->supports(p).reason;
      continue;
    }
    std::unique_ptr<Case<T>> own;
    Case<T>& data = double(p.m) * p.n * p.k >= kCachedWork ? case_for<T>(p)
                                                           : *(own = std::make_unique<Case<T>>(p, 0x5eed));
    v->prepare(p, data.inputs);
    v->run();
    std::vector<T> out;
    v->result(out);  // synchronises CUDA variants
    Check r = data.oracle().check(out);
    EXPECT_TRUE(r.passed) << c.label << " " << p.str() << ": " << r.message;
    EXPECT_EQ(r.method, "full") << "test shapes are small enough for a full check";
  }
  if (refused == int(std::size(kShapes)) && reason.find("needs sm_") == 0)
    GTEST_SKIP() << c.label << ": not for this GPU: " << reason;
  if (refused == int(std::size(kShapes)) && c.prec == Precision::Native) {
    using Other = std::conditional_t<std::is_same<T, float>::value, double, float>;
    const Problem first{c.op, kShapes[0].m, kShapes[0].n, kShapes[0].k};
    ASSERT_TRUE(find<Other>(c.variant).make(c.knobs)->supports(first).ok())
        << c.label << " refuses both precisions: " << reason;
    GTEST_SKIP() << c.label << ": refused as a whole: " << reason;
  }
  EXPECT_EQ(refused, 0) << c.label << ": " << refused << " of " << std::size(kShapes) << " shapes refused ("
                        << reason << ")";
}

class GemmVariants : public ::testing::TestWithParam<Case_> {};

TEST_P(GemmVariants, MatchReferenceOnAwkwardShapes) {
  if (GetParam().f64)
    check_variant<double>(GetParam());
  else
    check_variant<float>(GetParam());
}

PB_INSTANTIATE_CPU_AND_GPU(GemmVariants, all_cases());

#ifdef PARBENCH_WITH_CUDA
// CUDA.WGMMA shares a long run's last partial round out by K tiles
// (stream-K) only past 8 full rounds of its persistent grid, far above the
// shapes above. Forced on from round 0 here: the shapes of more than one K
// tile split units among clusters, up to three a unit (129 x 127 x 65 and
// 1000 x 1500 x 777 in TF32); 1000 x 4200 and 520 x 8200 also have whole
// rounds before their split units. Each problem is checked after its first
// launch, whose workspace is fresh, and again after a second launch that
// reuses the workspace and flags; with the register stores and with the
// staged TMA epilogue (CUDA.WGMMA.TmaStore), which takes the shapes whose N
// is a multiple of 4 and clips at their edges.
TEST(GpuWgmma, StreamKTailMatchesReference) {
  PB_SKIP_WITHOUT_GPU();
  std::vector<Shape> shapes(std::begin(kShapes), std::end(kShapes));
  shapes.push_back({1000, 4200, 333});
  shapes.push_back({520, 8200, 1000});
  for (Precision prec : {Precision::TF32, Precision::BF16})
    for (Op op : {Op::AB, Op::AtB, Op::ABtC})
      for (const auto& s : shapes) {
        const Problem p{op, s.m, s.n, s.k, prec};
        Case<float> data(p, 0x5eed);  // one input and reference for both epilogues
        for (bool staged : {false, true}) {
          auto v = make_cuda_wgmma(0, staged);
          const auto support = v->supports(p);
          if (!support.ok() && support.reason.find("needs sm_") == 0) GTEST_SKIP() << support.reason;
          ASSERT_TRUE(support.ok()) << p.str() << ": " << support.reason;
          v->prepare(p, data.inputs);
          for (int launch = 1; launch <= 2; ++launch) {
            v->run();
            std::vector<float> out;
            v->result(out);
            const Check r = data.oracle().check(out);
            EXPECT_TRUE(r.passed) << p.str() << (staged ? ", staged" : "") << ", launch " << launch << ": "
                                  << r.message;
          }
        }
      }
}
#endif

// The oracle must fail what is wrong, say where, and pass what is right.
TEST(GemmProblem, WorkAndLeastTrafficModels) {
  Problem p;
  p.m = 3, p.n = 5, p.k = 7;
  EXPECT_EQ(p.flops(), 2.0 * 3 * 5 * 7);
  EXPECT_EQ(p.min_bytes(4, 4), 4.0 * (3 * 7 + 7 * 5 + 3 * 5));        // A, B read; C written
  EXPECT_EQ(p.min_bytes(2, 4), 2.0 * (3 * 7 + 7 * 5) + 4.0 * 3 * 5);  // BF16 operands
  p.op = Op::ABtC;                                                    // C is read too
  EXPECT_EQ(p.flops(), 2.0 * 3 * 5 * 7 + 3 * 5);
  EXPECT_EQ(p.min_bytes(8, 8), 8.0 * (3 * 7 + 7 * 5 + 2 * 3 * 5));
}

TEST(GemmOracle, CatchesOneWrongElementAndNaN) {
  Problem p{Op::AB, 37, 41, 53};
  Case<float> data(p, 1);
  std::vector<float> out(p.c_elems());
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      double v, mag;
      reference_element(p, data.inputs, i, j, v, mag);
      out[i * p.n + j] = float(v);
    }
  EXPECT_TRUE(data.oracle().check(out).passed);
  auto bad = out;
  bad[5 * p.n + 7] += 1e-3f;  // far above K*eps*mag ~ 53*6e-8*13
  auto r = data.oracle().check(bad);
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.message.find("1 of 1517 elements"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("(5,7)"), std::string::npos) << r.message;
  bad = out;
  bad[0] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(data.oracle().check(bad).passed);
  bad.pop_back();
  EXPECT_FALSE(data.oracle().check(bad).passed);
}

// The sampled oracle's columns come from reference_column, which reads
// memory in another order than the element-wise sum: its values must still be
// that sum exactly, for every op's layout, with and without C.
template <class T>
void expect_columns_equal_elements(Op op) {
  const Problem p{op, 37, 29, 45};
  const Inputs<T> in = make_inputs<T>(p, 7);
  std::vector<double> value(p.m), mag(p.m);
  for (std::int64_t j : {std::int64_t(0), std::int64_t(13), p.n - 1}) {
    reference_column(p, in, j, value.data(), mag.data());
    for (std::int64_t i = 0; i < p.m; ++i) {
      double v, m;
      reference_element(p, in, i, j, v, m);
      ASSERT_EQ(value[i], v) << to_string(op) << " (" << i << "," << j << ")";
      ASSERT_EQ(mag[i], m) << to_string(op) << " (" << i << "," << j << ")";
      ASSERT_NE(v, 0.0);
    }
  }
}

TEST(GemmOracle, ColumnsEqualTheElementwiseSumsBitForBit) {
  for (Op op : {Op::AB, Op::AtB, Op::ABtC}) {
    expect_columns_equal_elements<float>(op);
    expect_columns_equal_elements<double>(op);
  }
}

TEST(GemmOracle, ToleranceFollowsKTimesEps) {
  double u = std::numeric_limits<float>::epsilon() / 2;
  EXPECT_NEAR(tolerance<float>(1000), 1000 * u / (1 - 1000 * u), 1e-9);
  EXPECT_GT(tolerance<float>(2000), tolerance<float>(1000));
  EXPECT_LT(tolerance<double>(1000), 1e-12);
}

// TF32 and BF16 problems: inputs rounded to nearest (ties to even) to 10 and
// 7 fraction bits, so every product is exact in float; the bound allows a
// whole float ulp an addition.
TEST(GemmOracle, TensorPrecisionsRoundTheInputsAndLoosenTheBoundToOneUlp) {
  EXPECT_EQ(round_to_fraction_bits(1.0f + 0x1p-11f, 10), 1.0f);                // a tie: to even (down)
  EXPECT_EQ(round_to_fraction_bits(1.0f + 3 * 0x1p-11f, 10), 1.0f + 0x1p-9f);  // a tie: to even (up)
  EXPECT_EQ(round_to_fraction_bits(1.0f + 0x1p-11f + 0x1p-20f, 10), 1.0f + 0x1p-10f);  // above half
  EXPECT_EQ(round_to_fraction_bits(-1.0f - 0x1p-8f, 7), -1.0f);                        // a tie, negative
  EXPECT_EQ(round_to_fraction_bits(-1.0f - 0x1p-7f - 0x1p-8f, 7), -1.0f - 0x1p-6f);    // a tie, odd: away
  EXPECT_EQ(round_to_fraction_bits(0.3f, 7), 0.30078125f);  // 0.3 -> 77 / 256 (1.00110011... -> 1.0011010)
  for (Precision prec : {Precision::TF32, Precision::BF16}) {
    const Problem p{Op::AB, 5, 6, 7, prec};
    const auto in = make_inputs<float>(p, 3);
    const int drop = prec == Precision::TF32 ? 13 : 16;
    int nonzero = 0;
    for (float x : in.a) {
      std::uint32_t u;
      std::memcpy(&u, &x, sizeof u);
      EXPECT_EQ(u & ((1u << drop) - 1), 0u) << x << " keeps dropped bits";
      nonzero += x != 0.0f;
    }
    EXPECT_EQ(nonzero, 35);
    EXPECT_NE(make_inputs<float>(p, 3).a, make_inputs<float>(Problem{Op::AB, 5, 6, 7}, 3).a);
  }
  const double u = std::numeric_limits<float>::epsilon(), ud = std::numeric_limits<double>::epsilon() / 2;
  EXPECT_DOUBLE_EQ(tensor_tolerance(1000), 1000 * u / (1 - 1000 * u) + 1000 * ud / (1 - 1000 * ud));
  EXPECT_DOUBLE_EQ(tolerance_for<float>(Problem{Op::AB, 1, 1, 1, Precision::BF16}, 9), tensor_tolerance(9));
  EXPECT_DOUBLE_EQ(tolerance_for<float>(Problem{Op::AB, 1, 1, 1}, 9), tolerance<float>(9));
}

// The grouped tile order of DMMA and Pipelined: groups of `group` tile rows,
// down each column of a group; the last group may be shorter; every tile
// exactly once.
TEST(GemmRaster, GroupedOrderWalksEachGroupColumnByColumnAndCoversEveryTileOnce) {
  auto at = [](std::int64_t t, std::int64_t tm, std::int64_t tn, std::int64_t g) {
    const TileCoord c = grouped_tile(t, tm, tn, g);
    return std::to_string(c.tm) + "," + std::to_string(c.tn);
  };
  // 5 x 3 tiles, groups of 2 rows: rows {0, 1}, {2, 3}, then {4} alone.
  const std::vector<std::string> expect = {"0,0", "1,0", "0,1", "1,1", "0,2", "1,2", "2,0", "3,0",
                                           "2,1", "3,1", "2,2", "3,2", "4,0", "4,1", "4,2"};
  for (std::int64_t t = 0; t < 15; ++t) EXPECT_EQ(at(t, 5, 3, 2), expect[std::size_t(t)]) << "block " << t;
  for (auto [tm, tn, g] :
       {std::array<std::int64_t, 3>{1, 1, 8}, {7, 5, 8}, {17, 3, 8}, {64, 64, 8}, {9, 1, 4}}) {
    std::set<std::pair<std::int64_t, std::int64_t>> seen;
    for (std::int64_t t = 0; t < tm * tn; ++t) {
      const TileCoord c = grouped_tile(t, tm, tn, g);
      ASSERT_TRUE(c.tm >= 0 && c.tm < tm && c.tn >= 0 && c.tn < tn) << tm << "x" << tn << " block " << t;
      seen.insert({c.tm, c.tn});
    }
    EXPECT_EQ(std::int64_t(seen.size()), tm * tn) << tm << "x" << tn << " group " << g;
  }
}

// CUDA.WGMMA's work schedule (gemm/cuda/streamk.hpp), run on the CPU for
// many unit counts, K lengths, GPU sizes and thresholds. Every K tile of
// every unit is covered once, stream-K tiles by the share share_of names;
// stream-K only from min_rounds full rounds on
// and only for the last partial round; every cluster with a share is in the
// grid; a split unit has at most three parts, and its finisher's piece is
// the last in the finisher's order while every other piece of it comes
// first in its own cluster's order (or is that cluster's whole share), so a
// finisher waits only for clusters of lower index that posted early.
TEST(GemmStreamK, ScheduleCoversEveryTileOnceAndFinishersWaitOnlyDownward) {
  using streamk::plan;
  // 4096^3 BF16 on an H200 (256 units, 66 clusters): no stream-K; 8192^3
  // (1024 units, 128 K tiles): the last 34 units over 66 shares.
  const auto s4096 = plan(256, 66, 64, 8), s8192 = plan(1024, 66, 128, 8);
  EXPECT_EQ(s4096.dp_units, 256);
  EXPECT_EQ(s4096.clusters, 66);
  EXPECT_EQ(s8192.dp_units, 990);
  EXPECT_EQ(s8192.shares, 66);
  EXPECT_EQ(s8192.parts, 3);
  EXPECT_EQ(s8192.clusters, 66);
  // Forced below one round: one unit of 3 K tiles over 3 shares, and the
  // grid holds all 3 clusters, not one a unit.
  const auto s1 = plan(1, 66, 3, 0);
  EXPECT_EQ(s1.dp_units, 0);
  EXPECT_EQ(s1.shares, 3);
  EXPECT_EQ(s1.parts, 3);
  EXPECT_EQ(s1.clusters, 66);

  int split_units = 0;
  for (int min_rounds : {0, 8})
    for (int resident : {1, 2, 7, 57, 66})
      for (std::int64_t units : {1, 2, 5, 17, 65, 66, 67, 131, 133, 300, 529, 1024})
        for (int ktiles : {1, 2, 3, 16, 64, 127}) {
          const auto s = plan(units, resident, ktiles, min_rounds);
          const std::string at = std::to_string(units) + " units, " + std::to_string(ktiles) + " K tiles, " +
                                 std::to_string(resident) + " clusters, from " + std::to_string(min_rounds);
          const std::int64_t rounds = units / resident;
          const bool sk = s.dp_units < s.units;
          ASSERT_EQ(s.units, units) << at;
          ASSERT_EQ(sk, rounds >= min_rounds && units % resident != 0) << at;
          if (sk) {
            ASSERT_EQ(s.dp_units, rounds * resident) << at;
          }
          ASSERT_LE(s.clusters, resident) << at;
          ASSERT_LE(s.shares, s.clusters) << at;
          const std::int64_t left = units - s.dp_units;
          std::vector<int> dp_seen(std::size_t(s.dp_units), 0), tile_owner(std::size_t(left * ktiles), -1);
          struct Piece {
            int c, order, last;
          };
          std::map<int, std::vector<Piece>> pieces;  // split units' pieces
          for (int c = 0; c < s.clusters; ++c) {
            std::vector<std::array<int, 3>> mine;
            streamk::for_each_piece(s, ktiles, c, s.clusters, [&](int u, int k0, int k1) {
              mine.push_back({u, k0, k1});
            });
            int order = 0, sk_pieces = 0;
            for (const auto& [u, k0, k1] : mine) sk_pieces += u >= s.dp_units;
            for (const auto& [u, k0, k1] : mine) {
              ASSERT_LT(k0, k1) << at;
              if (u < s.dp_units) {
                ASSERT_EQ(u % s.clusters, c) << at;
                ASSERT_TRUE(k0 == 0 && k1 == ktiles) << at;
                ++dp_seen[std::size_t(u)];
                continue;
              }
              for (int k = k0; k < k1; ++k) {
                int& owner = tile_owner[std::size_t((u - s.dp_units) * std::int64_t(ktiles) + k)];
                ASSERT_EQ(owner, -1) << at << ": unit " << u << " K tile " << k << " twice";
                owner = c;
              }
              if (k1 - k0 < ktiles) pieces[u].push_back({c, order, sk_pieces - 1});
              ++order;
            }
          }
          for (int n : dp_seen) ASSERT_EQ(n, 1) << at;
          for (int owner : tile_owner) ASSERT_NE(owner, -1) << at;
          const long long T = left * ktiles;
          for (long long i = 0; i < T; ++i)
            ASSERT_EQ(streamk::share_of(i, T, s.shares), tile_owner[std::size_t(i)])
                << at << ": K tile " << i;
          for (const auto& [u, ps] : pieces) {
            ++split_units;
            const auto split = streamk::split_of(T, s.shares, u - s.dp_units, ktiles);
            ASSERT_EQ(int(ps.size()), split.finisher - split.lowest + 1) << at << ": unit " << u;
            ASSERT_LE(int(ps.size()), std::min(3, s.parts)) << at;
            for (const Piece& p : ps) {
              ASSERT_TRUE(p.c >= split.lowest && p.c <= split.finisher) << at;
              if (p.c == split.finisher) {
                ASSERT_EQ(p.order, p.last) << at << ": unit " << u << " finished before the cluster's end";
              } else {
                ASSERT_EQ(p.order, 0) << at << ": unit " << u << " posted after other stream-K work";
              }
            }
          }
        }
  EXPECT_GT(split_units, 1000);  // the loop reaches split units, many of them
}

// The tuned table: a problem takes the choice of the swept shape nearest in
// log2(M N K), per variant, op and type; a forced tile wins; none: default 0.
TEST(GemmTuning, NearestSweptShapeChoosesAndForcedOrStaleTilesAreHandled) {
  const std::vector<TunedTile> table = {{"K", "AB", "f32", 1024, 1024, 1024, "small"},
                                        {"K", "AB", "f32", 4096, 4096, 4096, "large"},
                                        {"K", "AtB", "f32", 1024, 1024, 1024, "atb"},
                                        {"K", "AB", "f64", 1024, 1024, 1024, "double"}};
  auto pick = [&](Op op, std::int64_t m, std::int64_t n, std::int64_t k, const char* type) {
    return tuned_tile(table, "K", Problem{op, m, n, k}, type);
  };
  EXPECT_EQ(pick(Op::AB, 1024, 1024, 1024, "f32"), "small");
  EXPECT_EQ(pick(Op::AB, 2048, 2048, 1024, "f32"), "small");  // 2^32: 2 from 2^30, 4 from 2^36 -> small
  EXPECT_EQ(pick(Op::AB, 2048, 2048, 2048, "f32"), "small");  // 2^33 to 2^30 and 2^36: a tie keeps the first
  EXPECT_EQ(pick(Op::AB, 4096, 4096, 2048, "f32"), "large");  // 2^35
  EXPECT_EQ(pick(Op::AB, 8192, 8192, 8192, "f32"), "large");
  EXPECT_EQ(pick(Op::AtB, 8192, 8192, 8192, "f32"), "atb");
  EXPECT_EQ(pick(Op::AB, 8, 8, 8, "f64"), "double");
  EXPECT_EQ(pick(Op::ABtC, 1024, 1024, 1024, "f32"), "");
  EXPECT_EQ(tuned_tile(table, "Other", Problem{Op::AB, 1024, 1024, 1024}, "f32"), "");
  const std::vector<std::string> names{"a", "b"};
  EXPECT_EQ(choose_tile("K", names, 1, Problem{}, "f32", 90), 1);
  EXPECT_THROW(choose_tile("K", names, 2, Problem{}, "f32", 90), std::logic_error);
  EXPECT_EQ(choose_tile("K", names, -1, Problem{}, "f32", 75), 0);  // no table for sm_75
  EXPECT_TRUE(tuned_table(75).empty());
  // TileChoice: the same answers through the cache, for each new shape.
  static const std::vector<std::string> two{"a", "b"};
  auto list = []() -> const std::vector<std::string>& { return two; };
  TileChoice forced("K", list, "f32", 1), out_of_range("K", list, "f32", 2), by_table("K", list, "f32", -1);
  forced.set_sm(90), out_of_range.set_sm(90), by_table.set_sm(75);
  EXPECT_EQ(forced(Problem{Op::AB, 8, 8, 8}), 1);
  EXPECT_EQ(forced(Problem{Op::AtB, 9, 8, 8}), 1);
  EXPECT_THROW(out_of_range(Problem{Op::AB, 8, 8, 8}), std::logic_error);
  EXPECT_EQ(by_table(Problem{Op::AB, 8, 8, 8}), 0);
}

#ifdef PARBENCH_WITH_CUDA
// Every configuration the committed sm_90 table names exists in its kernel.
TEST(GemmTuning, TheCommittedTableNamesOnlyTilesTheKernelsHave) {
  for (const auto& t : tuned_table(90)) {
    const auto& names = std::string(t.variant) == "CUDA.DMMA" ? dmma_tiles() : pipelined_tiles();
    EXPECT_TRUE(std::string(t.variant) == "CUDA.DMMA" || std::string(t.variant) == "CUDA.Pipelined")
        << t.variant;
    EXPECT_NE(std::find(names.begin(), names.end(), t.tile), names.end()) << t.variant << " " << t.tile;
  }
}
#endif

// Above kFullCheckWork the oracle samples lines and runs Freivalds' test:
// an error in a row it did not sample must still be caught.
TEST(GemmOracle, SampledModeCatchesAnErrorOutsideTheSampledLines) {
  Problem p{Op::AtB, 2048, 2048, 1100};  // 4.6e9 multiply-adds > 2^32
  Case<float> data(p, 2);
  auto v = find_entry(registry<float>(), "OpenBLAS")->make(Knobs{2, 0});
  v->prepare(p, data.inputs);
  v->run();
  std::vector<float> out;
  v->result(out);
  auto r = data.oracle().check(out);
  ASSERT_FALSE(data.oracle().full());
  EXPECT_TRUE(r.passed) << r.message;
  EXPECT_EQ(r.method, "sampled+freivalds");
  // Corrupt one element grossly (elements are ~ +-11 here) until one lies
  // outside every sampled row, column and point: Freivalds must catch it.
  std::int64_t row = -1;
  for (std::int64_t i = 1; i < p.m - 1 && row < 0; ++i) {
    auto bad = out;
    bad[i * p.n + (i * 37 + 11) % p.n] += 1000.0f;
    auto rr = data.oracle().check(bad);
    ASSERT_FALSE(rr.passed) << "row " << i;
    if (rr.message.find("Freivalds") != std::string::npos) row = i;
  }
  EXPECT_GE(row, 0) << "every corrupted row was a sampled row?";
}

}  // namespace
