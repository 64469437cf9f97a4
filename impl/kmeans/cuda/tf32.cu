// CUDA.TF32: single-precision k-means (type f32) with the distances on the
// tensor cores. Each iteration:
//  1. row_norms: each centroid rounded to TF32 and -|c|^2 / 2 (FP32);
//  2. assign_tf32, one fused kernel a tile of 128 points: the distance GEMM
//     by mma.sync m16n8k8 TF32 (FP32 sums), the nearest centroid, and the
//     point added into its cluster's sums, count and the inertia;
//  3. the update: each cluster's mean, an empty one keeping its centroid,
//     after the centroids it started from are kept (Result::last_start).
// The points and |x|^2 stay on the device. D at most 128 (three tiles in
// shared memory); the check is check_last_step (kmeans.hpp). The design and
// its measurements: docs/perf/kmeans-tf32.md.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/cuda/buffer.cuh"
#include "core/cuda/device_sm.cuh"
#include "core/gpu.hpp"
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

// A warp a row of n rows of d8 floats: scale x its squared norm (FP32) into
// out and, with rounded, the row rounded to TF32 there. The points' |x|^2
// (scale 1) once; each iteration the centroids' -|c|^2 / 2 and their TF32
// copy, the MMA's B operand, so the assignment kernel converts nothing.
__global__ void row_norms(const float* __restrict__ x, float* __restrict__ out, float* __restrict__ rounded,
                          std::int64_t n, int d8, float scale) {
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  for (std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < n; i += warps) {
    float s = 0;
    for (int t = lane; t < d8; t += 32) {
      const float v = x[i * d8 + t];
      s = fmaf(v, v, s);
      if (rounded) rounded[i * d8 + t] = __uint_as_float(to_tf32(v));
    }
    for (int off = 16; off; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
    if (lane == 0) out[i] = scale * s;
  }
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const float* p) {
  const unsigned a = unsigned(__cvta_generic_to_shared(p));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}

// Per tile of 128 points: the points in shared memory rounded to TF32, then
// the centroids 128 at a time, already in TF32 (row_norms); rows D8 + 4
// floats apart (D8 + 4 = 4 mod 8 words: the 8 rows of 16 bytes an ldmatrix
// reads fall in 32 distinct banks). A warp multiplies 32 points by 64
// centroids of the tile (4 warps across the points, 2 across the
// centroids: fewer shared-memory reads an MMA than 16 x 128). The
// accumulators start at -|c|^2 / 2, so each MMA chain ends at
// x.c - |c|^2 / 2 and the nearest centroid is the largest
// (|x - c|^2 = |x|^2 - 2 of it); ties go to the lower index. Then each
// point's nearest over the two halves, its count and inertia, and its offset
// from the centroid, x - c, added into the cluster's sums: offsets keep the
// float sums of millions of points accurate where the points themselves
// would lose the mean's low digits.
// Small: K below one tile of 128, so most of it is padding: fragment pairs
// wholly past K are left out, in an instantiation of their own so that the
// full tiles' loop carries no test (docs/perf/kmeans-tf32.md).
// Local: K x D8 sums fit in shared memory (kLocalSums). The block then takes
// tile after tile (a persistent grid), sums in shared memory and adds them
// to the global sums once: a few clusters would otherwise take every
// block's reductions on the same addresses. Otherwise one tile a block and
// the sums by vector reductions of 4 floats straight into global memory.
constexpr int kWM = 2;                   // m16 tiles a warp: 32 points
constexpr int kNF = 16 / kWM;            // n8 fragments a warp: 64 centroids
constexpr int kRowWarps = kWarps / kWM;  // warps across the points
constexpr int kLocalSums = 4096;         // floats of K x D8 summed in shared memory

// One warp's share of a tile: acc += its 32 points x its 64 centroids over
// the D8 columns. Partial: the fragment pairs from the first wholly past K
// (live columns left) are left out.
template <bool Partial>
__device__ __forceinline__ void mma_tile(float (&acc)[kWM][kNF][4], const float* a_addr, const float* b_addr,
                                         int stride, int d8, int live) {
  for (int kk = 0; kk < d8; kk += 8) {
    unsigned a[kWM][4];
#pragma unroll
    for (int i = 0; i < kWM; ++i) ldmatrix_x4(a[i], a_addr + 16 * i * stride + kk);
#pragma unroll
    for (int f = 0; f < kNF; f += 2) {
      if (Partial && 8 * f >= live) break;
      unsigned b[4];
      ldmatrix_x4(b, b_addr + 8 * f * stride + kk);
#pragma unroll
      for (int u = 0; u < 2; ++u)
#pragma unroll
        for (int i = 0; i < kWM; ++i)
          asm volatile(
              "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
              "{%8, %9}, {%0, %1, %2, %3};\n"
              : "+f"(acc[i][f + u][0]), "+f"(acc[i][f + u][1]), "+f"(acc[i][f + u][2]), "+f"(acc[i][f + u][3])
              : "r"(a[i][0]), "r"(a[i][1]), "r"(a[i][2]), "r"(a[i][3]), "r"(b[2 * u]), "r"(b[2 * u + 1]));
    }
  }
}

template <bool Local, bool Small>
__global__ void __launch_bounds__(kThreads, 2)
    assign_tf32(const float* __restrict__ X, const float* __restrict__ xx, const float* __restrict__ C,
                const float* __restrict__ Ct, const float* __restrict__ hc, int* __restrict__ assign,
                float* __restrict__ sums, unsigned* __restrict__ counts, double* __restrict__ inertia,
                std::int64_t n, int k, int d8) {
  extern __shared__ __align__(16) float smem[];
  const int stride = d8 + 4, vecs = d8 / 4;
  float* xt = smem;                                                             // kPoints x stride, TF32
  float* ct = xt + kPoints * stride;                                            // kCentroids x stride, TF32
  float* hcs = ct + kCentroids * stride;                                        // kCentroids
  float* sbest = hcs + kCentroids;                                              // kWM x kPoints
  int* sarg = reinterpret_cast<int*>(sbest + kWM * kPoints);                    // kWM x kPoints
  float* ssum = reinterpret_cast<float*>(sarg + kWM * kPoints);                 // Local: K x D8
  unsigned* scount = reinterpret_cast<unsigned*>(ssum + (Local ? k * d8 : 0));  // Local: K
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int wp = warp % kRowWarps, wn = warp / kRowWarps;
  if (Local) {
    for (int j = threadIdx.x; j < k * d8; j += kThreads) ssum[j] = 0.f;
    for (int j = threadIdx.x; j < k; j += kThreads) scount[j] = 0;
  }
  // ldmatrix row addresses. A, per 16 points: matrices (rows 0-7, k 0-3),
  // (8-15, 0-3), (0-7, 4-7), (8-15, 4-7) give a0..a3. B, for fragments f
  // and f + 1: (centroids 8f..8f+7, k 0-3), (same, k 4-7), then the same
  // for f + 1, give b0, b1 of f and of f + 1.
  const int m = lane >> 3, row = lane & 7;
  const float* a_addr = xt + (wp * 16 * kWM + (m & 1) * 8 + row) * stride + (m >> 1) * 4;
  const int col0 = wn * 8 * kNF;
  const float* b_addr = ct + (col0 + (m >> 1) * 8 + row) * stride + (m & 1) * 4;
  const std::int64_t tiles = (n + kPoints - 1) / kPoints;
  double part = 0;
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::int64_t first = tile * kPoints;
    __syncthreads();  // the last tile's sums read sarg (and the sums are zero)
    for (int q = threadIdx.x; q < kPoints * vecs; q += kThreads) {
      const int r = q / vecs, v = q - r * vecs;
      float4 val = make_float4(0.f, 0.f, 0.f, 0.f);
      if (first + r < n) val = reinterpret_cast<const float4*>(X + (first + r) * d8)[v];
      val.x = __uint_as_float(to_tf32(val.x));
      val.y = __uint_as_float(to_tf32(val.y));
      val.z = __uint_as_float(to_tf32(val.z));
      val.w = __uint_as_float(to_tf32(val.w));
      *reinterpret_cast<float4*>(xt + r * stride + 4 * v) = val;
    }
    float best[kWM][2];
    int arg[kWM][2];
#pragma unroll
    for (int i = 0; i < kWM; ++i) best[i][0] = best[i][1] = -INFINITY, arg[i][0] = arg[i][1] = 0;
    for (int c0 = 0; c0 < k; c0 += kCentroids) {
      __syncthreads();  // the last tile's reads are done (and the points are in)
      for (int q = threadIdx.x; q < kCentroids * vecs; q += kThreads) {
        const int r = q / vecs, v = q - r * vecs;
        float4 val = make_float4(0.f, 0.f, 0.f, 0.f);
        if (c0 + r < k) val = reinterpret_cast<const float4*>(Ct + std::int64_t(c0 + r) * d8)[v];
        *reinterpret_cast<float4*>(ct + r * stride + 4 * v) = val;
      }
      for (int j = threadIdx.x; j < kCentroids; j += kThreads) hcs[j] = c0 + j < k ? hc[c0 + j] : -INFINITY;
      __syncthreads();
      float acc[kWM][kNF][4];
#pragma unroll
      for (int f = 0; f < kNF; ++f) {
        const float2 h = *reinterpret_cast<const float2*>(hcs + col0 + 8 * f + 2 * t);
#pragma unroll
        for (int i = 0; i < kWM; ++i) {
          acc[i][f][0] = acc[i][f][2] = h.x;
          acc[i][f][1] = acc[i][f][3] = h.y;
        }
      }
      const int live = k - c0 - col0;  // this warp's centroids left
      if (live > 0) {
        mma_tile<Small>(acc, a_addr, b_addr, stride, d8, live);
      }
      // C fragment: acc[i][f][0..1] row g, columns 8f + 2t, +1; [2..3] row g + 8.
#pragma unroll
      for (int i = 0; i < kWM; ++i)
#pragma unroll
        for (int f = 0; f < kNF; ++f)
#pragma unroll
          for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int e = 0; e < 2; ++e)
              if (acc[i][f][2 * h + e] > best[i][h])
                best[i][h] = acc[i][f][2 * h + e], arg[i][h] = c0 + col0 + 8 * f + 2 * t + e;
    }
    // The quad's four threads hold one row's columns: the largest, ties to the lower index.
#pragma unroll
    for (int i = 0; i < kWM; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        for (int off = 1; off <= 2; off <<= 1) {
          const float ov = __shfl_xor_sync(0xffffffffu, best[i][h], off);
          const int oa = __shfl_xor_sync(0xffffffffu, arg[i][h], off);
          if (ov > best[i][h] || (ov == best[i][h] && oa < arg[i][h])) best[i][h] = ov, arg[i][h] = oa;
        }
        if (t == 0) {
          const int r = wp * 16 * kWM + 16 * i + g + 8 * h;
          sbest[wn * kPoints + r] = best[i][h];
          sarg[wn * kPoints + r] = arg[i][h];
        }
      }
    __syncthreads();
    // A thread a point: the nearest of the two halves, its count and distance.
    if (threadIdx.x < kPoints) {
      const int r = threadIdx.x;
      float b = sbest[r];
      int a = sarg[r];
#pragma unroll
      for (int w = 1; w < kWM; ++w) {
        const float ob = sbest[w * kPoints + r];
        const int oa = sarg[w * kPoints + r];
        if (ob > b || (ob == b && oa < a)) b = ob, a = oa;
      }
      sarg[r] = a;
      const std::int64_t i = first + r;
      if (i < n) {
        assign[i] = a;
        atomicAdd(Local ? scount + a : counts + a, 1u);
        part += fmaxf(fmaf(-2.f, b, xx[i]), 0.f);
      }
    }
    __syncthreads();
    // Each point's offset from its centroid into the sums (the padding
    // columns add zeros); the points come again from global memory, where
    // the tile's rows are still in L2.
    for (int q = threadIdx.x; q < kPoints * vecs; q += kThreads) {
      const int r = q / vecs, v = q - r * vecs;
      if (first + r >= n) continue;
      const std::int64_t at = std::int64_t(sarg[r]) * d8 + 4 * v;
      const float4 x = reinterpret_cast<const float4*>(X + (first + r) * d8)[v];
      const float4 c = *reinterpret_cast<const float4*>(C + at);
      if (Local) {
        atomicAdd(ssum + at, x.x - c.x);
        atomicAdd(ssum + at + 1, x.y - c.y);
        atomicAdd(ssum + at + 2, x.z - c.z);
        atomicAdd(ssum + at + 3, x.w - c.w);
      } else {
#if __CUDA_ARCH__ >= 900
        asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(sums + at), "f"(x.x - c.x),
                     "f"(x.y - c.y), "f"(x.z - c.z), "f"(x.w - c.w)
                     : "memory");
#else  // vector reductions are sm_90's
        atomicAdd(sums + at, x.x - c.x);
        atomicAdd(sums + at + 1, x.y - c.y);
        atomicAdd(sums + at + 2, x.z - c.z);
        atomicAdd(sums + at + 3, x.w - c.w);
#endif
      }
    }
  }
  for (int off = 16; off; off >>= 1) part += __shfl_xor_sync(0xffffffffu, part, off);
  if (lane == 0 && part != 0) atomicAdd(inertia, part);
  if (Local) {
    __syncthreads();
    for (int j = threadIdx.x; j < k * d8; j += kThreads)
      if (ssum[j] != 0.f) atomicAdd(sums + j, ssum[j]);
    for (int j = threadIdx.x; j < k; j += kThreads)
      if (scount[j]) atomicAdd(counts + j, scount[j]);
  }
}

