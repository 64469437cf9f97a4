// scratch: SOR half-sweep kernel designs vs copy bandwidth (not committed)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>
#define CK(x)                                                          \
  do {                                                                 \
    cudaError_t e = (x);                                               \
    if (e != cudaSuccess) {                                            \
      printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      exit(1);                                                         \
    }                                                                  \
  } while (0)
struct Consts {
  std::int64_t m, n;
  double h1, h2, r, two_d, h1_d, r_h2_d, omega, a0, a1, b0, b1;
};
__host__ __device__ inline double relax(const Consts& c, std::int64_t i, std::int64_t j, double u, double xp,
                                        double xm, double yp, double ym) {
  const double x = double(i) * c.h1, y = double(j) * c.h2;
  const double a = c.a0 + c.a1 * x * (1.0 - x) * (0.5 - y);
  const double b = c.b0 + c.b1 * y * (1.0 - y) * (x - 0.5);
  return u + c.omega * (c.two_d * (xp + xm + c.r * (yp + ym)) + c.h1_d * a * (xp - xm) +
                        c.r_h2_d * b * (yp - ym) - u);
}
__global__ void k_split(double* __restrict__ mine, const double* __restrict__ other, Consts c, int colour,
                        std::int64_t w) {
  const std::int64_t jj = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (jj >= w) return;
  for (std::int64_t i = 1 + blockIdx.y; i < c.m - 1; i += gridDim.y) {
    const std::int64_t o = (i + colour) & 1;
    const std::int64_t j = 2 * jj + o;
    if (j < 1 || j >= c.n - 1) continue;
    const std::int64_t k = i * w + jj;
    mine[k] = relax(c, i, j, mine[k], other[k + w], other[k - w], other[k + o], other[k + o - 1]);
  }
}
// R rows per thread, loads first (no register reuse beyond neighbours)
template <int R>
__global__ void k_split_rows(double* __restrict__ mine, const double* __restrict__ other, Consts c,
                             int colour, std::int64_t w) {
  const std::int64_t jj = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (jj >= w) return;
  const std::int64_t i0 = 1 + std::int64_t(blockIdx.y) * R;
  double v[R + 2], own[R], l[R], rr[R];
#pragma unroll
  for (int g = 0; g < R + 2; ++g) {
    std::int64_t i = i0 - 1 + g;
    v[g] = i < c.m ? other[i * w + jj] : 0.0;
  }
#pragma unroll
  for (int g = 0; g < R; ++g) {
    std::int64_t i = i0 + g;
    const std::int64_t o = (i + colour) & 1;
    bool ok = i < c.m - 1;
    own[g] = ok ? mine[i * w + jj] : 0.0;
    std::int64_t nb = jj + (o ? 1 : -1);
    double x = (ok && nb >= 0 && nb < w) ? other[i * w + nb] : 0.0;
    if (o) {
      rr[g] = x;
      l[g] = v[g + 1];
    } else {
      rr[g] = v[g + 1];
      l[g] = x;
    }
  }
#pragma unroll
  for (int g = 0; g < R; ++g) {
    std::int64_t i = i0 + g;
    if (i >= c.m - 1) break;
    const std::int64_t o = (i + colour) & 1;
    const std::int64_t j = 2 * jj + o;
    if (j < 1 || j >= c.n - 1) continue;
    mine[i * w + jj] = relax(c, i, j, own[g], v[g + 2], v[g], rr[g], l[g]);
  }
}
template <int ROWS, int G>
__global__ void k_cols(double* __restrict__ mine, const double* __restrict__ other, Consts c, int colour,
                       std::int64_t w) {
  const std::int64_t jj = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool in = jj < w;
  const int lane = threadIdx.x & 31;
  const std::int64_t first = 1, last = c.m - 1;
  for (std::int64_t i0 = first + std::int64_t(blockIdx.y) * ROWS; i0 < last;
       i0 += std::int64_t(gridDim.y) * ROWS) {
    const std::int64_t i1 = i0 + ROWS < last ? i0 + ROWS : last;
    double up = in ? other[(i0 - 1) * w + jj] : 0.0;
    double mid = in ? other[i0 * w + jj] : 0.0;
    for (std::int64_t i = i0; i < i1; i += G) {
      double below[G], own[G];
#pragma unroll
      for (int g = 0; g < G; ++g) {
        const bool row = in && i + g < i1;
        below[g] = row ? other[(i + g + 1) * w + jj] : 0.0;
        own[g] = row ? mine[(i + g) * w + jj] : 0.0;
      }
#pragma unroll
      for (int g = 0; g < G; ++g) {
        const std::int64_t r = i + g;
        if (r >= i1) break;
        const double down = below[g];
        const double fn = __shfl_down_sync(0xffffffffu, mid, 1), fp = __shfl_up_sync(0xffffffffu, mid, 1);
        const std::int64_t o = (r + colour) & 1;
        const std::int64_t j = 2 * jj + o;
        if (in && j >= 1 && j < c.n - 1) {
          const double right = o ? (lane == 31 ? other[r * w + jj + 1] : fn) : mid;
          const double left = o ? mid : (lane == 0 ? other[r * w + jj - 1] : fp);
          mine[r * w + jj] = relax(c, r, j, own[g], down, up, right, left);
        }
        up = mid;
        mid = down;
      }
    }
  }
}
__global__ void k_copy(double* __restrict__ d, const double* __restrict__ s, std::int64_t n) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    d[i] = s[i];
}
int main(int argc, char** argv) {
  std::int64_t M = argc > 1 ? atoll(argv[1]) : 16386, N = argc > 2 ? atoll(argv[2]) : 16386;
  const int sweeps = 10;
  Consts c{};
  c.m = M;
  c.n = N;
  c.h1 = 1.0 / (M - 1);
  c.h2 = 1.0 / (N - 1);
  c.r = c.h1 * c.h1 / (c.h2 * c.h2);
  double d = 4 * (1 + c.r);
  c.two_d = 2 / d;
  c.h1_d = c.h1 / d;
  c.r_h2_d = c.r * c.h2 / d;
  c.omega = 1.5;
  c.a1 = 3;
  c.b1 = 3;
  std::int64_t w = (N + 1) / 2;
  size_t half = size_t(M * w);
  std::vector<double> h(half);
  for (size_t q = 0; q < half; ++q) h[q] = 1.0 + 0.001 * double((q * 2654435761u) % 1000);
  double *a[2], *s0, *ref[2];
  for (int k = 0; k < 2; ++k) {
    CK(cudaMalloc(&a[k], half * 8));
    CK(cudaMalloc(&ref[k], half * 8));
  }
  CK(cudaMalloc(&s0, half * 8));
  CK(cudaMemcpy(s0, h.data(), half * 8, cudaMemcpyHostToDevice));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  const double bytes = 24.0 * double(M - 2) * double(N - 2) * sweeps;
  auto reset = [&] {
    for (int k = 0; k < 2; ++k) CK(cudaMemcpy(a[k], s0, half * 8, cudaMemcpyDeviceToDevice));
  };
  std::vector<double> o0(half), o1(half), r0(half), r1(half);
  auto time = [&](const char* name, auto launch, bool check) {
    float best = 1e30;
    std::vector<float> ts;
    for (int rep = 0; rep < 6; ++rep) {
      reset();
      CK(cudaDeviceSynchronize());
      cudaEventRecord(e0);
      for (int s = 0; s < sweeps; ++s)
        for (int col = 0; col < 2; ++col) launch(col);
      cudaEventRecord(e1);
      CK(cudaEventSynchronize(e1));
      CK(cudaGetLastError());
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      if (rep) ts.push_back(ms);
    }
    std::sort(ts.begin(), ts.end());
    float med = ts[ts.size() / 2];
    double maxd = 0;
    if (check) {
      CK(cudaMemcpy(o0.data(), a[0], half * 8, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(o1.data(), a[1], half * 8, cudaMemcpyDeviceToHost));
      for (size_t q = 0; q < half; ++q)
        maxd = std::max(maxd, std::max(std::fabs(o0[q] - r0[q]), std::fabs(o1[q] - r1[q])));
    }
    printf("%-28s %8.3f ms  %7.1f GB/s  maxdiff %.2e\n", name, med, bytes / (med * 1e-3) * 1e-9, maxd);
  };
  // copy ceiling
  {
    std::vector<float> ts;
    for (int rep = 0; rep < 6; ++rep) {
      cudaEventRecord(e0);
      CK(cudaMemcpyAsync(a[0], s0, half * 8, cudaMemcpyDeviceToDevice));
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      if (rep) ts.push_back(ms);
    }
    std::sort(ts.begin(), ts.end());
    printf("memcpy D2D %.1f GB/s (%.0f MB)\n", 2.0 * half * 8 / (ts[2] * 1e-3) * 1e-9, half * 8 / 1e6);
    ts.clear();
    for (int rep = 0; rep < 6; ++rep) {
      cudaEventRecord(e0);
      k_copy<<<132 * 16, 256>>>(a[0], s0, half);
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      if (rep) ts.push_back(ms);
    }
    std::sort(ts.begin(), ts.end());
    printf("copy kernel %.1f GB/s\n", 2.0 * half * 8 / (ts[2] * 1e-3) * 1e-9);
  }
  auto gsplit = [&](int b) {
    return dim3(unsigned((w + b - 1) / b), unsigned(std::min<std::int64_t>(M - 2, 65535)));
  };
  {
    int b = 128;
    dim3 g = gsplit(b);
    time(
        "split b128 (ref)", [&](int col) { k_split<<<g, b>>>(a[col], a[1 - col], c, col, w); }, false);
    CK(cudaMemcpy(r0.data(), a[0], half * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(r1.data(), a[1], half * 8, cudaMemcpyDeviceToHost));
  }
  for (int b : {256, 512}) {
    dim3 g = gsplit(b);
    char nm[64];
    snprintf(nm, 64, "split b%d", b);
    time(
        nm, [&](int col) { k_split<<<g, b>>>(a[col], a[1 - col], c, col, w); }, true);
  }
#define ROWSV(R, B)                                                                        \
  {                                                                                        \
    int b = B;                                                                             \
    dim3 g(unsigned((w + b - 1) / b), unsigned((M - 2 + R - 1) / R));                      \
    time(                                                                                  \
        "split_rows R" #R " b" #B,                                                         \
        [&](int col) { k_split_rows<R><<<g, b>>>(a[col], a[1 - col], c, col, w); }, true); \
  }
  ROWSV(2, 128);
  ROWSV(4, 128);
  ROWSV(4, 256);
  ROWSV(8, 128);
  ROWSV(8, 256);
#define COLS(RW, G, B)                                                                   \
  {                                                                                      \
    int b = B;                                                                           \
    std::int64_t y = (M - 2 + RW - 1) / RW;                                              \
    dim3 g(unsigned((w + b - 1) / b), unsigned(std::min<std::int64_t>(y, 65535)));       \
    time(                                                                                \
        "cols rows" #RW " G" #G " b" #B,                                                 \
        [&](int col) { k_cols<RW, G><<<g, b>>>(a[col], a[1 - col], c, col, w); }, true); \
  }
  COLS(32, 1, 128);
  COLS(32, 2, 128);
  COLS(32, 4, 128);
  COLS(32, 8, 128);
  COLS(16, 4, 128);
  COLS(64, 4, 128);
  COLS(64, 8, 128);
  COLS(32, 4, 256);
  COLS(128, 8, 128);
  COLS(16, 8, 256);
  return 0;
}
