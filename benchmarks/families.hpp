#pragma once
// The families: each declares its flags (a FlagSection; core/options knows
// none) and registers its instances. Registration throws UsageError on an
// axis value it cannot accept, before anything runs.
#include <string>
#include <vector>

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
FlagSection gemm_flags();
FlagSection kmeans_flags();
FlagSection sort_flags();

struct Family {
  const char* name;
  FlagSection (*flags)();  // nullptr: no flags of its own
  void (*register_instances)(const Options&);
};
// Every family, in registration order.
const std::vector<Family>& families();
// Their flag sections, for parse_options() and usage().
std::vector<FlagSection> family_flags();
}  // namespace pb
