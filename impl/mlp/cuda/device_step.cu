// The MLP variants on the GPU: the training step with its weights, batch and
// every intermediate in device memory, its element-wise work in kernels on
// the same stream as its GEMMs.
//
//  - <GEMM variant> (CUDA.Naive, CUDA.Tiled, CUDA.RegBlock, cuBLAS): the three
//    GEMM forms through the GEMM family's variant as a backend
//    (gemm::Variant::compute on device pointers), then the same element-wise
//    kernels; one launch per kernel, as the host step does it.
//  - cuBLAS.Graph, beyond seed 003: cuBLAS called directly so its epilogue
//    does the work of two kernels (the weight update W -= lr A^T G is one GEMM
//    with alpha = -lr and beta = 1 into W: no dW buffer, no update kernel;
//    the delta propagation is beta = 0, no "+ C" of zeros), bias and
//    activation in one kernel, softmax, loss and the output delta in one,
//    and the whole step captured once in a CUDA Graph and replayed by one
//    launch, so a small batch is not bound by the host's launch rate.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/cuda/buffer.cuh"
#include "core/cuda/cublas.cuh"
#include "mlp/mlp.hpp"

namespace pb::mlp {
namespace {

unsigned blocks_for(std::int64_t n, int threads) {
  return unsigned(std::max<std::int64_t>(1, std::min<std::int64_t>((n + threads - 1) / threads, 65535)));
}

// Z += b (per column), A = act(Z): hidden layers.
template <class T>
__global__ void bias_act(T* __restrict__ z, const T* __restrict__ b, T* __restrict__ a, std::int64_t rows,
                         std::int64_t cols, bool sigmoid) {
  const std::int64_t n = rows * cols;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const T v = z[i] + b[i % cols];
    z[i] = v;
    a[i] = sigmoid ? T(1) / (T(1) + exp(-v)) : (v > T(0) ? v : T(0));
  }
}

// The output layer, a warp per row: Z += b, softmax into P, the loss term
// -log P[y] / B added into *loss, and G = (P - onehot(y)) / B.
template <class T>
__global__ void bias_softmax_loss(T* __restrict__ z, const T* __restrict__ b, T* __restrict__ prob,
                                  T* __restrict__ delta, const int* __restrict__ labels, double* loss,
                                  std::int64_t rows, std::int64_t cols) {
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  for (std::int64_t r = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; r < rows; r += warps) {
    T* zr = z + r * cols;
    T mx = -INFINITY;
    for (std::int64_t c = lane; c < cols; c += 32) mx = max(mx, zr[c] = zr[c] + b[c]);
    for (int off = 16; off; off >>= 1) mx = max(mx, __shfl_xor_sync(0xffffffffu, mx, off));
    T sum = 0;
    for (std::int64_t c = lane; c < cols; c += 32) sum += exp(zr[c] - mx);
    for (int off = 16; off; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    const int y = labels[r];
    for (std::int64_t c = lane; c < cols; c += 32) {
      const T p = exp(zr[c] - mx) / sum;
      prob[r * cols + c] = p;
      delta[r * cols + c] = (p - T(c == y ? 1 : 0)) / T(rows);
      if (c == y) atomicAdd(loss, -log(fmax(double(p), 1e-300)) / double(rows));
    }
  }
}

// G_{l-1} *= act'(Z_{l-1}) (sigmoid' from A, ReLU' from Z).
template <class T>
__global__ void act_grad(T* __restrict__ g, const T* __restrict__ a, const T* __restrict__ z, std::int64_t n,
                         bool sigmoid) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    g[i] *= sigmoid ? a[i] * (T(1) - a[i]) : (z[i] > T(0) ? T(1) : T(0));
}

// b -= lr * (column sums of G). A block of 32 x 32 threads takes 32 columns:
// each thread sums every 32nd row of its column (a warp loads one row's 32
// adjacent columns), then the 32 partial sums of a column are added in a
// fixed order: deterministic, with 32 times the loads in flight of a thread a
// column (which left a 1024-column layer on 4 blocks walking all its rows).
constexpr int kBiasCols = 32, kBiasRows = 32;
template <class T>
__global__ void bias_update(T* __restrict__ b, const T* __restrict__ g, std::int64_t rows, std::int64_t cols,
                            T lr) {
  __shared__ T part[kBiasRows][kBiasCols + 1];
  const std::int64_t c = std::int64_t(blockIdx.x) * kBiasCols + threadIdx.x;
  T s = 0;
  if (c < cols)
    for (std::int64_t r = threadIdx.y; r < rows; r += kBiasRows) s += g[r * cols + c];
  part[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0 && c < cols) {
    T sum = 0;
    for (int y = 0; y < kBiasRows; ++y) sum += part[y][threadIdx.x];
    b[c] -= lr * sum;
  }
}

// W -= lr * dW.
template <class T>
__global__ void sgd(T* __restrict__ w, const T* __restrict__ dw, std::int64_t n, T lr) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    w[i] -= lr * dw[i];
}

