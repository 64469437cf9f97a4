#pragma once
// A tiled transpose for the GEMM kernels that want an operand in the other
// orientation (CUDA.WGMMA's TF32 reads K-major only; CUDA.Pipelined's
// packing tiles read k-major only): out[c * ld_out + r] = in[r * ld_in + c]
// for r < rows, c < cols. A 32 x 32 tile goes through shared memory, so both
// the reads (along c) and the writes (along r) are coalesced; the padding
// column keeps the tile's column reads off one bank.
#include <algorithm>
#include <cstdint>

#include "core/cuda/check.cuh"

namespace pb::gemm {

template <class E>
__global__ void transpose_kernel(const E* __restrict__ in, E* __restrict__ out, std::int64_t rows,
                                 std::int64_t cols, std::int64_t ld_in, std::int64_t ld_out) {
  __shared__ E tile[32][33];
  const std::int64_t c0 = std::int64_t(blockIdx.x) * 32;
  for (std::int64_t r0 = std::int64_t(blockIdx.y) * 32; r0 < rows; r0 += std::int64_t(gridDim.y) * 32) {
    for (int i = threadIdx.y; i < 32; i += 8) {
      const std::int64_t r = r0 + i, c = c0 + threadIdx.x;
      if (r < rows && c < cols) tile[i][threadIdx.x] = in[r * ld_in + c];
    }
    __syncthreads();
    for (int i = threadIdx.y; i < 32; i += 8) {
      const std::int64_t c = c0 + i, r = r0 + threadIdx.x;
      if (c < cols && r < rows) out[c * ld_out + r] = tile[threadIdx.x][i];
    }
    __syncthreads();
  }
}

// Enqueues the transpose of the rows x cols matrix `in` on s.
template <class E>
void transpose(const E* in, E* out, std::int64_t rows, std::int64_t cols, std::int64_t ld_in,
               std::int64_t ld_out, cudaStream_t s) {
  const dim3 block(32, 8);
  const dim3 grid(unsigned((cols + 31) / 32), unsigned(std::min<std::int64_t>((rows + 31) / 32, 65535)));
  transpose_kernel<E><<<grid, block, 0, s>>>(in, out, rows, cols, ld_in, ld_out);
  PB_CUDA_LAUNCHED();
}

}  // namespace pb::gemm
