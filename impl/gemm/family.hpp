#pragma once
// What other families use of GEMM's registration: one GEMM instance of a
// listed variant under any run name (the Ceiling family's GEMM rates).
#include <cstdint>
#include <string>

#include "core/knobs.hpp"
#include "core/registrar.hpp"
#include "gemm/gemm.hpp"

namespace pb {

void register_gemm_instance(const RunName& name, const std::string& variant, bool f64, Knobs k,
                            const gemm::Problem& p, std::uint64_t seed, const RegisterOptions& ro);

}  // namespace pb