constexpr int kThreads = 256;

template <class T>
class DeviceStep {
 public:
  // gemm: a GEMM variant that is a backend (its stream is the step's); null:
  // the fused cuBLAS step (its own stream and handle).
  DeviceStep(const Problem& p, std::unique_ptr<gemm::Variant<T>> gemm) : p_(p), gemm_(std::move(gemm)) {
    validate(p_);
    if (gemm_) {
      if (!gemm_->computes_for_caller())
        throw std::logic_error("DeviceStep needs a GEMM variant that is a backend");
      gemm_->bind();
      s_ = static_cast<cudaStream_t>(gemm_->stream());
    } else {
      own_ = std::make_unique<Stream>();
      s_ = own_->get();
      PB_CUBLAS(cublasSetMathMode(h_.on(s_), CUBLAS_DEFAULT_MATH));
      // A workspace of its own, so capturing the step allocates nothing.
      workspace_ = DeviceBuffer<unsigned char>(std::size_t(32) << 20);
      PB_CUBLAS(cublasSetWorkspace(h_, workspace_.get(), workspace_.bytes()));
    }
    const std::int64_t L = p_.layers(), B = p_.batch;
    std::int64_t widest = 0;
    for (std::int64_t l = 0; l <= L; ++l) {
      const std::int64_t w = p_.widths[std::size_t(l)];
      widest = std::max(widest, w);
      a_.emplace_back(B * w);
      z_.emplace_back(l > 0 ? B * w : 0);
      if (l > 0) {
        const std::int64_t in = p_.widths[std::size_t(l - 1)];
        w_.emplace_back(in * w);
        b_.emplace_back(w);
        dw_.emplace_back(gemm_ ? in * w : 0);
      }
    }
    delta_ = DeviceBuffer<T>(B * widest);
    next_ = DeviceBuffer<T>(B * widest);
    zero_ = DeviceBuffer<T>(B * widest);
    PB_CUDA(cudaMemsetAsync(zero_.get(), 0, zero_.bytes(), s_));
    labels_ = DeviceBuffer<int>(B);
    loss_ = DeviceBuffer<double>(1);
    PB_CUDA(cudaStreamSynchronize(s_));
    for (auto& e : ev_) PB_CUDA(cudaEventCreate(&e));
  }
  ~DeviceStep() {
    if (exec_) cudaGraphExecDestroy(exec_);
    for (auto& e : ev_)
      if (e) cudaEventDestroy(e);
    for (auto& e : gemm_ev_)
      if (e) cudaEventDestroy(e);
  }
  DeviceStep(const DeviceStep&) = delete;
  DeviceStep& operator=(const DeviceStep&) = delete;

  cudaStream_t stream() const { return s_; }

  void set_params(const Params<double>& params) {
    for (std::size_t l = 0; l < params.w.size(); ++l) {
      upload(w_[l], params.w[l]);
      upload(b_[l], params.b[l]);
    }
    PB_CUDA(cudaStreamSynchronize(s_));
  }
  Params<double> params() {
    Params<double> out;
    for (std::size_t l = 0; l < w_.size(); ++l) {
      out.w.push_back(download(w_[l]));
      out.b.push_back(download(b_[l]));
    }
    return out;
  }
  void set_batch(const Data& d, std::int64_t first) {
    const std::int64_t B = p_.batch;
    if (d.features != p_.widths.front() || d.classes != p_.widths.back() || first < 0 || first + B > d.n)
      throw std::invalid_argument(
          "DeviceStep: the batch is not in the data, or the data is of another shape");
    std::vector<int> y(d.label.begin() + first, d.label.begin() + first + B);
    for (int v : y)
      if (v < 0 || v >= d.classes) throw std::invalid_argument("DeviceStep: label out of range");
    upload(a_[0],
           std::vector<double>(d.x.begin() + first * d.features, d.x.begin() + (first + B) * d.features));
    PB_CUDA(cudaMemcpyAsync(labels_.get(), y.data(), labels_.bytes(), cudaMemcpyHostToDevice, s_));
    PB_CUDA(cudaStreamSynchronize(s_));
  }

