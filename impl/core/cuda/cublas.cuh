#pragma once
// cuBLAS calls: every status goes through PB_CUBLAS (an allocation failure
// throws pb::OutOfMemory, anything else pb::CudaError naming the call), and
// one `gemm` name for SGEMM and DGEMM, so a templated caller writes one line,
// and CublasHandle, the handle a variant owns.
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

// A cuBLAS handle its owner keeps: created by on() the first time, bound to
// a stream by every on(), destroyed with the owner. Reads as the handle.
class CublasHandle {
 public:
  CublasHandle() = default;
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  ~CublasHandle() {
    if (h_) cublasDestroy(h_);
  }
  cublasHandle_t on(cudaStream_t s);
  operator cublasHandle_t() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
};

}  // namespace pb

#define PB_CUBLAS(call) ::pb::cublas_check((call), #call)

inline cublasHandle_t pb::CublasHandle::on(cudaStream_t s) {
  if (!h_) PB_CUBLAS(cublasCreate(&h_));
  PB_CUBLAS(cublasSetStream(h_, s));
  return h_;
}
