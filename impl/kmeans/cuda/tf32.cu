// CUDA.TF32: single-precision k-means (type f32) with the distances on the
// tensor cores. Each iteration:
//  1. |c|^2 of every centroid (FP32, from the float centroids);
//  2. one fused kernel a tile of 128 points: the points in shared memory
//     (float, rows padded to D + 4 so the fragment loads are free of bank
//     conflicts), then the centroids 128 at a time; each of the 8 warps
//     multiplies its 16 points by the tile's centroids with mma.sync
//     m16n8k8 TF32 (operands rounded to TF32 as they are loaded, FP32
//     sums), keeps per point the least |c|^2 - 2 x.c (ties to the lower
//     index, as everywhere), and at the end adds each point into its
//     cluster's sums (float atomics), its count, and |x|^2 + that least
//     value into the inertia;
//  3. the update: each cluster's mean, an empty one keeping its centroid,
//     after the centroids it started from are kept (Result::last_start).
// The points and |x|^2 stay on the device. D at most 128 (the two tiles in
// shared memory); the check is check_last_step (kmeans.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/cuda/buffer.cuh"
#include "core/cuda/device_sm.cuh"
#include "kmeans/kmeans.hpp"

namespace pb::kmeans {
namespace {

constexpr int kPoints = 128;     // points a block
constexpr int kCentroids = 128;  // centroids a tile
constexpr int kWarps = 8;        // each 16 points
constexpr int kThreads = kWarps * 32;
constexpr int kMaxD = 128;

// D rounded up to the MMA's k of 8; rows in shared memory D8 + 4 floats apart.
int padded(std::int64_t d) { return int((d + 7) / 8 * 8); }

__device__ __forceinline__ unsigned to_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}

// Squared norms of n rows of d floats (row stride ld): a warp a row.
__global__ void row_norms(const float* __restrict__ x, float* __restrict__ out, std::int64_t n, int d,
                          int ld) {
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  for (std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < n; i += warps) {
    float s = 0;
    for (int t = lane; t < d; t += 32) {
      const float v = x[i * ld + t];
      s = fmaf(v, v, s);
    }
    for (int off = 16; off; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
    if (lane == 0) out[i] = s;
  }
}

// Loads rows [first, first + rows) of src (n rows, stride ld = D8 floats,
// zero past n) into s (stride D8 + 4).
__device__ __forceinline__ void load_rows(float* s, const float* __restrict__ src, std::int64_t first,
                                          int rows, std::int64_t n, int d8) {
  const int vecs = d8 / 4, stride = d8 + 4;
  for (int q = threadIdx.x; q < rows * vecs; q += kThreads) {
    const int r = q / vecs, v = q - r * vecs;
    float4 val = make_float4(0.f, 0.f, 0.f, 0.f);
    if (first + r < n) val = reinterpret_cast<const float4*>(src + (first + r) * d8)[v];
    *reinterpret_cast<float4*>(s + r * stride + 4 * v) = val;
  }
}

__global__ void __launch_bounds__(kThreads)
    assign_tf32(const float* __restrict__ X, const float* __restrict__ xx, const float* __restrict__ C,
                const float* __restrict__ cc, int* __restrict__ assign, float* __restrict__ sums,
                unsigned* __restrict__ counts, double* __restrict__ inertia, std::int64_t n, int k, int d,
                int d8) {
  extern __shared__ __align__(16) float smem[];
  const int stride = d8 + 4;
  float* xs = smem;                       // kPoints x stride
  float* cs = smem + kPoints * stride;    // kCentroids x stride
  float* ccs = cs + kCentroids * stride;  // kCentroids
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const std::int64_t first = std::int64_t(blockIdx.x) * kPoints;
  load_rows(xs, X, first, kPoints, n, d8);
  // This thread's rows of its warp's 16: g and g + 8.
  const float* xa = xs + (warp * 16 + g) * stride;
  const float* xb = xa + 8 * stride;
  float best[2] = {INFINITY, INFINITY};
  int arg[2] = {0, 0};
  for (int c0 = 0; c0 < k; c0 += kCentroids) {
    __syncthreads();  // the last tile's reads are done (and the points are in)
    load_rows(cs, C, c0, kCentroids, k, d8);
    for (int j = threadIdx.x; j < kCentroids; j += kThreads) ccs[j] = c0 + j < k ? cc[c0 + j] : INFINITY;
    __syncthreads();
    float acc[kCentroids / 8][4];
#pragma unroll
    for (int f = 0; f < kCentroids / 8; ++f) acc[f][0] = acc[f][1] = acc[f][2] = acc[f][3] = 0.f;
    for (int kk = 0; kk < d8; kk += 8) {
      // A (16 x 8, row-major): rows g, g + 8; columns t, t + 4.
      const unsigned a0 = to_tf32(xa[kk + t]), a1 = to_tf32(xb[kk + t]), a2 = to_tf32(xa[kk + t + 4]),
                     a3 = to_tf32(xb[kk + t + 4]);
#pragma unroll
      for (int f = 0; f < kCentroids / 8; ++f) {
        // B (8 x 8, column-major): B[k][n] = centroid n's coordinate k; n = g, k = t, t + 4.
        const float* cb = cs + (8 * f + g) * stride + kk;
        const unsigned b0 = to_tf32(cb[t]), b1 = to_tf32(cb[t + 4]);
        asm volatile(
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, "
            "%9}, "
            "{%0, %1, %2, %3};\n"
            : "+f"(acc[f][0]), "+f"(acc[f][1]), "+f"(acc[f][2]), "+f"(acc[f][3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
      }
    }
    // C fragment: acc[f][0..1] row g, columns 8f + 2t, +1; acc[f][2..3] row g + 8.
#pragma unroll
    for (int f = 0; f < kCentroids / 8; ++f)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int col = 8 * f + 2 * t + e;
          const float v = fmaf(-2.f, acc[f][2 * h + e], ccs[col]);
          if (v < best[h]) best[h] = v, arg[h] = c0 + col;
        }
  }
  // The quad's four threads hold one row's columns: the least, ties to the lower index.
#pragma unroll
  for (int h = 0; h < 2; ++h)
    for (int off = 1; off <= 2; off <<= 1) {
      const float ov = __shfl_xor_sync(0xffffffffu, best[h], off);
      const int oa = __shfl_xor_sync(0xffffffffu, arg[h], off);
      if (ov < best[h] || (ov == best[h] && oa < arg[h])) best[h] = ov, arg[h] = oa;
    }
  // Each of the warp's 16 points: its cluster, count, sums and distance.
  double part = 0;
  for (int r = 0; r < 16; ++r) {
    const int h = r / 8, src = (r % 8) * 4;  // lane t = 0 of row r's quad
    const int a = __shfl_sync(0xffffffffu, arg[h], src);
    const float b = __shfl_sync(0xffffffffu, best[h], src);
    const std::int64_t i = first + warp * 16 + r;
    if (i >= n) continue;  // the same for every lane
    const float* x = xs + (warp * 16 + r) * stride;
    for (int q = lane; q < d; q += 32) atomicAdd(sums + std::int64_t(a) * d8 + q, x[q]);
    if (lane == 0) {
      assign[i] = a;
      atomicAdd(counts + a, 1u);
      part += fmaxf(xx[i] + b, 0.f);
    }
  }
  if (lane == 0 && part != 0) atomicAdd(inertia, part);
}

// The update: each cluster's mean; an empty one keeps its centroid.
__global__ void update_means(float* __restrict__ C, const float* __restrict__ sums,
                             const unsigned* __restrict__ counts, int k, int d, int d8) {
  const std::int64_t total = std::int64_t(k) * d;
  for (std::int64_t j = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < total;
       j += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t c = j / d, q = j - c * d;
    if (counts[c]) C[c * d8 + q] = sums[c * d8 + q] / float(counts[c]);
  }
}

unsigned blocks_for(std::int64_t work, int threads) {
  return unsigned(std::min<std::int64_t>((work + threads - 1) / threads, std::int64_t(1) << 20));
}

class Tf32 final : public Variant {
 public:
  Support supports(const Problem& p) const override {
    if (p.type != Type::F32) return Support::no("type f64: CUDA.TF32 computes in TF32 (type f32 only)");
    if (p.d > kMaxD) return Support::no("D above 128: the point and centroid tiles in shared memory");
    if (p.k > (std::int64_t(1) << 30)) return Support::no("K above 2^30");
    if (device_sm_or_zero() < 80) return Support::no("TF32 tensor cores need sm_80 or newer");
    return Support::yes();
  }
  bool single_precision() const override { return true; }
  void prepare(const Problem& p, const Inputs& in) override {
    p_ = p;
    d8_ = padded(p.d);
    // Rows of D8 floats, zero beyond D: the MMA's k steps read them.
    std::vector<float> xh(std::size_t(p.n) * d8_, 0.f), ch(std::size_t(p.k) * d8_, 0.f);
    for (std::int64_t i = 0; i < p.n; ++i)
      for (std::int64_t q = 0; q < p.d; ++q) xh[i * d8_ + q] = float(in.points[i * p.d + q]);
    for (std::int64_t c = 0; c < p.k; ++c)
      for (std::int64_t q = 0; q < p.d; ++q) ch[c * d8_ + q] = float(in.init[c * p.d + q]);
    X_ = DeviceBuffer<float>(xh.size());
    init_ = DeviceBuffer<float>(ch.size());
    C_ = DeviceBuffer<float>(ch.size());
    prev_ = DeviceBuffer<float>(ch.size());
    sums_ = DeviceBuffer<float>(ch.size());
    xx_ = DeviceBuffer<float>(std::size_t(p.n));
    cc_ = DeviceBuffer<float>(std::size_t(p.k));
    counts_ = DeviceBuffer<unsigned>(std::size_t(p.k));
    assign_ = DeviceBuffer<int>(std::size_t(p.n));
    inertia_ = DeviceBuffer<double>(1);
    PB_CUDA(cudaMemcpy(X_.get(), xh.data(), X_.bytes(), cudaMemcpyHostToDevice));
    PB_CUDA(cudaMemcpy(init_.get(), ch.data(), init_.bytes(), cudaMemcpyHostToDevice));
    smem_ = std::size_t(kPoints + kCentroids) * (d8_ + 4) * sizeof(float) + kCentroids * sizeof(float);
    PB_CUDA(cudaFuncSetAttribute(assign_tf32, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_)));
    row_norms<<<blocks_for(p.n * 32, 256), 256, 0, stream_.get()>>>(X_.get(), xx_.get(), p.n, int(p.d), d8_);
    PB_CUDA_LAUNCHED();
    PB_CUDA(cudaStreamSynchronize(stream_.get()));
  }
  void reset() override {
    PB_CUDA(cudaMemcpyAsync(C_.get(), init_.get(), C_.bytes(), cudaMemcpyDeviceToDevice, stream_.get()));
  }
  void run() override {
    const cudaStream_t s = stream_.get();
    const int K = int(p_.k), D = int(p_.d);
    for (int it = 0; it < p_.crit.loops; ++it) {
      row_norms<<<blocks_for(p_.k * 32, 256), 256, 0, s>>>(C_.get(), cc_.get(), p_.k, D, d8_);
      PB_CUDA_LAUNCHED();
      PB_CUDA(cudaMemsetAsync(sums_.get(), 0, sums_.bytes(), s));
      PB_CUDA(cudaMemsetAsync(counts_.get(), 0, counts_.bytes(), s));
      PB_CUDA(cudaMemsetAsync(inertia_.get(), 0, inertia_.bytes(), s));
      assign_tf32<<<unsigned((p_.n + kPoints - 1) / kPoints), kThreads, smem_, s>>>(
          X_.get(), xx_.get(), C_.get(), cc_.get(), assign_.get(), sums_.get(), counts_.get(), inertia_.get(),
          p_.n, K, D, d8_);
      PB_CUDA_LAUNCHED();
      PB_CUDA(cudaMemcpyAsync(prev_.get(), C_.get(), C_.bytes(), cudaMemcpyDeviceToDevice, s));
      update_means<<<blocks_for(p_.k * p_.d, 256), 256, 0, s>>>(C_.get(), sums_.get(), counts_.get(), K, D,
                                                                d8_);
      PB_CUDA_LAUNCHED();
    }
  }
  void result(Result& out) override {
    PB_CUDA(cudaStreamSynchronize(stream_.get()));
    out.assign.resize(std::size_t(p_.n));
    PB_CUDA(cudaMemcpy(out.assign.data(), assign_.get(), assign_.bytes(), cudaMemcpyDeviceToHost));
    std::vector<float> c(C_.size()), prev(prev_.size());
    PB_CUDA(cudaMemcpy(c.data(), C_.get(), C_.bytes(), cudaMemcpyDeviceToHost));
    PB_CUDA(cudaMemcpy(prev.data(), prev_.get(), prev_.bytes(), cudaMemcpyDeviceToHost));
    out.centroids.assign(std::size_t(p_.k * p_.d), 0.0);
    out.last_start.assign(std::size_t(p_.k * p_.d), 0.0);
    for (std::int64_t j = 0; j < p_.k; ++j)
      for (std::int64_t q = 0; q < p_.d; ++q) {
        out.centroids[j * p_.d + q] = c[j * d8_ + q];
        out.last_start[j * p_.d + q] = prev[j * d8_ + q];
      }
    PB_CUDA(cudaMemcpy(&out.inertia, inertia_.get(), sizeof(double), cudaMemcpyDeviceToHost));
    out.iterations = p_.crit.loops;
  }
  void* stream() override { return stream_.get(); }

 private:
  Problem p_;
  int d8_ = 8;
  std::size_t smem_ = 0;
  Stream stream_;
  DeviceBuffer<float> X_, init_, C_, prev_, sums_, xx_, cc_;
  DeviceBuffer<unsigned> counts_;
  DeviceBuffer<int> assign_;
  DeviceBuffer<double> inertia_;
};

}  // namespace

std::unique_ptr<Variant> make_cuda_tf32() { return std::make_unique<Tf32>(); }

}  // namespace pb::kmeans