  // One step, enqueued on stream() (the host does not wait). The fused step
  // is captured into a graph on its first call and replayed after.
  void step() {
    if (gemm_) return enqueue(false);
    if (!exec_) {
      cudaGraph_t graph = nullptr;
      PB_CUDA(cudaStreamBeginCapture(s_, cudaStreamCaptureModeThreadLocal));
      try {
        enqueue(false);
      } catch (...) {
        cudaStreamEndCapture(s_, &graph);
        if (graph) cudaGraphDestroy(graph);
        throw;
      }
      PB_CUDA(cudaStreamEndCapture(s_, &graph));
      const cudaError_t e = cudaGraphInstantiate(&exec_, graph, 0);
      cudaGraphDestroy(graph);
      if (e != cudaSuccess) exec_ = nullptr;  // captured again next time
      PB_CUDA(e);
    }
    PB_CUDA(cudaGraphLaunch(exec_, s_));
  }
  double loss() {
    double v = 0;
    PB_CUDA(cudaMemcpyAsync(&v, loss_.get(), sizeof v, cudaMemcpyDeviceToHost, s_));
    PB_CUDA(cudaStreamSynchronize(s_));
    return v;
  }
  // An eager step with events around each GEMM call: the GEMMs' share of
  // the step's time on the GPU (the fused step's graph replays the same work).
  double gemm_share() {
    enqueue(true);
    PB_CUDA(cudaStreamSynchronize(s_));
    float all = 0, g = 0;
    PB_CUDA(cudaEventElapsedTime(&all, ev_[0], ev_[1]));
    for (std::size_t i = 0; i + 1 < gemm_ev_.size(); i += 2) {
      float ms = 0;
      PB_CUDA(cudaEventElapsedTime(&ms, gemm_ev_[i], gemm_ev_[i + 1]));
      g += ms;
    }
    return all > 0 ? double(g) / double(all) : 0.0;
  }

 private:
  void upload(DeviceBuffer<T>& to, const std::vector<double>& from) {
    if (std::int64_t(from.size()) != std::int64_t(to.size()))
      throw std::logic_error("DeviceStep: size mismatch");
    std::vector<T> t(from.begin(), from.end());
    PB_CUDA(cudaMemcpyAsync(to.get(), t.data(), to.bytes(), cudaMemcpyHostToDevice, s_));
    PB_CUDA(cudaStreamSynchronize(s_));  // t goes out of scope
  }
  std::vector<double> download(const DeviceBuffer<T>& from) {
    std::vector<T> t(from.size());
    PB_CUDA(cudaMemcpyAsync(t.data(), from.get(), from.bytes(), cudaMemcpyDeviceToHost, s_));
    PB_CUDA(cudaStreamSynchronize(s_));
    return {t.begin(), t.end()};
  }

  // The GEMM of problem g, out = alpha * product + beta * out for the fused
  // step (beta 0 or 1), through the backend otherwise (alpha 1, beta 0; the
  // backend's ABtC adds `c`).
  void product(bool profile, const gemm::Problem& g, const T* a, const T* b, const T* c, T* out, T alpha = 1,
               T beta = 0) {
    if (profile) {
      gemm_ev_.emplace_back();
      PB_CUDA(cudaEventCreate(&gemm_ev_.back()));
      PB_CUDA(cudaEventRecord(gemm_ev_.back(), s_));
    }
    if (gemm_) {
      gemm_->compute(g, a, b, c, out);
    } else {
      const int M = int(g.m), N = int(g.n), K = int(g.k);
      switch (g.op) {
        case gemm::Op::AB:
          PB_CUBLAS(cublas_gemm(h_, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, b, N, a, K, &beta, out, N));
          break;
        case gemm::Op::AtB:
          PB_CUBLAS(cublas_gemm(h_, CUBLAS_OP_N, CUBLAS_OP_T, N, M, K, &alpha, b, N, a, M, &beta, out, N));
          break;
        case gemm::Op::ABtC:  // the step's C is zero: beta 0 instead
          PB_CUBLAS(cublas_gemm(h_, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, b, K, a, K, &beta, out, N));
          break;
      }
    }
    if (profile) {
      gemm_ev_.emplace_back();
      PB_CUDA(cudaEventCreate(&gemm_ev_.back()));
      PB_CUDA(cudaEventRecord(gemm_ev_.back(), s_));
    }
  }

