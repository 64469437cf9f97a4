#pragma once
// The GEMM oracle: exact-as-double values of any output element, and the
// magnitude sum the error bound scales with. Obviously correct first, fast
// second: each function is a plain loop over k in double precision.
#include <vector>

#include "gemm/gemm.hpp"

namespace pb::gemm {

// Element (i, j) of the operation, accumulated in double, and
// mag = sum_k |a(i,k) b(k,j)| (+ |c(i,j)|).
template <class T>
void reference_element(const Problem& p, const Inputs<T>& in, std::int64_t i, std::int64_t j, double& value,
                       double& mag);

// Row i in full: value[j], mag[j] for j < N (same definition, loop order k-then-j).
template <class T>
void reference_row(const Problem& p, const Inputs<T>& in, std::int64_t i, std::vector<double>& value,
                   std::vector<double>& mag);

}  // namespace pb::gemm
