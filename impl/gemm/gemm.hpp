#pragma once
// GEMM family (seeds 003 and 004): the three products of a neural network's
// training step, row-major, in float and double, and on tensor cores in the
// training precisions TF32 and BF16 (float in, float out; see Precision).
//
//   AB    C = A * B        A: M x K,  B: K x N,  C: M x N
//   AtB   C = A^T * B      A: K x M,  B: K x N,  C: M x N
//   ABtC  D = A * B^T + C  A: M x K,  B: N x K,  C, D: M x N
//
// Host-clean: no CUDA types here, so the driver and tests never need nvcc.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace pb::gemm {

enum class Op { AB, AtB, ABtC };
const char* to_string(Op op);
Op parse_op(const std::string& s);  // throws UsageError

// The precision the products are formed in, for float problems. Native: FP32
// (or FP64 for double). TF32 and BF16: the tensor-core input formats, 10 and
// 7 fraction bits, accumulated in float. Their problems' inputs are floats
// already representable in that format (make_inputs rounds them), so the
// variants all multiply the same values exactly and only the accumulation
// differs; a BF16 variant stores A and B as bfloat16, C and the output as
// float. The run name's type: f32 / f64, tf32, bf16.
enum class Precision { Native, TF32, BF16 };
const char* to_string(Precision p);  // "native", "tf32", "bf16"
// x rounded to nearest (ties to even) with `bits` fraction bits (TF32: 10, BF16: 7).
float round_to_fraction_bits(float x, int bits);

struct Problem {
  Op op = Op::AB;
  std::int64_t m = 1, n = 1, k = 1;
  Precision prec = Precision::Native;

  std::int64_t a_elems() const { return m * k; }
  std::int64_t b_elems() const { return k * n; }
  std::int64_t c_elems() const { return m * n; }
  bool has_c_input() const { return op == Op::ABtC; }
  // Floating-point operations of one call: 2MNK, plus MN for the +C.
  double flops() const { return 2.0 * m * n * k + (has_c_input() ? double(m) * n : 0.0); }
  // Bytes a call must move at least (the roofline's model): A and B read once
  // (`ab_bytes` an element: 2 for BF16, else the element type's size), C read
  // where it is an input, the output written once (`out_bytes` an element).
  double min_bytes(double ab_bytes, double out_bytes) const {
    return ab_bytes * double(a_elems() + b_elems()) +
           out_bytes * double(c_elems()) * (has_c_input() ? 2.0 : 1.0);
  }
  std::string str() const;  // "AB 64x64x64", "AB 64x64x64 bf16"
};

template <class T>
struct Inputs {
  std::vector<T> a, b, c;  // c is empty unless problem.has_c_input()
};

// Same inputs for every variant of a problem: seeded by (base seed, op, type, shape).
template <class T>
Inputs<T> make_inputs(const Problem& p, std::uint64_t base_seed);

// A variant computes the product of one problem. Contract (core/job.hpp):
// prepare() is untimed; run() is timed and computes the whole output; a CUDA
// variant enqueues on stream() and must not synchronise the host; result()
// is untimed and returns the M x N output row-major.
template <class T>
class Variant {
 public:
  virtual ~Variant() = default;
  virtual Support supports(const Problem&) const { return Support::yes(); }
  virtual void prepare(const Problem& p, const Inputs<T>& in) = 0;
  virtual void run() = 0;
  virtual void result(std::vector<T>& out) = 0;
  virtual void* stream() { return nullptr; }

  // As a backend of another family's computation (the MLP training step):
  // out = the product of problem p on operands the caller owns, in this
  // variant's memory (host memory for CPU variants). Call bind() once first:
  // it sets up what prepare() would that does not depend on the operands
  // (OpenBLAS's thread count). A variant with backend() false has neither.
  virtual bool backend() const { return false; }
  virtual void bind() {}
  virtual void compute(const Problem& p, const T* a, const T* b, const T* c, T* out);
};

template <class T>
void Variant<T>::compute(const Problem& p, const T*, const T*, const T*, T*) {
  throw std::logic_error("this GEMM variant cannot compute on the caller's operands (" + p.str() + ")");
}

}  // namespace pb::gemm
