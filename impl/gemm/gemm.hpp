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
  // (OpenBLAS's thread count). A variant whose computes_for_caller() is
  // false has neither, and no other family can use it.
  virtual bool computes_for_caller() const { return false; }
  virtual void bind() {}
  virtual void compute(const Problem& p, const T* a, const T* b, const T* c, T* out);
};

template <class T>
void Variant<T>::compute(const Problem& p, const T*, const T*, const T*, T*) {
  throw std::logic_error("this GEMM variant cannot compute on the caller's operands (" + p.str() + ")");
}

// The GEMM oracle: exact-as-double values of any output element, and the
// magnitude sum the error bound scales with. Obviously correct first, fast
// second: each function is a plain loop over k in double precision.

// Element (i, j) of the operation, accumulated in double, and
// mag = sum_k |a(i,k) b(k,j)| (+ |c(i,j)|).
template <class T>
void reference_element(const Problem& p, const Inputs<T>& in, std::int64_t i, std::int64_t j, double& value,
                       double& mag);

// Row i in full: value[j], mag[j] for j < N (same definition, loop order k-then-j).
template <class T>
void reference_row(const Problem& p, const Inputs<T>& in, std::int64_t i, std::vector<double>& value,
                   std::vector<double>& mag);

// Column j in full: value[i], mag[i] for i < M, each the same sum in the same
// order of k as reference_element, so equal to it bit for bit. B's column is
// gathered once and every product then reads its operands in memory order;
// element by element, each of the M sums would walk B (and AtB's A) across
// rows, a cache line a term.
template <class T>
void reference_column(const Problem& p, const Inputs<T>& in, std::int64_t j, double* value, double* mag);

// Tolerance policy and the check of a variant's output.
//
// Bound: a dot product of length n evaluated in precision T, in any order and
// with or without FMA, is within gamma_n * sum|a_k b_k| of the exact value,
// gamma_n = n u / (1 - n u), u = eps(T) / 2 (Higham, Accuracy and Stability,
// Thm 3.5 and its any-order corollary). The +C of ABtC is one more rounding,
// so n = K + 1. The oracle is itself double precision, so its own gamma_{K+1}
// is added. Every element must satisfy |out - ref| <= tol * mag; NaN fails.
//
// Coverage: every element is checked when M*N*K <= kFullCheckWork (and the
// output is at most kFullCheckElems). Above that, every element of one row in
// each band of kSampleBand rows and one column in each band of kSampleBand
// columns (staggered within the band; first and last included, up to
// kMaxSampleLines each), plus kSamplePoints scattered elements, is checked:
// with M, N <= 4096 every 32 x 32 output tile has a checked row and column.
// Freivalds' test (out * x against A * (B * x) (+ C x), x in {-1,+1}^N) is a
// last net under a worst-case bound summed over a whole row: it catches NaN,
// unwritten (poisoned) outputs and values far off scale anywhere, not a
// slightly wrong tile; the sampled lines are there for that.

inline constexpr double kFullCheckWork = 4294967296.0;  // 2^32 multiply-adds: ~1 s on 16 cores
inline constexpr double kFullCheckElems = 67108864.0;   // 2^26 outputs: 1 GiB of reference values
inline constexpr int kSampleBand = 32;                  // one sampled row (column) per 32: every 32-tile
inline constexpr int kMaxSampleLines = 128;             // ... up to 4096; wider bands beyond
inline constexpr int kSamplePoints = 8192;

template <class T>
double tolerance(std::int64_t terms);  // gamma_terms(T) + gamma_terms(double)

// TF32 and BF16 (Precision): the inputs are exact in the reduced format and a
// product of two of them is exact in float (11 + 11 and 8 + 8 significant bits
// fit float's 24), so only the float accumulation errs. Tensor cores need not
// round to nearest as they accumulate (they may truncate the aligned addends),
// so each addition is allowed a whole float ulp, u = 2^-23 instead of 2^-24:
// gamma_terms(2^-23) + gamma_terms(double).
double tensor_tolerance(std::int64_t terms);
// The bound a problem is checked with: tolerance<T> or tensor_tolerance.
template <class T>
double tolerance_for(const Problem& p, std::int64_t terms);

template <class T>
class Oracle {
 public:
  Oracle(const Problem& p, const Inputs<T>& in, std::uint64_t seed);
  Check check(const std::vector<T>& out) const;
  bool full() const { return full_; }

 private:
  Problem p_;
  bool full_;
  std::vector<std::int64_t> rows_, cols_;   // sampled mode: lines checked in full
  std::vector<std::int64_t> points_;        // sampled mode: scattered flat indices
  std::vector<double> value_, mag_;         // full: M*N; sampled: rows, columns, points
  std::vector<double> x_, ax_, abs_bound_;  // Freivalds: x, (A(Bx)+Cx), |A|(|B|1)+|C|1
};

// Tile configurations chosen by measurement. A tunable kernel (CUDA.Pipelined,
// CUDA.DMMA) has a small list of configurations; `ci/tune-gemm` runs every
// one of them on every op over a sweep of shapes on the current GPU (bench
// --gemm-tile=all) and writes the winners, per (variant, op, type, swept
// shape), into the table the kernels read: impl/gemm/cuda/tuned_sm<NN>.inc (sm_80,
// 89, 90 and 100 are compiled in when present; the repository has sm_90's).
// A problem takes the choice of the swept shape nearest to it in log(M N K).
// Host-clean.

struct TunedTile {
  const char* variant;  // "CUDA.Pipelined"
  const char* op;       // "AB", "AtB", "ABtC"
  const char* type;     // "f32", "f64"
  long long m, n, k;    // the swept shape
  const char* tile;     // the configuration that was fastest there
};

// The table for compute capability sm (90: sm_90); empty when none was written.
const std::vector<TunedTile>& tuned_table(int sm);

// The tile the table chooses for p, or "" when it has none.
std::string tuned_tile(const std::vector<TunedTile>& table, const std::string& variant, const Problem& p,
                       const std::string& type);

// The index into `names` of the configuration a kernel runs p with: `forced`
// when >= 0 (a sweep's --gemm-tile), else the table's choice for GPU sm,
// else 0 (the default). Throws std::logic_error when forced is out of range
// or the table names a configuration the kernel does not have (stale table).
int choose_tile(const char* variant, const std::vector<std::string>& names, int forced, const Problem& p,
                const std::string& type, int sm);

// A tunable kernel's choice, cached: the index of the configuration to run
// for a problem (choose_tile), looked up once per shape, so a timed launch
// only compares the shape with the last one's.
class TileChoice {
 public:
  TileChoice(const char* variant, const std::vector<std::string>& (*names)(), const char* type, int forced)
      : variant_(variant), names_(names), type_(type), forced_(forced) {}
  void set_sm(int sm) { sm_ = sm, index_ = -1; }  // the GPU it runs on (bind time)
  int operator()(const Problem& p) {
    if (index_ < 0 || p.op != last_.op || p.m != last_.m || p.n != last_.n || p.k != last_.k)
      index_ = choose_tile(variant_, names_(), forced_, p, type_, sm_), last_ = p;
    return index_;
  }

 private:
  const char* variant_;
  const std::vector<std::string>& (*names_)();
  std::string type_;
  int forced_, sm_ = 0, index_ = -1;
  Problem last_;
};

}  // namespace pb::gemm
