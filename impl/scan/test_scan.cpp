// Registry-driven scan correctness: every variant (threads 1 and 3) on
// awkward lengths (1, 31, 2^k +- 1 around the tiles, 10^6 + 3), u32 exactly
// and f32 to its bound, whole and segmented (segments of mean length 1, 7
// and 1000, and one segment); run twice, so a variant that keeps state
// between runs (the look-back's epochs) shows it. Plus the reference and
// the verifier against broken outputs.
#include <gtest/gtest.h>

#include <cstring>

#include "scan/registry.hpp"
#include "tests/gpu_test.hpp"
#include "tests/variant_cases.hpp"

using namespace pb;
using namespace pb::scan;

namespace {

using pb::testing::VariantCase;
std::vector<VariantCase> all_variants() { return pb::testing::variant_cases(registry(), 256, 512); }

Problem make(Type t, std::int64_t n, std::int64_t segment) {
  Problem p;
  p.type = t, p.n = n, p.segment = segment;
  return p;
}

class ScanVariants : public ::testing::TestWithParam<VariantCase> {
 protected:
  void SetUp() override {
    if (GetParam().gpu) PB_SKIP_WITHOUT_GPU();
  }
  void expect_scanned(const Problem& p) {
    const auto& e = pb::testing::find_variant(registry(), GetParam().name);
    auto v = e.make(GetParam().knobs);
    ASSERT_TRUE(v->supports(p).ok()) << p.str();
    const Inputs in = make_inputs(p, 0x5ca7);
    const Reference ref = reference(p, in);
    v->prepare(p, in);
    for (int round = 0; round < 2; ++round) {
      v->run();
      Output out;
      v->result(out);
      const Check c = verify(p, in, ref, out);
      EXPECT_TRUE(c.passed) << GetParam().label << " " << p.str() << " round " << round << ": " << c.message;
    }
  }
};

TEST_P(ScanVariants, AwkwardLengths) {
  for (Type t : {Type::U32, Type::F32})
    for (std::int64_t n : {1, 2, 31, 511, 513, 1023, 1025, 4095, 4097, 65535, 65537, 1000003})
      expect_scanned(make(t, n, 0));
}

TEST_P(ScanVariants, Segmented) {
  for (Type t : {Type::U32, Type::F32})
    for (std::int64_t segment : {1, 7, 1000, 5000000})
      for (std::int64_t n : {1, 33, 4097, 300007}) expect_scanned(make(t, n, segment));
}

TEST_P(ScanVariants, ManyTiles) {
  // 2^22 + 3: hundreds of look-back tiles and three levels of the
  // hierarchy's 512-element tiles.
  expect_scanned(make(Type::U32, (1 << 22) + 3, 0));
  expect_scanned(make(Type::F32, (1 << 22) + 3, 100));
}

PB_INSTANTIATE_CPU_AND_GPU(ScanVariants, all_variants());

TEST(ScanReference, SumsAndRestartsAtHeads) {
  const Problem p = make(Type::U32, 6, 2);
  Inputs in;
  in.values = {1, 2, 3, 0xffffffffu, 5, 6};
  in.keys = {0, 0, 1, 1, 1, 2};
  const Reference r = reference(p, in);
  EXPECT_EQ(r.exact, (std::vector<std::uint32_t>{1, 3, 3, 2, 7, 6}));  // 3 + 2^32 - 1 wraps to 2
  const Problem f = make(Type::F32, 3, 0);
  Inputs fin;
  for (float x : {0.5f, -1.0f, 0.25f}) {
    std::uint32_t b;
    std::memcpy(&b, &x, 4);
    fin.values.push_back(b);
  }
  const Reference fr = reference(f, fin);
  EXPECT_EQ(fr.sum, (std::vector<double>{0.5, -0.5, -0.25}));
  EXPECT_EQ(fr.magnitude, (std::vector<double>{0.5, 1.5, 1.75}));
}

TEST(ScanInputs, NoZerosAndSegmentsOfTheMeanLength) {
  const Problem p = make(Type::F32, 1 << 20, 100);
  const Inputs in = make_inputs(p, 7);
  std::int64_t heads = 0;
  for (std::size_t i = 0; i < in.values.size(); ++i) {
    float x;
    std::memcpy(&x, &in.values[i], 4);
    EXPECT_TRUE(x != 0.0f && x >= -1.0f && x <= 1.0f);
    heads += head(in, std::int64_t(i));
    if (i) {
      ASSERT_LE(in.keys[i - 1], in.keys[i]);
    }
  }
  // 2^20 / 100 = 10486 heads expected; 5 standard deviations is about 510.
  EXPECT_NEAR(double(heads), 10486.0, 510.0);
}

TEST(ScanVerify, RejectsBrokenOutputs) {
  const Problem p = make(Type::U32, 1000, 0);
  const Inputs in = make_inputs(p, 3);
  const Reference ref = reference(p, in);
  Output good{ref.exact};
  EXPECT_TRUE(verify(p, in, ref, good).passed);
  Output off = good;
  off.values[999] += 1;  // the last sum
  const Check c = verify(p, in, ref, off);
  EXPECT_FALSE(c.passed);
  EXPECT_NE(c.message.find("1 of 1000 sums wrong, the first at 999"), std::string::npos) << c.message;
  Output shorter = good;
  shorter.values.pop_back();
  EXPECT_FALSE(verify(p, in, ref, shorter).passed);

  // f32: a sum off by more than the bound fails, one inside it passes.
  const Problem f = make(Type::F32, 1000, 0);
  const Inputs fin = make_inputs(f, 3);
  const Reference fref = reference(f, fin);
  Output fout;
  for (double s : fref.sum) {
    const float x = float(s);
    std::uint32_t b;
    std::memcpy(&b, &x, 4);
    fout.values.push_back(b);
  }
  EXPECT_TRUE(verify(f, fin, fref, fout).passed);
  Output fbad = fout;
  const float wrong = float(fref.sum[500] + 4 * kF32Tolerance * fref.magnitude[500]);
  std::memcpy(&fbad.values[500], &wrong, 4);
  EXPECT_FALSE(verify(f, fin, fref, fbad).passed);
}

}  // namespace
