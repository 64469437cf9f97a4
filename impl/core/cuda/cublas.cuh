#pragma once
// cuBLAS calls: every status goes through PB_CUBLAS (an allocation failure
// throws pb::OutOfMemory, anything else pb::CudaError naming the call), and
// one `gemm` name for SGEMM and DGEMM, so a templated caller writes one line.
// Include only from code that links CUDA::cublas.
#include <cublas_v2.h>

#include <string>

#include "core/cuda/check.cuh"

namespace pb {

inline void cublas_check(cublasStatus_t st, const char* what) {
  if (st == CUBLAS_STATUS_SUCCESS) return;
  const std::string msg = std::string(what) + ": " + cublasGetStatusString(st);
  if (st == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfMemory(msg);
  throw CudaError(msg);
}

inline cublasStatus_t cublas_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                  int k, const float* alpha, const float* A, int lda, const float* B, int ldb,
                                  const float* beta, float* C, int ldc) {
  return cublasSgemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
inline cublasStatus_t cublas_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                  int k, const double* alpha, const double* A, int lda, const double* B,
                                  int ldb, const double* beta, double* C, int ldc) {
  return cublasDgemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

}  // namespace pb

#define PB_CUBLAS(call) ::pb::cublas_check((call), #call)
