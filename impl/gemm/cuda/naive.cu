// CUDA.Naive: one thread per output element, reading A and B straight from
// global memory (seed 004's first GPU version). threadIdx.x runs along the
// output row, so B (for AB / AtB) and the output are accessed coalesced; every
// operand element is re-read from L2 / memory K times. The block is
// block x block threads.
#include "gemm/cuda/device_variant.cuh"

namespace pb::gemm {
namespace {

template <Op op, class T>
__global__ void naive_kernel(const T* __restrict__ A, const T* __restrict__ B, const T* __restrict__ C,
                             T* __restrict__ D, int64_t M, int64_t N, int64_t K) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= N) return;
  for (int64_t i = int64_t(blockIdx.y) * blockDim.y + threadIdx.y; i < M;
       i += int64_t(gridDim.y) * blockDim.y) {
    // Walk both operands with pointers: the index products stay out of the k loop.
    const T* pa = op == Op::AtB ? A + i : A + i * K;
    const T* pb = op == Op::ABtC ? B + j * K : B + j;
    const int64_t sa = op == Op::AtB ? M : 1, sb = op == Op::ABtC ? 1 : N;
    T acc = 0;
    for (int64_t k = 0; k < K; ++k, pa += sa, pb += sb) acc += *pa * *pb;
    if (op == Op::ABtC) acc += C[i * N + j];
    D[i * N + j] = acc;
  }
}

template <class T>
class CudaNaive final : public DeviceVariant<T> {
 public:
  explicit CudaNaive(int block) : block_(block) {}
  Support supports(const Problem&) const override {
    if (block_ != 8 && block_ != 16 && block_ != 32)
      return Support::no("block " + std::to_string(block_) + " not built (8, 16, 32)");
    return Support::yes();
  }
  void launch(const Problem& p, const T* a, const T* b, const T* c, T* d) override {
    dim3 threads(block_, block_);
    dim3 grid(unsigned((p.n + block_ - 1) / block_),
              unsigned(std::min<int64_t>((p.m + block_ - 1) / block_, 65535)));
    auto s = this->s();
    with_op(p.op,
            [&](auto op) { naive_kernel<op.value><<<grid, threads, 0, s>>>(a, b, c, d, p.m, p.n, p.k); });
    PB_CUDA_LAUNCHED();
  }

 private:
  int block_;
};
}  // namespace

template <class T>
std::unique_ptr<Variant<T>> make_cuda_naive(int block) {
  return std::make_unique<CudaNaive<T>>(block);
}
template std::unique_ptr<Variant<float>> make_cuda_naive(int);
template std::unique_ptr<Variant<double>> make_cuda_naive(int);

}  // namespace pb::gemm
