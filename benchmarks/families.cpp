#include "benchmarks/families.hpp"

namespace pb {

// Each defined in impl/<family>/family.cpp.
Family ceiling_family();
Family gemm_family();
Family kmeans_family();
Family sort_family();
Family sor_family();
Family mlp_family();
Family scan_family();

const std::vector<Family>& families() {
  static const std::vector<Family> list = {ceiling_family(), gemm_family(), kmeans_family(), sort_family(),
                                           sor_family(),     mlp_family(),  scan_family()};
  return list;
}

std::vector<FlagSection> family_flags() {
  std::vector<FlagSection> out;
  for (const auto& f : families())
    if (f.flags) out.push_back(f.flags());
  return out;
}

}  // namespace pb
