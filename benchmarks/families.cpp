#include "benchmarks/families.hpp"

namespace pb {

const std::vector<Family>& families() {
  static const std::vector<Family> list = {
      {"Ceiling", nullptr, register_ceiling},
      {"GEMM", gemm_flags, register_gemm},
      {"KMeans", kmeans_flags, register_kmeans},
      {"Sort", sort_flags, register_sort},
  };
  return list;
}

std::vector<FlagSection> family_flags() {
  std::vector<FlagSection> out;
  for (const auto& f : families())
    if (f.flags) out.push_back(f.flags());
  return out;
}

}  // namespace pb
