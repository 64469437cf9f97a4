#pragma once
// One registration function per family. Each throws UsageError on an axis
// value it cannot accept, before anything runs.
#include <string>

#include "core/knobs.hpp"
#include "core/options.hpp"
#include "core/registrar.hpp"
#include "gemm/gemm.hpp"

namespace pb {
void register_gemm(const Options& opt);
void register_ceiling(const Options& opt);
// One GEMM instance of a listed variant under any run name (the Ceiling family's GEMM rates).
void register_gemm_instance(const RunName& name, const std::string& variant, bool f64, Knobs k,
                            const gemm::Problem& p, std::uint64_t seed, const RegisterOptions& ro);
void register_kmeans(const Options& opt);
void register_sort(const Options& opt);
}  // namespace pb