  void enqueue(bool profile) {
    for (auto& e : gemm_ev_) cudaEventDestroy(e);
    gemm_ev_.clear();
    const std::int64_t L = p_.layers(), B = p_.batch;
    const bool sigmoid = p_.act == Activation::Sigmoid, fused = !gemm_;
    const T lr = T(p_.lr);
    if (profile) PB_CUDA(cudaEventRecord(ev_[0], s_));
    PB_CUDA(cudaMemsetAsync(loss_.get(), 0, sizeof(double), s_));
    for (std::int64_t l = 1; l <= L; ++l) {
      const std::int64_t in = p_.widths[std::size_t(l - 1)], out = p_.widths[std::size_t(l)];
      T* z = z_[std::size_t(l)].get();
      T* a = a_[std::size_t(l)].get();
      const T* b = b_[std::size_t(l - 1)].get();
      product(profile, {gemm::Op::AB, B, out, in}, a_[std::size_t(l - 1)].get(), w_[std::size_t(l - 1)].get(),
              nullptr, z);
      if (l < L) {
        bias_act<T><<<blocks_for(B * out, kThreads), kThreads, 0, s_>>>(z, b, a, B, out, sigmoid);
      } else {
        bias_softmax_loss<T><<<blocks_for(B * 32, kThreads), kThreads, 0, s_>>>(
            z, b, a, delta_.get(), labels_.get(), loss_.get(), B, out);
      }
      PB_CUDA_LAUNCHED();
    }
    T* g = delta_.get();
    T* g_next = next_.get();
    for (std::int64_t l = L; l >= 1; --l) {
      const std::int64_t in = p_.widths[std::size_t(l - 1)], out = p_.widths[std::size_t(l)];
      T* W = w_[std::size_t(l - 1)].get();
      const T* A = a_[std::size_t(l - 1)].get();
      if (!fused) {  // dW = A^T G now; W changes after the delta below has read it
        product(profile, {gemm::Op::AtB, in, out, B}, A, g, nullptr, dw_[std::size_t(l - 1)].get());
      }
      if (l > 1) {  // G_{l-1} = (G W^T) .* act'(Z_{l-1}), with the old W
        product(profile, {gemm::Op::ABtC, B, in, out}, g, W, zero_.get(), g_next);
        act_grad<T><<<blocks_for(B * in, kThreads), kThreads, 0, s_>>>(
            g_next, a_[std::size_t(l - 1)].get(), z_[std::size_t(l - 1)].get(), B * in, sigmoid);
        PB_CUDA_LAUNCHED();
      }
      bias_update<T><<<unsigned((out + kBiasCols - 1) / kBiasCols), dim3(kBiasCols, kBiasRows), 0, s_>>>(
          b_[std::size_t(l - 1)].get(), g, B, out, lr);
      PB_CUDA_LAUNCHED();
      if (fused) {  // W = -lr A^T G + W: the update in the GEMM's epilogue
        product(profile, {gemm::Op::AtB, in, out, B}, A, g, nullptr, W, -lr, T(1));
      } else {
        sgd<T><<<blocks_for(in * out, kThreads), kThreads, 0, s_>>>(W, dw_[std::size_t(l - 1)].get(),
                                                                    in * out, lr);
        PB_CUDA_LAUNCHED();
      }
      std::swap(g, g_next);
    }
    if (profile) PB_CUDA(cudaEventRecord(ev_[1], s_));
  }

  Problem p_;
  std::unique_ptr<gemm::Variant<T>> gemm_;
  std::unique_ptr<Stream> own_;
  cudaStream_t s_ = nullptr;
  DeviceBuffer<unsigned char> workspace_;
  CublasHandle h_;  // after its workspace and stream: destroyed before them
  std::vector<DeviceBuffer<T>> w_, b_, dw_, a_, z_;
  DeviceBuffer<T> delta_, next_, zero_;
  DeviceBuffer<int> labels_;
  DeviceBuffer<double> loss_;
  cudaGraphExec_t exec_ = nullptr;
  cudaEvent_t ev_[2] = {};
  std::vector<cudaEvent_t> gemm_ev_;
};

// One MLP variant on the GPU: a GEMM variant's name, or "" for the fused step.
class Device final : public StepVariant<DeviceStep> {
 public:
  Device(std::string gemm, Knobs k) : gemm_(std::move(gemm)), knobs_(k) {}
  Support supports(const Problem& p) const override {
    if (!gemm_.empty()) return gemm_supports(p, gemm_, knobs_);
    for (std::int64_t w : p.widths)  // the fused step calls cuBLAS itself
      if (std::max(w, p.batch) > 2147483647) return Support::no("dimension exceeds cuBLAS int");
    return Support::yes();
  }
  void prepare(const Problem& p, const Inputs& in) override {
    build(p, in, [&](auto t) {
      using T = decltype(t);
      return std::make_unique<DeviceStep<T>>(p, gemm_.empty() ? nullptr : make_gemm<T>(gemm_, knobs_));
    });
  }
  void run() override {
    with([](auto& s) { s.step(); });
  }
  Params<double> result() override {
    loss_ = with([](auto& s) { return s.loss(); });
    return StepVariant::result();
  }
  double gemm_share() override {
    reset();
    return with([](auto& s) { return s.gemm_share(); });
  }
  void* stream() override {
    return built() ? with([](auto& s) -> void* { return s.stream(); }) : nullptr;
  }

 private:
  std::string gemm_;
  Knobs knobs_;
};

}  // namespace

std::unique_ptr<Variant> make_device(const std::string& gemm, const Knobs& k) {
  return std::make_unique<Device>(gemm, k);
}

}  // namespace pb::mlp