// The update: each cluster's centroid moved by the mean of its points'
// offsets; an empty one keeps its centroid.
__global__ void update_means(float* __restrict__ C, const float* __restrict__ sums,
                             const unsigned* __restrict__ counts, int k, int d, int d8) {
  const std::int64_t total = std::int64_t(k) * d;
  for (std::int64_t j = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < total;
       j += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t c = j / d, q = j - c * d;
    if (counts[c]) C[c * d8 + q] += sums[c * d8 + q] / float(counts[c]);
  }
}

unsigned blocks_for(std::int64_t work, int threads) {
  return unsigned(std::min<std::int64_t>((work + threads - 1) / threads, std::int64_t(1) << 20));
}

// The assignment kernel's shared memory: the point and centroid tiles, the
// centroids' -|c|^2 / 2, the two halves' best per point, and with local sums
// K x D8 sums and K counts.
std::size_t smem_bytes(std::int64_t k, int d8, bool local) {
  return std::size_t(kPoints + kCentroids) * (d8 + 4) * sizeof(float) + kCentroids * sizeof(float) +
         std::size_t(2 * kWM) * kPoints * sizeof(float) +
         (local ? std::size_t(k) * (d8 + 1) * sizeof(float) : 0);
}

bool local_sums(std::int64_t k, int d8) { return k * d8 <= kLocalSums; }

