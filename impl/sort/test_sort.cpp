// Registry-driven sorting correctness: every variant with each knob value, on
// lengths that are not powers of two (1, 2, 3, 1023, 1025, 1,000,003), every
// distribution, both key types, keys only and pairs, both orders, and batches;
// output sorted and a permutation of the input, values with their keys, and
// stability where a variant claims it. Plus the reference against
// std::stable_sort and the verifier against broken outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <type_traits>

#include "core/gpu.hpp"
#include "core/options.hpp"
#include "sort/cuda/odd_even_windows.hpp"
#include "sort/registry.hpp"
#include "sort/sort.hpp"
#include "tests/gpu_test.hpp"
#include "tests/variant_cases.hpp"

using namespace pb;
using namespace pb::sort;

namespace {

using pb::testing::VariantCase;
// Blocks 32 and 1024, the smallest and largest legal (1024 exposed a pass
// whose registers did not fit a 1024-thread block).
std::vector<VariantCase> all_variants() { return pb::testing::variant_cases(registry(), 32, 1024); }
const sort::Entry& find(const std::string& name) { return pb::testing::find_variant(registry(), name); }

Problem make(std::int64_t n, std::int64_t length, Key key, Payload pay, Order order, Dist dist) {
  Problem p;
  p.n = n, p.length = length, p.key = key, p.payload = pay, p.order = order, p.dist = dist;
  return p;
}

class SortVariants : public ::testing::TestWithParam<VariantCase> {
 protected:
  void SetUp() override {
    if (on_gpu(entry().backend)) PB_SKIP_WITHOUT_GPU();
  }
  const sort::Entry& entry() const { return find(GetParam().name); }
  // Runs p, then other inputs of p's shape on the same variant, and verifies each.
  // Returns false (and records why) when the variant does not support p.
  bool expect_sorted(const Problem& p) {
    auto v = entry().make(GetParam().knobs);
    auto s = v->supports(p);
    if (!s.ok()) {
      EXPECT_TRUE(!entry().traits.batched && p.batch() > 1)
          << "unexpectedly unsupported " << p.str() << ": " << s.reason;
      return false;
    }
    // Round 1 on p; round 2 on the same variant prepared again with other
    // inputs of the same shape, so a reset() that failed to stage the new
    // unsorted input (in-place variants) shows; round 3 repeats round 2.
    Problem q = p;
    q.dist = p.dist == Dist::Reversed ? Dist::Uniform : Dist::Reversed;
    Case first(p, 0x1234), second(q, 0x1234);  // alive while the variant points at them
    for (int round = 0; round < 3; ++round) {
      const Problem& r = round == 0 ? p : q;
      Case& c = round == 0 ? first : second;
      if (round < 2) v->prepare(r, c.inputs);
      Output out;
      v->reset();
      v->run();
      v->result(out);
      auto chk = verify(r, c.inputs, c.ref(), out, v->stable());
      EXPECT_TRUE(chk.passed) << "round " << round << " " << r.str() << ": " << chk.message;
    }
    return true;
  }
};

TEST_P(SortVariants, AwkwardLengthsOneArray) {
  for (std::int64_t n : {1, 2, 3, 1023, 1025, 1000003}) {
    expect_sorted(make(n, n, Key::U32, Payload::Pairs, Order::Asc, Dist::Uniform));
    expect_sorted(make(n, n, Key::F32, Payload::Keys, Order::Desc, Dist::Uniform));
  }
}

TEST_P(SortVariants, TileEdges) {
  // 300 pads to 512, one warp's register tile in CUDA.Bitonic (the
  // smallest, its last stage through layout 8 and back), 512 exactly;
  // CUDA.Radix's tiles are 7680 keys: a full last tile, and one key past it.
  for (std::int64_t n : {300, 512, 3 * 7680, 3 * 7680 + 1}) {
    expect_sorted(make(n, n, Key::U32, Payload::Pairs, Order::Asc, Dist::Uniform));
    expect_sorted(make(n, n, Key::F32, Payload::Keys, Order::Desc, Dist::FewUnique));
  }
  // CUDA.BitonicMerge's first tile is 8,192 pairs or 16,384 keys: the whole
  // array (no merge follows; unpacked apart, or the keys read in place), and
  // twice that, one merge pass.
  for (std::int64_t n : {8192, 16384, 32768}) {
    expect_sorted(make(n, n, Key::U32, Payload::Pairs, Order::Asc, Dist::Uniform));
    expect_sorted(make(n, n, Key::U32, Payload::Keys, Order::Asc, Dist::Uniform));
  }
}

TEST_P(SortVariants, EveryDistributionKeyPayloadAndOrder) {
  for (Dist d : {Dist::Uniform, Dist::Sorted, Dist::Reversed, Dist::FewUnique, Dist::AllEqual})
    for (Key k : {Key::U32, Key::F32})
      for (Payload pay : {Payload::Keys, Payload::Pairs})
        for (Order o : {Order::Asc, Order::Desc}) expect_sorted(make(4099, 4099, k, pay, o, d));
}

TEST_P(SortVariants, PowerOfTwoInPlacePath) {
  // u32 ascending keys with a power-of-two length: the networks sort in place.
  expect_sorted(make(1 << 16, 1 << 16, Key::U32, Payload::Keys, Order::Asc, Dist::Uniform));
  expect_sorted(make(1 << 16, 1 << 16, Key::U32, Payload::Keys, Order::Asc, Dist::FewUnique));
}

TEST_P(SortVariants, BeyondOneBlockOfSharedMemory) {
  // 2^17 + 3 pads to 2^18: CUDA.Bitonic's strided passes of 1 to 6 steps
  // above its tile, the samples' kernels of OddEvenMerge for any block.
  expect_sorted(make((1 << 17) + 3, (1 << 17) + 3, Key::U32, Payload::Pairs, Order::Desc, Dist::FewUnique));
  if (on_gpu(entry().backend)) {
    // Bitonic's strided passes of 8 steps and then 1 (pairs: 4,096-word
    // tiles; keys: 8,192), in place and packed, one array and two.
    expect_sorted(make(1 << 21, 1 << 21, Key::F32, Payload::Pairs, Order::Asc, Dist::Uniform));
    expect_sorted(make(1 << 22, 1 << 22, Key::U32, Payload::Keys, Order::Asc, Dist::Uniform));
    expect_sorted(make(1 << 23, 1 << 22, Key::U32, Payload::Keys, Order::Desc, Dist::Reversed));
    // Three padded arrays of pairs merged above the tile (300,000 pads to
    // 2^19: CUDA.BitonicMerge's merges stop at each array's end, its last
    // pass unpacks only the first 300,000 of each).
    expect_sorted(make(3 * 300000, 300000, Key::F32, Payload::Pairs, Order::Asc, Dist::FewUnique));
  }
}

TEST_P(SortVariants, Batches) {
  const bool a = expect_sorted(make(1025 * 6, 1025, Key::U32, Payload::Pairs, Order::Asc, Dist::Uniform));
  const bool b = expect_sorted(make(64 * 7, 64, Key::F32, Payload::Keys, Order::Desc, Dist::Uniform));
  const bool c = expect_sorted(make(1 << 15, 1 << 12, Key::U32, Payload::Keys, Order::Asc, Dist::Reversed));
  const bool d = expect_sorted(make(3 * 5, 3, Key::U32, Payload::Pairs, Order::Desc, Dist::AllEqual));
  EXPECT_EQ(a && b && c && d, entry().traits.batched) << "batched support must match the registry";
}

PB_INSTANTIATE_CPU_AND_GPU(SortVariants, all_variants());

// ---- reference, inputs, verifier -------------------------------------------

std::vector<std::uint32_t> stable_sort_indices(const Problem& p, const Inputs& in) {
  std::vector<std::uint32_t> idx(static_cast<std::size_t>(p.n));
  for (std::int64_t a = 0; a < p.batch(); ++a) {
    auto first = idx.begin() + a * p.length, last = first + p.length;
    for (std::int64_t i = 0; i < p.length; ++i) first[i] = std::uint32_t(a * p.length + i);
    std::stable_sort(first, last, [&](std::uint32_t x, std::uint32_t y) {
      const auto ox = ord(p.key, in.keys[x]), oy = ord(p.key, in.keys[y]);
      return p.order == Order::Desc ? oy < ox : ox < oy;
    });
  }
  return idx;
}

TEST(SortReference, IsStdStableSort) {
  for (Key k : {Key::U32, Key::F32})
    for (Order o : {Order::Asc, Order::Desc})
      for (Dist d : {Dist::Uniform, Dist::FewUnique, Dist::AllEqual, Dist::Reversed})
        for (std::int64_t len : {std::int64_t(100003), std::int64_t(77)}) {
          auto p = make(len == 77 ? 77 * 13 : len, len, k, Payload::Pairs, o, d);
          auto in = make_inputs(p, 99);
          EXPECT_EQ(reference(p, in), stable_sort_indices(p, in)) << p.str();
        }
}

TEST(SortInputs, DistributionsHaveTheirShape) {
  const std::int64_t n = 100000;
  auto f = make_inputs(make(n, n, Key::F32, Payload::Keys, Order::Asc, Dist::Uniform), 7);
  std::set<std::uint32_t> specials(f.keys.begin(), f.keys.end());
  EXPECT_TRUE(specials.count(0x80000000u)) << "-0.0";
  EXPECT_TRUE(specials.count(0u)) << "+0.0";
  EXPECT_TRUE(specials.count(0x7f800000u) && specials.count(0xff800000u)) << "infinities";
  std::int64_t negative = 0;
  for (auto b : f.keys) {
    float x;
    std::memcpy(&x, &b, 4);
    EXPECT_FALSE(x != x) << "no NaN";
    negative += x < 0;
  }
  EXPECT_GT(negative, n / 3);
  auto u = make_inputs(make(n, n, Key::U32, Payload::Keys, Order::Asc, Dist::Uniform), 7);
  EXPECT_GT(std::set<std::uint32_t>(u.keys.begin(), u.keys.end()).size(), std::size_t(n * 0.99));
  auto s = make_inputs(make(n, 1000, Key::U32, Payload::Keys, Order::Asc, Dist::Sorted), 7);
  for (std::int64_t a = 0; a < 100; ++a)
    EXPECT_TRUE(std::is_sorted(s.keys.begin() + a * 1000, s.keys.begin() + (a + 1) * 1000));
  auto r = make_inputs(make(n, n, Key::F32, Payload::Keys, Order::Asc, Dist::Reversed), 7);
  for (std::int64_t i = 1; i < n; ++i) ASSERT_GE(ord(Key::F32, r.keys[i - 1]), ord(Key::F32, r.keys[i]));
  auto few = make_inputs(make(n, n, Key::F32, Payload::Keys, Order::Asc, Dist::FewUnique), 7);
  EXPECT_LE(std::set<std::uint32_t>(few.keys.begin(), few.keys.end()).size(), 16u);
  EXPECT_GE(std::set<std::uint32_t>(few.keys.begin(), few.keys.end()).size(), 8u);
  auto eq = make_inputs(make(n, n, Key::U32, Payload::Keys, Order::Asc, Dist::AllEqual), 7);
  EXPECT_EQ(std::set<std::uint32_t>(eq.keys.begin(), eq.keys.end()).size(), 1u);
  EXPECT_NE(eq.keys[0], 0u);
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(u.values[i], std::uint32_t(i));
}

TEST(SortVerify, RejectsBrokenOutputs) {
  const std::int64_t n = 5000;
  auto p = make(n, 1000, Key::F32, Payload::Pairs, Order::Asc, Dist::FewUnique);
  auto in = make_inputs(p, 3);
  auto ref = reference(p, in);
  Output good;
  for (auto i : ref) good.keys.push_back(in.keys[i]), good.values.push_back(i);
  ASSERT_TRUE(verify(p, in, ref, good, true).passed);

  auto bad = good;  // two keys swapped across a key boundary
  std::int64_t j = 1;
  while (ord(p.key, bad.keys[j]) == ord(p.key, bad.keys[j - 1])) ++j;
  std::swap(bad.keys[j], bad.keys[j - 1]);
  std::swap(bad.values[j], bad.values[j - 1]);
  EXPECT_FALSE(verify(p, in, ref, bad, false).passed);

  bad = good;  // a value that did not travel with its key
  std::swap(bad.values[j], bad.values[j - 1]);
  EXPECT_FALSE(verify(p, in, ref, bad, false).passed);

  bad = good;  // equal keys reordered: fine unless stability is claimed
  j = 1;
  while (ord(p.key, bad.keys[j]) != ord(p.key, bad.keys[j - 1]) || bad.keys[j] != bad.keys[j - 1]) ++j;
  std::swap(bad.values[j], bad.values[j - 1]);
  EXPECT_TRUE(verify(p, in, ref, bad, false).passed);
  EXPECT_FALSE(verify(p, in, ref, bad, true).passed);

  bad = good;  // -0.0 turned into +0.0
  j = 0;
  while (bad.keys[j] != 0x80000000u) ++j;
  bad.keys[j] = 0;
  EXPECT_FALSE(verify(p, in, ref, bad, false).passed);

  bad = good;  // a value from another array
  std::swap(bad.values[999], bad.values[1000]);
  std::swap(bad.keys[999], bad.keys[1000]);
  EXPECT_FALSE(verify(p, in, ref, bad, false).passed);

  bad = good;  // keys-only: a duplicated key
  p.payload = Payload::Keys;
  bad.values.clear();
  j = 1;
  while (ord(p.key, bad.keys[j]) == ord(p.key, bad.keys[j - 1])) ++j;
  bad.keys[j] = bad.keys[j - 1];  // still sorted, but one key lost and one doubled
  EXPECT_FALSE(verify(p, in, ref, bad, false).passed);
}

TEST(SortProblem, BadShapesAreUsageErrors) {
  EXPECT_THROW(validate(make(1000, 3, Key::U32, Payload::Keys, Order::Asc, Dist::Uniform)), UsageError);
  EXPECT_THROW(validate(make(0, 1, Key::U32, Payload::Keys, Order::Asc, Dist::Uniform)), UsageError);
  EXPECT_THROW(validate(make(8, 16, Key::U32, Payload::Keys, Order::Asc, Dist::Uniform)), UsageError);
  EXPECT_THROW(
      validate(make(kMaxElements * 2, kMaxElements * 2, Key::U32, Payload::Keys, Order::Asc, Dist::Uniform)),
      UsageError);
  EXPECT_NO_THROW(validate(make(1000, 8, Key::U32, Payload::Keys, Order::Asc, Dist::Uniform)));
  EXPECT_THROW(parse_key("u64"), UsageError);
  EXPECT_THROW(parse_dist("gaussian"), UsageError);
  EXPECT_EQ(parse_counts("--elements", "2^24,1000003", 1 << 30),
            (std::vector<std::int64_t>{1 << 24, 1000003}));
  EXPECT_EQ(parse_counts("--length", "all,64", 1 << 30, true), (std::vector<std::int64_t>{0, 64}));
  EXPECT_THROW(parse_counts("--elements", "-5", 1 << 30), UsageError);
  EXPECT_THROW(parse_counts("--elements", "2^31", 1 << 30), UsageError);
  EXPECT_THROW(parse_counts("--elements", "all", 1 << 30), UsageError);
}

}  // namespace

