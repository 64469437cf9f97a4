#pragma once
// MLP training-step family (seed 003): a fully connected network
// widths[0] -> ... -> widths[L] (784 inputs and 10 classes for MNIST-shaped
// data), sigmoid or ReLU hidden activations, softmax and cross-entropy at the
// output, one step of mini-batch SGD. Row-major, a batch is B rows.
//
// With A_0 = X (B x widths[0]) and, for layer l = 1..L,
//   Z_l = A_{l-1} W_l + 1 b_l           (C = A B: the forward GEMM)
//   A_l = act(Z_l), A_L = softmax(Z_L)
//   loss = -(1/B) sum_r log A_L[r, y_r]
// the backward pass is
//   G_L = (A_L - onehot(y)) / B
//   dW_l = A_{l-1}^T G_l                 (C = A^T B: the weight gradient)
//   db_l = column sums of G_l
//   G_{l-1} = (G_l W_l^T) .* act'(Z_{l-1})   (C = A B^T: delta propagation)
// and SGD updates W_l -= lr dW_l, b_l -= lr db_l.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/knobs.hpp"
#include "core/status.hpp"
#include "gemm/gemm.hpp"

namespace pb::mlp {

enum class Activation { Sigmoid, Relu };
const char* to_string(Activation a);
Activation parse_activation(const std::string& text);  // UsageError on an unknown name

struct Problem {
  std::vector<std::int64_t> widths;  // widths[0] inputs ... widths.back() classes; at least 2 entries
  std::int64_t batch = 0;
  Activation act = Activation::Sigmoid;
  double lr = 0.1;
  bool f64 = false;   // the backend's precision (the reference is always double)
  std::string mnist;  // a folder of MNIST IDX files (train set): its first batch; empty: synthetic data
  std::int64_t layers() const { return std::int64_t(widths.size()) - 1; }
  std::int64_t parameters() const;  // weights and biases
  // FLOPs (2 per multiply-add) of the step's GEMMs: forward, weight
  // gradients, and the delta propagation below the last layer (none into
  // the input).
  double gemm_flops() const;
  // Bytes those GEMMs must move at least (the roofline's model): each reads
  // its two operands and writes its product once, in the backend's precision.
  double gemm_bytes() const;
  std::string str() const;
};
// UsageError: a width or the batch below 1, fewer than 2 widths; with mnist,
// a first width other than 784 or fewer than 10 classes.
void validate(const Problem& p);
// "784-128-10": the widths as run names and messages write them.
std::string widths_name(const std::vector<std::int64_t>& widths);

// Weights W_l (widths[l-1] x widths[l], row-major) and biases b_l per layer.
template <class T>
struct Params {
  std::vector<std::vector<T>> w, b;
};

// The first weights, deterministic in the seed: uniform in +-sqrt(6 / (fan_in +
// fan_out)) (Glorot), never exactly zero; small nonzero biases.
Params<double> initial_params(const Problem& p, std::uint64_t seed);

// A data set of MNIST shape: n samples of `features` values in [0, 1] and a
// label in [0, classes).
struct Data {
  std::int64_t n = 0, features = 0, classes = 0;
  std::vector<double> x;   // n x features
  std::vector<int> label;  // n
};

// Deterministic synthetic data with a learnable rule: a sample's label is the
// class whose fixed random prototype it is nearest to (each sample is its
// class's prototype plus noise), so a network's loss falls and its accuracy
// rises as it trains.
Data synthetic_data(std::int64_t n, std::int64_t features, std::int64_t classes, std::uint64_t seed);

// MNIST's train set in `dir` (read_mnist below), read once per folder and
// kept; UsageError (one line naming the file) when it cannot be read.
const Data& mnist_train(const std::string& dir);

// What every variant of a problem starts from: one batch of data (synthetic,
// or the first p.batch images of MNIST's train set; UsageError for a batch
// larger than the set) and the first weights.
struct Inputs {
  Data data;
  Params<double> start;
};
Inputs make_inputs(const Problem& p, std::uint64_t base_seed);

// A variant trains the network one step per run(). Contract (core/job.hpp):
// prepare() is untimed; reset() (untimed) puts back the first weights; run()
// is one SGD step on the batch; result() gives the weights after it.
class Variant {
 public:
  virtual ~Variant() = default;
  virtual Support supports(const Problem&) const { return Support::yes(); }
  virtual void prepare(const Problem& p, const Inputs& in) = 0;
  virtual void reset() = 0;
  virtual void run() = 0;
  virtual Params<double> result() = 0;
  virtual double loss() const = 0;  // the batch's loss before the last step
  // Untimed profiling pass: one step with its GEMM calls timed apart; the
  // fraction of the step's wall time they took.
  virtual double gemm_share() = 0;
  virtual void* stream() { return nullptr; }
};

// The double-precision reference training step, written as plain loops in the
// order given above, against which every backend's step is checked.

struct Gradients {
  std::vector<std::vector<double>> w, b;  // same shapes as Params
};

// The batch's mean cross-entropy loss under `params` (rows x, labels y: the
// first p.batch rows of the data starting at `first`).
double loss(const Problem& p, const Params<double>& params, const Data& d, std::int64_t first);

// Forward and backward: the loss and the gradients of the batch.
double gradients(const Problem& p, const Params<double>& params, const Data& d, std::int64_t first,
                 Gradients& g);

// One SGD step on the batch; returns the loss before the update.
double step(const Problem& p, Params<double>& params, const Data& d, std::int64_t first);

// Fraction of the n samples from `first` whose largest output is their label.
double accuracy(const Problem& p, const Params<double>& params, const Data& d, std::int64_t first,
                std::int64_t n);

// A backend's step against the reference step from the same weights.

// Every weight and bias after the step within the bound of its tensor (one
// layer's weights, or its biases): the GEMMs' rounding of order K eps_T per
// element (K the longest sum: the widest layer or the batch) on that tensor's
// largest reference update, times a margin of 8, plus T's rounding of the
// values themselves (2 eps_T max|w|). A wrong operand or transposition is off
// by the size of the update.
Check verify(const Problem& p, const Params<double>& start, const Params<double>& reference,
             const Params<double>& got);

// MNIST's IDX files (http://yann.lecun.com/exdb/mnist/ describes the format):
// a big-endian magic (0x00000803 for unsigned-byte images n x rows x cols,
// 0x00000801 for unsigned-byte labels n), the dimensions as big-endian 32-bit
// counts, then the bytes. Any file that does not match gives a UsageError
// naming the file and what is wrong.

struct IdxImages {
  std::int64_t n = 0, rows = 0, cols = 0;
  std::vector<std::uint8_t> pixels;  // n x rows x cols
};

IdxImages read_idx_images(const std::string& path);
std::vector<std::uint8_t> read_idx_labels(const std::string& path);

// DIR/<set>-images-idx3-ubyte and DIR/<set>-labels-idx1-ubyte (set "train"
// or "t10k") as Data: pixels / 255, labels 0-9, the two files' counts equal.
Data read_mnist(const std::string& dir, const std::string& set);

// A GEMM family variant as the MLP step's backend, by name: made with an
// instance's knobs, and asked whether it takes every product of a step.

// The GEMM variant `name` in precision T; std::logic_error for an unknown name.
template <class T>
std::unique_ptr<gemm::Variant<T>> make_gemm(const std::string& name, const Knobs& k);

// Whether GEMM variant `name` (in p's precision) takes the three products of
// every layer of p's step: the forward A B, the weight gradient A^T B and the
// delta propagation A B^T + C. The first refusal, or yes.
Support gemm_supports(const Problem& p, const std::string& name, const Knobs& k);

// What the MLP variants share around their training step (HostStep<T> on the
// CPU, DeviceStep<T> on the GPU): prepare() builds the step in the problem's
// precision and hands it the batch once (untimed); reset() puts back the first
// weights; result() reads the weights after the step. A Step<T> has
// set_batch(data, first), set_params(params) and params().

template <template <class> class Step>
class StepVariant : public Variant {
 public:
  void reset() override {
    with([&](auto& s) { s.set_params(in_->start); });
  }
  Params<double> result() override {
    return with([](auto& s) { return s.params(); });
  }
  double loss() const override { return loss_; }

 protected:
  // make(T{}) builds the Step<T> for p's precision T.
  template <class Make>
  void build(const Problem& p, const Inputs& in, Make&& make) {
    in_ = &in;
    f_.reset(), d_.reset();
    if (p.f64)
      d_ = make(double{});
    else
      f_ = make(float{});
    with([&](auto& s) { s.set_batch(in.data, 0); });  // the input in T, once, untimed
  }
  bool built() const { return f_ || d_; }
  // fn(the step), whichever precision it was built in.
  template <class F>
  decltype(auto) with(F&& fn) {
    return d_ ? fn(*d_) : fn(*f_);
  }

  const Inputs* in_ = nullptr;
  double loss_ = 0;

 private:
  std::unique_ptr<Step<float>> f_;
  std::unique_ptr<Step<double>> d_;
};

}  // namespace pb::mlp
