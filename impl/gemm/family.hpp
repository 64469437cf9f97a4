#pragma once
// What other families use of GEMM's registration: one GEMM instance of a
// vendor library's variant under any run name (the Ceiling family's GEMM
// rates), named by a type, so a misspelt variant cannot reach start-up.
#include <cstdint>
#include <string>

#include "core/knobs.hpp"
#include "core/registrar.hpp"
#include "gemm/gemm.hpp"

namespace pb {

namespace gemm {
enum class Vendor { OpenBLAS, cuBLAS };
// The registry entry a vendor's GEMM is (a test checks that it exists).
const char* variant_of(Vendor v);
}  // namespace gemm

void register_gemm_instance(const RunName& name, gemm::Vendor vendor, bool f64, Knobs k,
                            const gemm::Problem& p, std::uint64_t seed, const RegisterOptions& ro);

}  // namespace pb
