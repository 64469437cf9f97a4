// cuBLAS: the library ceiling. cuBLAS is column-major; a row-major M x N
// matrix is the column-major N x M matrix of its transpose, so each row-major
// product is computed as its transpose with the operands swapped:
//   AB    C^T = B^T A^T          gemm(N, N, n, m, k, B, ldb=N, A, lda=K)
//   AtB   C^T = B^T A            gemm(N, T, n, m, k, B, ldb=N, A, lda=M)
//   ABtC  D^T = B A^T, then + C  gemm(T, N, n, m, k, B, ldb=K, A, lda=K); geam D = D + C
// Default math mode: plain FP32 / FP64, no TF32 tensor cores.
//
// TF32 and BF16 (the same transposes, through cublasGemmEx, which picks the
// cuBLASLt kernel by its heuristics): TF32 is float operands with compute type
// CUBLAS_COMPUTE_32F_FAST_TF32; BF16 is bfloat16 A and B, float C and output,
// CUBLAS_COMPUTE_32F. ABtC copies C into the output and accumulates onto it
// (beta = 1) instead of a second pass.
#include "core/cuda/cublas.cuh"
#include "gemm/cuda/device_variant.cuh"
#include "gemm/cuda/tensor_operands.cuh"

namespace pb::gemm {
namespace {

cublasStatus_t geam(cublasHandle_t h, int m, int n, const float* alpha, const float* A, int lda,
                    const float* beta, const float* B, int ldb, float* C, int ldc) {
  return cublasSgeam(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, alpha, A, lda, beta, B, ldb, C, ldc);
}
cublasStatus_t geam(cublasHandle_t h, int m, int n, const double* alpha, const double* A, int lda,
                    const double* beta, const double* B, int ldb, double* C, int ldc) {
  return cublasDgeam(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, alpha, A, lda, beta, B, ldb, C, ldc);
}

template <class T>
class Cublas final : public DeviceVariant<T> {
 public:
  Support supports(const Problem& p) const override {
    if (p.m > 2147483647 || p.n > 2147483647 || p.k > 2147483647)
      return Support::no("dimension exceeds cuBLAS int");
    return Support::yes();
  }
  void prepare(const Problem& p, const Inputs<T>& in) override {
    DeviceVariant<T>::prepare(p, in);
    bind_device();
  }
  void launch(const Problem& p, const T* A, const T* B, const T* Cin, T* D) override {
    const int M = int(p.m), N = int(p.n), K = int(p.k);
    const T one = 1, zero = 0;
    switch (p.op) {
      case Op::AB:
        PB_CUBLAS(cublas_gemm(h_, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, N, A, K, &zero, D, N));
        break;
      case Op::AtB:
        PB_CUBLAS(cublas_gemm(h_, CUBLAS_OP_N, CUBLAS_OP_T, N, M, K, &one, B, N, A, M, &zero, D, N));
        break;
      case Op::ABtC:
        PB_CUBLAS(cublas_gemm(h_, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, B, K, A, K, &zero, D, N));
        PB_CUBLAS(geam(h_, N, M, &one, D, N, &one, Cin, N, D, N));  // in place: C = A
        break;
    }
    PB_CUDA_LAUNCHED();
  }
  void bind_device() override { PB_CUBLAS(cublasSetMathMode(h_.on(this->s()), CUBLAS_DEFAULT_MATH)); }

 private:
  CublasHandle h_;
};
class CublasTensor final : public TensorVariant {
 public:
  Support supports(const Problem& p) const override {
    if (p.m > 2147483647 || p.n > 2147483647 || p.k > 2147483647)
      return Support::no("dimension exceeds cuBLAS int");
    return TensorVariant::supports(p);
  }
  void prepare_device() override { h_.on(s()); }
  void run() override {
    const auto& p = p_;
    const int M = int(p.m), N = int(p.n), K = int(p.k);
    const float one = 1, zero = 0;
    const cudaDataType in = bf16() ? CUDA_R_16BF : CUDA_R_32F;
    const cublasComputeType_t compute = bf16() ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
    auto gemm = [&](cublasOperation_t tb, cublasOperation_t ta, int ldb, int lda, const float* beta) {
      PB_CUBLAS(cublasGemmEx(h_, tb, ta, N, M, K, &one, b(), in, ldb, a(), in, lda, beta, d_.get(),
                             CUDA_R_32F, N, compute, CUBLAS_GEMM_DEFAULT));
    };
    switch (p.op) {
      case Op::AB: gemm(CUBLAS_OP_N, CUBLAS_OP_N, N, K, &zero); break;
      case Op::AtB: gemm(CUBLAS_OP_N, CUBLAS_OP_T, N, M, &zero); break;
      case Op::ABtC:
        PB_CUDA(cudaMemcpyAsync(d_.get(), c_.get(), d_.bytes(), cudaMemcpyDeviceToDevice, s()));
        gemm(CUBLAS_OP_T, CUBLAS_OP_N, K, K, &one);
        break;
    }
    PB_CUDA_LAUNCHED();
  }

 private:
  CublasHandle h_;
};
}  // namespace

std::unique_ptr<Variant<float>> make_cublas_tensor() { return std::make_unique<CublasTensor>(); }

template <class T>
std::unique_ptr<Variant<T>> make_cublas() {
  return std::make_unique<Cublas<T>>();
}
template std::unique_ptr<Variant<float>> make_cublas();
template std::unique_ptr<Variant<double>> make_cublas();

}  // namespace pb::gemm
