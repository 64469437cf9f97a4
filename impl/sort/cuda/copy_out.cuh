// The GPU sorts' result(): their sorted keys (and values) back to the host.
#pragma once
#include <cstdint>

#include "core/cuda/check.cuh"
#include "sort/sort.hpp"

namespace pb::sort {

// Waits for the sort queued on `stream`, then copies p.n keys (and, for
// pairs, p.n values) from the device into out.
inline void copy_out(const Problem& p, cudaStream_t stream, const std::uint32_t* keys,
                     const std::uint32_t* values, Output& out) {
  PB_CUDA(cudaStreamSynchronize(stream));
  const auto n = std::size_t(p.n);
  out.keys.resize(n);
  PB_CUDA(cudaMemcpy(out.keys.data(), keys, n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  out.values.clear();
  if (p.pairs()) {
    out.values.resize(n);
    PB_CUDA(cudaMemcpy(out.values.data(), values, n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  }
}

}  // namespace pb::sort
