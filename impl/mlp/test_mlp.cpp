// The MLP family's reference: gradients against finite differences, training
// that learns, the problem's checks, the synthetic data and the IDX reader.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "gemm/registry.hpp"
#include "mlp/cpu/host_step.hpp"
#include "mlp/mlp.hpp"
#include "mlp/registry.hpp"
#include "tests/gpu_test.hpp"
#include "tests/variant_cases.hpp"

namespace {
using namespace pb;
using namespace pb::mlp;

Problem small(Activation act) {
  Problem p;
  p.widths = {7, 5, 4, 3};
  p.batch = 6;
  p.act = act;
  p.lr = 0.1;
  return p;
}

class Gradient : public ::testing::TestWithParam<Activation> {};

TEST_P(Gradient, MatchesCentralDifferences) {
  const Problem p = small(GetParam());
  const Data d = synthetic_data(20, 7, 3, 11);
  Params<double> w = initial_params(p, 5);
  Gradients g;
  const double l0 = gradients(p, w, d, 4, g);
  EXPECT_DOUBLE_EQ(l0, loss(p, w, d, 4));
  const double eps = 1e-6;
  int checked = 0;
  for (int bias = 0; bias < 2; ++bias)
    for (std::size_t l = 0; l < w.w.size(); ++l) {
      auto& vals = bias ? w.b[l] : w.w[l];
      const auto& grad = bias ? g.b[l] : g.w[l];
      ASSERT_EQ(vals.size(), grad.size());
      for (std::size_t i = 0; i < vals.size(); ++i) {
        const double keep = vals[i];
        vals[i] = keep + eps;
        const double up = loss(p, w, d, 4);
        vals[i] = keep - eps;
        const double down = loss(p, w, d, 4);
        vals[i] = keep;
        const double fd = (up - down) / (2 * eps);
        // Central differences: error O(eps^2) plus rounding of about 1e-16 / eps.
        EXPECT_NEAR(grad[i], fd, 1e-8 + 1e-6 * std::fabs(fd))
            << "layer " << l << (bias ? " bias " : " weight ") << i;
        ++checked;
      }
    }
  EXPECT_EQ(checked, p.parameters());
}

INSTANTIATE_TEST_SUITE_P(Activations, Gradient, ::testing::Values(Activation::Sigmoid, Activation::Relu),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(MlpReference, StepMovesEachWeightByTheLearningRateTimesItsGradient) {
  const Problem p = small(Activation::Sigmoid);
  const Data d = synthetic_data(12, 7, 3, 2);
  Params<double> w = initial_params(p, 3);
  const Params<double> before = w;
  Gradients g;
  const double l0 = gradients(p, w, d, 0, g);
  EXPECT_EQ(step(p, w, d, 0), l0);
  for (std::size_t l = 0; l < w.w.size(); ++l) {
    for (std::size_t i = 0; i < w.w[l].size(); ++i) EXPECT_EQ(w.w[l][i], before.w[l][i] - p.lr * g.w[l][i]);
    for (std::size_t i = 0; i < w.b[l].size(); ++i) EXPECT_EQ(w.b[l][i], before.b[l][i] - p.lr * g.b[l][i]);
  }
  EXPECT_LT(loss(p, w, d, 0), l0);  // a small step down the gradient lowers the batch's loss
}

class Learns : public ::testing::TestWithParam<Activation> {};

TEST_P(Learns, LossFallsAndAccuracyRisesOnTheSyntheticTask) {
  Problem p;
  p.widths = {784, 32, 10};
  p.batch = 64;
  p.act = GetParam();
  p.lr = GetParam() == Activation::Sigmoid ? 0.5 : 0.1;
  const std::int64_t train = 4096, held = 1024;
  const Data d = synthetic_data(train + held, 784, 10, 42);
  Params<double> w = initial_params(p, 7);
  const double acc0 = accuracy(p, w, d, train, held);
  double first = 0, last = 0;
  for (int s = 0; s < 300; ++s) {
    const double l = step(p, w, d, (s * p.batch) % train);
    if (s < 10) first += l / 10;
    if (s >= 290) last += l / 10;
  }
  const double acc = accuracy(p, w, d, train, held);
  EXPECT_LT(last, 0.25 * first) << "loss " << first << " -> " << last;
  EXPECT_LT(acc0, 0.3);
  EXPECT_GT(acc, 0.9) << "held-out accuracy " << acc0 << " -> " << acc;
}

INSTANTIATE_TEST_SUITE_P(Activations, Learns, ::testing::Values(Activation::Sigmoid, Activation::Relu),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(MlpProblem, BadProblemsAreUsageErrors) {
  Problem p = small(Activation::Relu);
  EXPECT_NO_THROW(validate(p));
  p.widths = {784, 0, 10};
  EXPECT_THROW(validate(p), UsageError);
  p.widths = {784, -3, 10};
  EXPECT_THROW(validate(p), UsageError);
  p.widths = {784};
  EXPECT_THROW(validate(p), UsageError);
  p = small(Activation::Relu);
  p.batch = 0;
  EXPECT_THROW(validate(p), UsageError);
  EXPECT_THROW(parse_activation("tanh"), UsageError);
  EXPECT_EQ(parse_activation("relu"), Activation::Relu);
  // A batch past the end of the data, data of another shape.
  p = small(Activation::Relu);
  const Data d = synthetic_data(10, 7, 3, 1);
  const Params<double> w = initial_params(p, 1);
  EXPECT_THROW(loss(p, w, d, 5), std::invalid_argument);
  EXPECT_THROW(loss(p, w, synthetic_data(10, 8, 3, 1), 0), std::invalid_argument);
}

TEST(MlpProblem, CountsParametersAndFlops) {
  Problem p;
  p.widths = {784, 1024, 1024, 10};
  p.batch = 1024;
  EXPECT_EQ(p.parameters(), 785 * 1024 + 1025 * 1024 + 1025 * 10);
  // Forward and weight gradient for every layer, delta propagation for layers 2 and 3.
  const double b = 1024;
  EXPECT_EQ(p.gemm_flops(), 2 * (2 * b * 784 * 1024 + 3 * b * 1024 * 1024 + 3 * b * 1024 * 10));
  // Each GEMM reads its operands and writes its product: two of them for
  // layer 1 (forward, weight gradient), three for the others (and the delta).
  const double l1 = b * 784 + 784 * 1024 + b * 1024, l2 = b * 1024 + 1024 * 1024 + b * 1024,
               l3 = b * 1024 + 1024 * 10 + b * 10;
  EXPECT_EQ(p.gemm_bytes(), 4 * (2 * l1 + 3 * l2 + 3 * l3));
  p.f64 = true;
  EXPECT_EQ(p.gemm_bytes(), 8 * (2 * l1 + 3 * l2 + 3 * l3));
}

TEST(MlpData, SyntheticIsDeterministicNeverZeroAndBalanced) {
  const Data a = synthetic_data(2000, 784, 10, 9), b = synthetic_data(2000, 784, 10, 9),
             c = synthetic_data(2000, 784, 10, 10);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.label, b.label);
  EXPECT_NE(a.x, c.x);
  for (double v : a.x) ASSERT_TRUE(v > 0 && v < 1) << v;
  std::vector<int> per(10);
  for (int l : a.label) ++per[std::size_t(l)];
  for (int n : per) EXPECT_GT(n, 150);  // about 200 each
  const Params<double> w = initial_params(small(Activation::Relu), 4);
  for (const auto& layer : w.w)
    for (double v : layer) ASSERT_NE(v, 0.0);
}

// IDX files written here: big-endian magic and counts, then the bytes.
void write_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}
std::vector<std::uint8_t> be(std::uint32_t v) {
  return {std::uint8_t(v >> 24), std::uint8_t(v >> 16), std::uint8_t(v >> 8), std::uint8_t(v)};
}
std::vector<std::uint8_t> idx(std::uint32_t magic, std::vector<std::uint32_t> dims,
                              std::vector<std::uint8_t> body) {
  auto out = be(magic);
  for (auto d : dims) {
    auto b = be(d);
    out.insert(out.end(), b.begin(), b.end());
  }
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

class Idx : public ::testing::Test {
 protected:
  std::string dir = ::testing::TempDir() + "parbench_idx_test";
  void SetUp() override { std::filesystem::create_directories(dir); }
  std::string path(const std::string& name) { return dir + "/" + name; }
  std::string error(const std::function<void()>& f) {
    try {
      f();
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(Idx, ReadsImagesAndLabels) {
  write_file(path("train-images-idx3-ubyte"),
             idx(0x803, {3, 2, 2}, {0, 255, 51, 102, 1, 2, 3, 4, 5, 6, 7, 8}));
  write_file(path("train-labels-idx1-ubyte"), idx(0x801, {3}, {7, 0, 9}));
  const Data d = read_mnist(dir, "train");
  EXPECT_EQ(d.n, 3);
  EXPECT_EQ(d.features, 4);
  EXPECT_EQ(d.classes, 10);
  EXPECT_EQ(d.label, (std::vector<int>{7, 0, 9}));
  EXPECT_EQ(d.x[1], 1.0);
  EXPECT_EQ(d.x[2], 0.2);
}

TEST_F(Idx, BadFilesSayWhatIsWrong) {
  EXPECT_NE(error([&] { read_idx_images(path("missing")); }).find("cannot open"), std::string::npos);
  write_file(path("wrong"), idx(0x801, {3}, {1, 2, 3}));
  EXPECT_NE(error([&] { read_idx_images(path("wrong")); }).find("magic 0x00000801, want 0x00000803"),
            std::string::npos);
  write_file(path("cut"), idx(0x803, {3, 2, 2}, {1, 2, 3, 4, 5}));
  EXPECT_NE(
      error([&] { read_idx_images(path("cut")); }).find("5 bytes of data where the header says 12 (cut off)"),
      std::string::npos);
  write_file(path("long"), idx(0x801, {2}, {1, 2, 3}));
  EXPECT_NE(error([&] { read_idx_labels(path("long")); }).find("trailing bytes"), std::string::npos);
  write_file(path("zero"), idx(0x803, {3, 0, 2}, {}));
  EXPECT_NE(error([&] { read_idx_images(path("zero")); }).find("dimension 2 is 0"), std::string::npos);
  write_file(path("huge"), idx(0x803, {0xffffffffu, 0xffffffffu, 0xffffffffu}, {1, 2, 3}));
  EXPECT_NE(error([&] { read_idx_images(path("huge")); }).find("implausibly large"), std::string::npos);
  write_file(path("hdr"), {0, 0, 8, 3, 0, 0});
  EXPECT_NE(error([&] { read_idx_images(path("hdr")); }).find("cut off inside its header"),
            std::string::npos);
  write_file(path("train-images-idx3-ubyte"), idx(0x803, {3, 1, 1}, {1, 2, 3}));
  write_file(path("train-labels-idx1-ubyte"), idx(0x801, {2}, {1, 2}));
  EXPECT_NE(error([&] { read_mnist(dir, "train"); }).find("2 labels for 3 images"), std::string::npos);
  write_file(path("train-labels-idx1-ubyte"), idx(0x801, {3}, {1, 10, 2}));
  EXPECT_NE(error([&] { read_mnist(dir, "train"); }).find("label 10 at 1 is not a digit"), std::string::npos);
}

}  // namespace

// The host step on every CPU GEMM variant, float and double, against the
// reference: one step from the same weights on the same batch. The bound: a
// weight moves by lr times its gradient, a sum of B products of values below
// 1; each backend's GEMM differs from the reference's loops by rounding of
// order K eps per element (K <= 784 here), so after one step the weights
// agree to about lr * 784 * eps plus T's rounding of the weights themselves:
// 1e-12 in double, 2e-6 in float (eps 6e-8). A wrong operand, op or
// transposition is off by the size of the update itself (about 1e-3).
namespace {

template <class T>
void expect_backends_match() {
  Problem p;
  p.widths = {784, 24, 16, 10};
  p.batch = 32;
  p.lr = 0.1;
  const double tol = sizeof(T) == 8 ? 1e-12 : 2e-6;
  int tried = 0;
  for (Activation act : {Activation::Sigmoid, Activation::Relu}) {
    p.act = act;
    const Data d = synthetic_data(100, 784, 10, 21);
    const Params<double> start = initial_params(p, 8);
    Params<double> ref = start;
    const double ref_loss = step(p, ref, d, 40);
    double moved = 0;
    for (std::size_t l = 0; l < ref.w.size(); ++l)
      for (std::size_t i = 0; i < ref.w[l].size(); ++i)
        moved = std::max(moved, std::fabs(ref.w[l][i] - start.w[l][i]));
    ASSERT_GT(moved, 100 * tol);  // the step moves weights by far more than the bound
    for (const auto& e : gemm::registry<T>()) {
      if (e.backend != Backend::Cpu) continue;
      Knobs k;
      k.threads = 3;
      auto variant = e.make(k);
      if (!variant->computes_for_caller()) continue;
      HostStep<T> host(p, std::move(variant), 3);
      host.set_params(start);
      const double loss_t = host.step(d, 40);
      EXPECT_NEAR(loss_t, ref_loss, sizeof(T) == 8 ? 1e-12 : 1e-5) << e.name << " " << to_string(act);
      const Params<double> got = host.params();
      double worst = 0;
      for (std::size_t l = 0; l < got.w.size(); ++l) {
        for (std::size_t i = 0; i < got.w[l].size(); ++i)
          worst = std::max(worst, std::fabs(got.w[l][i] - ref.w[l][i]));
        for (std::size_t i = 0; i < got.b[l].size(); ++i)
          worst = std::max(worst, std::fabs(got.b[l][i] - ref.b[l][i]));
      }
      EXPECT_LE(worst, tol) << e.name << " " << to_string(act) << (sizeof(T) == 8 ? " double" : " float");
      ++tried;
    }
  }
  EXPECT_EQ(tried, 2 * 4);  // Naive, OMP, OMP.Blocked, OpenBLAS
}

TEST(MlpHostStep, EveryCpuGemmBackendMatchesTheReferenceStepDouble) { expect_backends_match<double>(); }
TEST(MlpHostStep, EveryCpuGemmBackendMatchesTheReferenceStepFloat) { expect_backends_match<float>(); }

TEST(MlpHostStep, AGemmVariantThatIsNoBackendIsRefused) {
  struct NotBackend : gemm::Variant<double> {
    void prepare(const gemm::Problem&, const gemm::Inputs<double>&) override {}
    void run() override {}
    void result(std::vector<double>&) override {}
  };
  Problem p = small(Activation::Relu);
  EXPECT_THROW(HostStep<double>(p, std::make_unique<NotBackend>(), 1), std::logic_error);
  NotBackend nb;
  EXPECT_THROW(nb.compute({}, nullptr, nullptr, nullptr, nullptr), std::logic_error);
}

}  // namespace

// Registry-driven: every MLP variant (one per GEMM backend) on awkward shapes,
// in both precisions, through the family's own verify() against the reference
// step; reset() must bring back the first weights.
namespace {

std::vector<pb::testing::VariantCase> all_variants() {
  return pb::testing::variant_cases(mlp::registry(), 16, 32);  // tiles both CUDA GEMM kernels build
}

class MlpVariants : public ::testing::TestWithParam<pb::testing::VariantCase> {
 protected:
  void SetUp() override {
    if (on_gpu(entry().backend)) PB_SKIP_WITHOUT_GPU();
  }
  const mlp::Entry& entry() const { return pb::testing::find_variant(mlp::registry(), GetParam().name); }
  void expect_matches(Problem p) {
    for (bool f64 : {false, true}) {
      p.f64 = f64;
      Case c(p, 0x3131);
      auto v = entry().make(GetParam().knobs);
      if (!v->supports(p).ok()) {  // only where its GEMM backend refuses the precision (CUDA.Pipelined: float
                                   // only; CUDA.DMMA: double only)
        bool gemm_variant = false;
        for (const auto& g : gemm::registry<double>())
          gemm_variant = gemm_variant || GetParam().name == g.name;
        EXPECT_TRUE(gemm_variant && !mlp::gemm_supports(p, GetParam().name, GetParam().knobs).ok())
            << GetParam().name << " refuses " << p.str() << " though its GEMM variant does not";
        continue;
      }
      v->prepare(p, c.inputs);
      for (int round = 0; round < 2; ++round) {  // the second after a reset: the same step again
        v->reset();
        v->run();
        const Check chk = verify(p, c.inputs.start, c.reference(), v->result());
        EXPECT_TRUE(chk.passed) << p.str() << " round " << round << ": " << chk.message;
        EXPECT_NEAR(v->loss(), c.reference_loss(), f64 ? 1e-12 : 1e-5) << p.str();
      }
      const double share = v->gemm_share();
      EXPECT_GT(share, 0.0);
      EXPECT_LE(share, 1.0);
    }
  }
};

Problem shape(std::vector<std::int64_t> widths, std::int64_t batch, Activation act) {
  Problem p;
  p.widths = std::move(widths);
  p.batch = batch;
  p.act = act;
  return p;
}

TEST_P(MlpVariants, AwkwardShapesBothPrecisions) {
  expect_matches(shape({784, 7, 3}, 1, Activation::Sigmoid));
  expect_matches(shape({5, 4, 3, 2}, 3, Activation::Relu));
  expect_matches(shape({784, 33, 17, 10}, 33, Activation::Sigmoid));
}

TEST(MlpVerify, CatchesAWrongWeight) {
  Problem p = shape({784, 16, 10}, 8, Activation::Sigmoid);
  Case c(p, 9);
  Params<double> got = c.reference();
  EXPECT_TRUE(verify(p, c.inputs.start, c.reference(), got).passed);
  got.w[1][37] += 1e-4;  // a tenth of a typical update
  const Check chk = verify(p, c.inputs.start, c.reference(), got);
  EXPECT_FALSE(chk.passed);
  EXPECT_NE(chk.message.find("layer 2 weight 37"), std::string::npos) << chk.message;
  got = c.reference();
  got.b[0].pop_back();
  EXPECT_FALSE(verify(p, c.inputs.start, c.reference(), got).passed);
}

TEST(MlpVerify, CatchesAWrongHiddenLayerInFloatOnADeepSigmoidNet) {
  // The first layer's updates are a small fraction of the output layer's: one
  // bound over all layers (8 K eps times the largest update anywhere) is far
  // above a first-layer error of 2% of its own step, which the per-tensor
  // bound catches.
  Problem p = shape({784, 1024, 1024, 10}, 64, Activation::Sigmoid);
  p.f64 = false;
  Case c(p, 17);
  const Params<double>& ref = c.reference();
  const Params<double>& start = c.inputs.start;
  double first = 0, anywhere = 0;
  std::size_t at = 0;
  for (std::size_t l = 0; l < ref.w.size(); ++l)
    for (int bias = 0; bias < 2; ++bias) {
      const auto& r = bias ? ref.b[l] : ref.w[l];
      const auto& s = bias ? start.b[l] : start.w[l];
      for (std::size_t i = 0; i < r.size(); ++i) {
        const double u = std::fabs(r[i] - s[i]);
        anywhere = std::max(anywhere, u);
        if (l == 0 && !bias && u > first) first = u, at = i;
      }
    }
  const double error = 0.02 * first;
  const double one_bound_for_all = 8 * 1024 * double(std::numeric_limits<float>::epsilon()) * anywhere;
  ASSERT_LT(error, one_bound_for_all) << "the case must be one a bound over all layers misses";
  Params<double> got = ref;
  EXPECT_TRUE(verify(p, start, ref, got).passed);
  got.w[0][at] += error;
  const Check chk = verify(p, start, ref, got);
  EXPECT_FALSE(chk.passed);
  EXPECT_NE(chk.message.find("layer 1 weight"), std::string::npos) << chk.message;
}

PB_INSTANTIATE_CPU_AND_GPU(MlpVariants, all_variants());

}  // namespace

// --mlp-mnist: the first batch of a train set written here, as MNIST's files.
namespace {

TEST_F(Idx, MnistTrainSetFeedsTheStepAndRefusesWhatDoesNotFit) {
  const std::int64_t n = 40;
  std::vector<std::uint8_t> pixels(static_cast<std::size_t>(n * 784)), labels(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = std::uint8_t((i * 37 + 11) % 251);
  for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = std::uint8_t((i * 7) % 10);
  write_file(path("train-images-idx3-ubyte"), idx(0x803, {std::uint32_t(n), 28, 28}, pixels));
  write_file(path("train-labels-idx1-ubyte"), idx(0x801, {std::uint32_t(n)}, labels));
  Problem p = shape({784, 16, 10}, 32, Activation::Relu);
  p.mnist = dir;
  const Inputs in = make_inputs(p, 5);
  ASSERT_EQ(in.data.n, 32);
  EXPECT_EQ(in.data.x[785], pixels[785] / 255.0);
  EXPECT_EQ(in.data.label[31], labels[31]);
  // A step on it through a backend matches the reference step.
  Case c(p, 5);
  auto v = mlp::registry().front().make(Knobs{});
  v->prepare(p, c.inputs);
  v->reset();
  v->run();
  EXPECT_TRUE(verify(p, c.inputs.start, c.reference(), v->result()).passed);
  p.batch = 41;
  EXPECT_NE(error([&] { make_inputs(p, 5); }).find("larger than the 40 images"), std::string::npos);
  p = shape({100, 16, 10}, 8, Activation::Relu);
  p.mnist = dir;
  EXPECT_NE(error([&] { validate(p); }).find("784 inputs and 10 classes"), std::string::npos);
}

}  // namespace
