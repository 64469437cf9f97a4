// cuBLAS: the library ceiling. cuBLAS is column-major; a row-major M x N
// matrix is the column-major N x M matrix of its transpose, so each row-major
// product is computed as its transpose with the operands swapped:
//   AB    C^T = B^T A^T          gemm(N, N, n, m, k, B, ldb=N, A, lda=K)
//   AtB   C^T = B^T A            gemm(N, T, n, m, k, B, ldb=N, A, lda=M)
//   ABtC  D^T = B A^T, then + C  gemm(T, N, n, m, k, B, ldb=K, A, lda=K); geam D = D + C
// Default math mode: plain FP32 / FP64, no TF32 tensor cores.
#include "core/cuda/cublas.cuh"
#include "gemm/cuda/device_variant.cuh"

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
  ~Cublas() override {
    if (h_) cublasDestroy(h_);
  }
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
  void bind_device() override {
    if (!h_) PB_CUBLAS(cublasCreate(&h_));
    PB_CUBLAS(cublasSetStream(h_, this->s()));
    PB_CUBLAS(cublasSetMathMode(h_, CUBLAS_DEFAULT_MATH));
  }

 private:
  cublasHandle_t h_ = nullptr;
};
}  // namespace

template <class T>
std::unique_ptr<Variant<T>> make_cublas() {
  return std::make_unique<Cublas<T>>();
}
template std::unique_ptr<Variant<float>> make_cublas();
template std::unique_ptr<Variant<double>> make_cublas();

}  // namespace pb::gemm