using AssignKernel = void (*)(const float*, const float*, const float*, const float*, const float*, int*,
                              float*, unsigned*, double*, std::int64_t, int, int);

class Tf32 final : public Variant {
 public:
  Support supports(const Problem& p) const override {
    if (p.type != Type::F32) return Support::no("type f64: CUDA.TF32 computes in TF32 (type f32 only)");
    if (p.d > kMaxD) return Support::no("D above 128: the point and centroid tiles in shared memory");
    if (p.k > (std::int64_t(1) << 30)) return Support::no("K above 2^30");
    if (device_sm_or_zero() < 80) return Support::no("TF32 tensor cores need sm_80 or newer");
    const int d8 = padded(p.d);
    const std::size_t need = smem_bytes(p.k, d8, local_sums(p.k, d8));
    if (need > gpu_status().shared_optin_bytes)
      return Support::no("point and centroid tiles need " + std::to_string(need) +
                         " bytes of shared memory, more than the " +
                         std::to_string(gpu_status().shared_optin_bytes) + " a block can have");
    return Support::yes();
  }
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
    Ct_ = DeviceBuffer<float>(ch.size());
    hc_ = DeviceBuffer<float>(std::size_t(p.k));
    counts_ = DeviceBuffer<unsigned>(std::size_t(p.k));
    assign_ = DeviceBuffer<int>(std::size_t(p.n));
    inertia_ = DeviceBuffer<double>(1);
    // On the variant's stream, which does not wait for the legacy one: the
    // kernels below must see the copies.
    PB_CUDA(cudaMemcpyAsync(X_.get(), xh.data(), X_.bytes(), cudaMemcpyHostToDevice, stream_.get()));
    PB_CUDA(cudaMemcpyAsync(init_.get(), ch.data(), init_.bytes(), cudaMemcpyHostToDevice, stream_.get()));
    const bool local = local_sums(p.k, d8_);
    const bool small = p.k < kCentroids;
    kernel_ = local ? (small ? assign_tf32<true, true> : assign_tf32<true, false>)
                    : (small ? assign_tf32<false, true> : assign_tf32<false, false>);
    smem_ = smem_bytes(p.k, d8_, local);
    PB_CUDA(cudaFuncSetAttribute(kernel_, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_)));
    // Local sums: a persistent grid, as many blocks as fit at once.
    const std::int64_t tiles = (p.n + kPoints - 1) / kPoints;
    grid_ = unsigned(std::min<std::int64_t>(tiles, std::int64_t(1) << 30));
    if (local) {
      int per_sm = 0, sms = 0, dev = 0;
      PB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_, kThreads, smem_));
      PB_CUDA(cudaGetDevice(&dev));
      PB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
      grid_ = unsigned(std::min<std::int64_t>(tiles, std::int64_t(std::max(per_sm, 1)) * sms));
    }
    row_norms<<<blocks_for(p.n * 32, 256), 256, 0, stream_.get()>>>(X_.get(), xx_.get(), nullptr, p.n, d8_,
                                                                    1.f);
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
      row_norms<<<blocks_for(p_.k * 32, 256), 256, 0, s>>>(C_.get(), hc_.get(), Ct_.get(), p_.k, d8_, -0.5f);
      PB_CUDA_LAUNCHED();
      PB_CUDA(cudaMemsetAsync(sums_.get(), 0, sums_.bytes(), s));
      PB_CUDA(cudaMemsetAsync(counts_.get(), 0, counts_.bytes(), s));
      PB_CUDA(cudaMemsetAsync(inertia_.get(), 0, inertia_.bytes(), s));
      kernel_<<<grid_, kThreads, smem_, s>>>(X_.get(), xx_.get(), C_.get(), Ct_.get(), hc_.get(),
                                             assign_.get(), sums_.get(), counts_.get(), inertia_.get(), p_.n,
                                             K, d8_);
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
  AssignKernel kernel_ = nullptr;
  unsigned grid_ = 1;
  std::size_t smem_ = 0;
  Stream stream_;
  DeviceBuffer<float> X_, init_, C_, prev_, sums_, xx_, Ct_, hc_;
  DeviceBuffer<unsigned> counts_;
  DeviceBuffer<int> assign_;
  DeviceBuffer<double> inertia_;
};

}  // namespace

std::unique_ptr<Variant> make_cuda_tf32() { return std::make_unique<Tf32>(); }

}  // namespace pb::kmeans