// ---- CUDA.OddEvenMerge.Windows's plan and step, on the host -----------------

namespace {

// Each merge of size 2p > W gets its strides p, p / 2, ..., 1 once each, in
// order; a haloed pass's halo covers the sum of its strides; a window fits W
// words and starts on a multiple of twice its largest stride.
void expect_plan_sound(std::int64_t W, std::int64_t P) {
  const auto plan = windows::plan(W, P);
  std::int64_t p = std::min(W, P), next = p;
  for (const auto& x : plan) {
    if (x.p != p) {
      EXPECT_EQ(next, 0) << "merge " << p << " left strides from " << next;
      EXPECT_EQ(x.p, 2 * p) << "a merge skipped";
      p = x.p;
      next = p;
    }
    // The GPU's blocks, one grid axis: windows x residue groups, for one
    // array of P words.
    EXPECT_LE((P / x.q + x.J - 1) / x.J * (x.q / x.C), std::int64_t(0x7fffffff));
    const std::int64_t top = x.khi / x.q;
    EXPECT_EQ(x.khi, next) << "W " << W << " P " << P << " p " << p;
    EXPECT_EQ(x.khi % x.q, 0);
    EXPECT_EQ(x.q % x.C, 0);
    EXPECT_GT(x.J, 0);
    EXPECT_LE(std::int64_t(x.J + 2 * x.H) * x.C, W);
    EXPECT_EQ(x.J % (2 * top), 0);
    EXPECT_EQ(x.H % (2 * top), 0);
    if (x.khi == x.p) {
      EXPECT_EQ(x.H, 0);  // a merge's first steps: windows of whole blocks of 2p
    } else {
      EXPECT_GE(x.H, 2 * top - 1);
    }
    next = x.q / 2;
  }
  if (!plan.empty()) {
    EXPECT_EQ(next, 0) << "the last merge left strides";
  }
  EXPECT_EQ(p, std::max(std::min(W, P), P / 2));
}

// One step as a block of 64 threads makes it, thread after thread (a step's
// pairs are disjoint, so the order does not matter).
template <class T, int C>
void step_as_block(T* s, int rows, std::int64_t j0, std::int64_t N, std::int64_t p, int k) {
  constexpr int kThreads = 64;
  for (int th = 0; th < kThreads; ++th) windows::step<T, C>(s, rows, j0, N, p, k, th, kThreads);
}

// The GPU's geometry for the aligned passes in registers: 512 threads, so
// 16 rows of 32 residues at once, and W / 512 rows a thread (kRegs).
constexpr int kDt = 16;

// The GPU's passes, block after block: a window read from `in` (as the pass
// started), its steps, its centre written to `out`; in_registers counts the
// aligned passes of whole windows that took the registers' path.
template <class T, int kRegs = 8>
std::vector<T> sort_in_windows(std::vector<T> w, std::int64_t W, std::int64_t P, int* in_registers) {
  const std::int64_t total = std::int64_t(w.size()), S = std::min(W, next_pow2(total));
  std::vector<T> tile(std::size_t(S), T(0));
  for (std::int64_t base = 0; base < total; base += S) {
    const std::int64_t n = std::min(S, total - base);
    std::copy(w.begin() + base, w.begin() + base + n, tile.begin());
    for (std::int64_t p = 1; p < S && p < P; p <<= 1)
      for (std::int64_t k = p; k >= 1; k >>= 1)
        step_as_block<T, 1>(tile.data(), int(S), base, total, p, int(k));
    std::copy(tile.begin(), tile.begin() + n, w.begin() + base);
  }
  for (const auto& x : windows::plan(W, P)) {
    EXPECT_EQ(x.C == 1, x.q == 1);  // the GPU picks its kernel by C
    const std::vector<T> in = w;
    const int rows = x.J + 2 * x.H;
    const std::int64_t N = total / x.q;
    std::vector<T> s(std::size_t(rows) * x.C);
    for (std::int64_t r0 = 0; r0 < x.q; r0 += x.C)
      for (std::int64_t j0 = -x.H; j0 + x.H < N; j0 += x.J) {
        for (int e = 0; e < rows * x.C; ++e) {
          const std::int64_t j = j0 + e / x.C;
          s[std::size_t(e)] = j >= 0 && j < N ? in[std::size_t(r0 + e % x.C + x.q * j)] : T(0);
        }
        std::int64_t k = x.khi / x.q;
        if (x.C == 32 && x.H == 0 && rows == kDt * kRegs && k == rows / 2 && j0 + rows <= N) {
          // The GPU's aligned passes: thread (w, c) keeps rows w + kDt n of
          // residue c in registers for the strides of kDt and up.
          for (int w = 0; w < kDt; ++w)
            for (int c = 0; c < 32; ++c) {
              T v[kRegs];
              for (int n = 0; n < kRegs; ++n) v[n] = s[std::size_t((w + kDt * n) * 32 + c)];
              windows::merge_in_registers<T, kRegs>(v);
              for (int n = 0; n < kRegs; ++n) s[std::size_t((w + kDt * n) * 32 + c)] = v[n];
            }
          k = kDt / 2;
          ++*in_registers;
        }
        for (; k >= 1; k >>= 1) {
          if (x.C == 1)
            step_as_block<T, 1>(s.data(), rows, j0, N, x.p / x.q, int(k));
          else
            step_as_block<T, 32>(s.data(), rows, j0, N, x.p / x.q, int(k));
        }
        for (int e = x.H * x.C; e < (x.H + x.J) * x.C; ++e) {
          const std::int64_t j = j0 + e / x.C;
          if (j < N) w[std::size_t(r0 + e % x.C + x.q * j)] = s[std::size_t(e)];
        }
      }
  }
  return w;
}

}  // namespace

