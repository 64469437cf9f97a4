// CUDA.Tiled: the CUDA samples' MatrixMulCUDA<BLOCK_SIZE> design. Relative to
// Naive, each block stages BS x BS tiles of A and B in shared memory, so every
// global element is read K / BS times instead of K times. Unlike the sample it
// is correct for any shape: out-of-range tile elements load as zero and
// out-of-range outputs are not stored; the bounds checks stay out of the loop
// over full K tiles, which costs the sample's own few instructions per tile. Transposed operands are loaded
// along their contiguous dimension (coalesced) and written to shared memory transposed, into a tile padded by
// one element against bank conflicts.
#include "gemm/cuda/device_variant.cuh"

namespace pb::gemm {
namespace {

template <int BS, Op op, class T>
__global__ void __launch_bounds__(BS* BS)
    tiled_kernel(const T* __restrict__ A, const T* __restrict__ B, const T* __restrict__ C, T* __restrict__ D,
                 int64_t M, int64_t N, int64_t K) {
  constexpr bool a_krows = op == Op::AtB, b_krows = op != Op::ABtC;
  // Pad only a tile that is written transposed (one column per warp, which
  // would hit one bank 32 times); unpadded rows stay 16-byte aligned, so the
  // compiler reads As[ty][k..k+3] with one vector load, as in the sample.
  __shared__ __align__(16) T As[BS][BS + (a_krows ? 1 : 0)];  // As[i][k]
  __shared__ __align__(16) T Bs[BS][BS + (b_krows ? 0 : 1)];  // Bs[k][j]
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t n0 = int64_t(blockIdx.x) * BS, j = n0 + tx;
  const int64_t tiles_m = (M + BS - 1) / BS;
  // Each thread loads one element of each operand tile, along the operand's
  // contiguous dimension: A of AtB and B of AB / AtB are read k-row by k-row,
  // A of AB / ABtC and B of ABtC row by row along k. Row validity is fixed per
  // output tile; the k bound matters only in the last, partial K tile, so the
  // loop over full tiles only advances two pointers.
  const int a_k = a_krows ? ty : tx, b_k = b_krows ? ty : tx;
  const int64_t a_step = a_krows ? BS * M : BS, b_step = b_krows ? BS * N : BS;
  const T* pb0 = b_krows ? B + ty * N + j : B + (n0 + ty) * K + tx;
  const bool b_ok = b_krows ? j < N : n0 + ty < N;

  for (int64_t tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
    const int64_t i0 = tm * BS, i = i0 + ty;
    const T* pa = a_krows ? A + ty * M + i0 + tx : A + i * K + tx;
    const bool a_ok = a_krows ? i0 + tx < M : i < M;
    const T* pb = pb0;
    auto stage = [&](bool a_in, bool b_in) {
      T a = a_in ? *pa : T(0), b = b_in ? *pb : T(0);
      if (a_krows)
        As[tx][ty] = a;
      else
        As[ty][tx] = a;
      if (b_krows)
        Bs[ty][tx] = b;
      else
        Bs[tx][ty] = b;
      pa += a_step;
      pb += b_step;
    };
    T acc = 0;
    int64_t k0 = 0;
    for (; k0 + BS <= K; k0 += BS) {
      stage(a_ok, b_ok);
      __syncthreads();
#pragma unroll
      for (int k = 0; k < BS; ++k) acc += As[ty][k] * Bs[k][tx];
      __syncthreads();
    }
    if (k0 < K) {
      stage(a_ok && k0 + a_k < K, b_ok && k0 + b_k < K);
      __syncthreads();
#pragma unroll
      for (int k = 0; k < BS; ++k) acc += As[ty][k] * Bs[k][tx];
      __syncthreads();
    }
    if (i < M && j < N) {
      if (op == Op::ABtC) acc += C[i * N + j];
      D[i * N + j] = acc;
    }
  }
}

template <class T>
class CudaTiled final : public DeviceVariant<T> {
 public:
  explicit CudaTiled(int block) : block_(block) {}
  Support supports(const Problem&) const override {
    if (block_ != 16 && block_ != 32)
      return Support::no("tile " + std::to_string(block_) + " not built (16, 32)");
    return Support::yes();
  }
  void launch(const Problem& p, const T* a, const T* b, const T* c, T* d) override {
    if (block_ == 16)
      launch_tiles<16>(p, a, b, c, d);
    else
      launch_tiles<32>(p, a, b, c, d);
    PB_CUDA_LAUNCHED();
  }

 private:
  template <int BS>
  void launch_tiles(const Problem& p, const T* a, const T* b, const T* c, T* d) {
    dim3 threads(BS, BS);
    dim3 grid(unsigned((p.n + BS - 1) / BS), unsigned(std::min<int64_t>((p.m + BS - 1) / BS, 65535)));
    auto s = this->s();
    with_op(p.op,
            [&](auto op) { tiled_kernel<BS, op.value><<<grid, threads, 0, s>>>(a, b, c, d, p.m, p.n, p.k); });
  }
  int block_;
};
}  // namespace

template <class T>
std::unique_ptr<Variant<T>> make_cuda_tiled(int block) {
  return std::make_unique<CudaTiled<T>>(block);
}
template std::unique_ptr<Variant<float>> make_cuda_tiled(int);
template std::unique_ptr<Variant<double>> make_cuda_tiled(int);

}  // namespace pb::gemm
