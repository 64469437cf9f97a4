#pragma once
// Ceilings: the machine's own limits, measured in the same run as the
// variants so the report can express each variant as a fraction of them.
// The GEMM ceilings (cuBLAS, OpenBLAS at every core) reuse the GEMM family's
// variants and verifier (benchmarks/ceiling.cpp); the bandwidth ceilings are
// here. Host-clean.
#include <cstdint>
#include <memory>

#include "core/job.hpp"

namespace pb::ceiling {

// STREAM-style triad a[i] = b[i] + s * c[i] over n doubles with `threads`
// OpenMP threads; counts 24 bytes an element (two reads, one write).
std::unique_ptr<Job> make_host_triad(std::int64_t n, int threads, std::uint64_t seed);

// Device-to-device cudaMemcpyAsync of `bytes`; counts 2 * bytes (read + write).
// CUDA builds only.
std::unique_ptr<Job> make_device_copy(std::int64_t bytes, std::uint64_t seed);

// The interconnect (interconnect.cu; CUDA builds only): a peer copy of
// `bytes` from GPU src to GPU dst, and NCCL collectives of `bytes` a GPU over
// GPUs 0 .. gpus - 1. Without NCCL a collective is unsupported, saying so.
enum class Link { AllReduce, SendRecv };
std::unique_ptr<Job> make_peer_copy(int src, int dst, std::int64_t bytes);
std::unique_ptr<Job> make_collective(Link what, int gpus, std::int64_t bytes);

}  // namespace pb::ceiling