TEST(OddEvenWindows, PlanCoversEveryStrideOnce) {
  for (std::int64_t W : {4096, 8192, 16384})
    for (int b = 0; b <= 32; ++b) expect_plan_sound(W, std::int64_t(1) << b);
  // The passes over the data at 2^24 words, the tile sort counted: keys
  // (16,384-word windows) and pairs (8,192).
  EXPECT_EQ(windows::plan(16384, 1 << 24).size() + 1, 24u);
  EXPECT_EQ(windows::plan(8192, 1 << 24).size() + 1, 28u);
}

TEST(OddEvenWindows, HostPassesSortWithTheGpusWindows) {
  // The GPU's own windows: 16,384 words (keys: 32 rows a thread in the
  // aligned passes) and 8,192 (pairs: 16), at sizes that make aligned passes.
  std::uint64_t x = 362436069ull;
  auto next = [&] { return x ^= x << 13, x ^= x >> 7, x ^= x << 17; };
  auto run = [&](auto regs, std::int64_t W, std::int64_t P) {
    std::vector<std::uint32_t> w(static_cast<std::size_t>(P));
    for (auto& v : w) v = std::uint32_t(next() % 100000);
    int in_registers = 0;
    const auto got = sort_in_windows<std::uint32_t, decltype(regs)::value>(w, W, P, &in_registers);
    std::sort(w.begin(), w.end());
    EXPECT_TRUE(got == w) << "W " << W << " P " << P;
    EXPECT_EQ(in_registers, 2 * P / W) << "W " << W << " P " << P;  // p = W and 2W: two aligned passes
  };
  run(std::integral_constant<int, 32>(), 16384, 1 << 16);
  run(std::integral_constant<int, 16>(), 8192, 1 << 15);
}

