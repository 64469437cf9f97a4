#pragma once
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
#include <cstdint>
#include <vector>

#include "core/status.hpp"
#include "gemm/gemm.hpp"

namespace pb::gemm {

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

}  // namespace pb::gemm
