#pragma once
// One registration function per family. Each throws UsageError on an axis
// value it cannot accept, before anything runs.
#include <cmath>
#include <string>

#include "core/knobs.hpp"
#include "core/options.hpp"
#include "core/registrar.hpp"
#include "gemm/gemm.hpp"

namespace pb {

// Why the profile leaves out an instance whose `measure` (e.g. "M*N*K") is
// `work`, above 2^cap_log2 for this variant; empty when it runs.
inline std::string excluded_by_profile(Profile p, const std::string& variant, const char* measure, double work,
                                       int cap_log2) {
  if (work <= std::ldexp(1.0, cap_log2)) return {};
  return std::string("size excluded by profile '") + to_string(p) + "': " + variant + " runs " + measure +
         " <= 2^" + std::to_string(cap_log2) + " (use --profile=full)";
}

void register_gemm(const Options& opt);
void register_ceiling(const Options& opt);
// One GEMM instance of a listed variant under any run name (the Ceiling family's GEMM rates).
void register_gemm_instance(const RunName& name, const std::string& variant, bool f64, Knobs k,
                            const gemm::Problem& p, std::uint64_t seed, const RegisterOptions& ro);
void register_kmeans(const Options& opt);
void register_sort(const Options& opt);
}  // namespace pb