TEST(OddEvenWindows, MergeInRegistersMergesTwoSortedHalves) {
  // Batcher's odd-even merge of R values: any two ascending halves in, one
  // ascending run out (R = 8, 16 and 32, the GPU's 32 keys and 16 pairs).
  std::uint64_t x = 2463534242ull;
  auto next = [&] { return x ^= x << 13, x ^= x >> 7, x ^= x << 17; };
  auto check = [&](auto tag) {
    constexpr int R = decltype(tag)::value;
    for (int trial = 0; trial < 2000; ++trial) {
      std::uint32_t v[R];
      for (auto& e : v) e = std::uint32_t(next() % (trial % 3 == 0 ? 4 : 1000));
      std::sort(v, v + R / 2);
      std::sort(v + R / 2, v + R);
      std::uint32_t want[R];
      std::copy(v, v + R, want);
      std::sort(want, want + R);
      windows::merge_in_registers<std::uint32_t, R>(v);
      ASSERT_TRUE(std::equal(v, v + R, want)) << "R " << R << " trial " << trial;
    }
  };
  check(std::integral_constant<int, 8>());
  check(std::integral_constant<int, 16>());
  check(std::integral_constant<int, 32>());
}

TEST(OddEvenWindows, HostPassesSort) {
  // 4,096-word windows: every kind of pass at small sizes (haloed windows of
  // residues from P = 2^17; at 2^23 five steps of them in one pass, and four
  // then two in a row), several arrays, tiles of several short arrays with a
  // short last tile, keys with many equal values.
  std::uint64_t x = 88172645463325252ull;
  auto next = [&] { return x ^= x << 13, x ^= x >> 7, x ^= x << 17; };
  const std::pair<std::int64_t, int> cases[] = {{64, 1000},   {1 << 11, 1}, {1 << 11, 3}, {1 << 14, 3},
                                                {1 << 17, 1}, {1 << 17, 3}, {1 << 19, 3}, {1 << 23, 1}};
  for (const auto& [P, batch] : cases) {
    std::vector<std::uint32_t> w(std::size_t(P * batch));
    for (auto& v : w) v = std::uint32_t(next() % std::uint64_t(P / 3 + 1));
    int in_registers = 0;
    const auto got = sort_in_windows(w, 4096, P, &in_registers);
    // Every aligned pass of whole windows took the registers' path.
    const auto plan = windows::plan(4096, P);
    EXPECT_EQ(in_registers, std::count_if(plan.begin(), plan.end(),
                                          [&](const windows::Pass& x) { return x.C == 32 && x.H == 0; }) *
                                (std::int64_t(batch) * P / 4096))
        << "P " << P;
    for (int a = 0; a < batch; ++a) {
      std::sort(w.begin() + a * P, w.begin() + (a + 1) * P);
      EXPECT_TRUE(std::equal(w.begin() + a * P, w.begin() + (a + 1) * P, got.begin() + a * P))
          << "P " << P << " array " << a;
    }
  }
}
