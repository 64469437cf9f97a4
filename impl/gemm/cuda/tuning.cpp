#include <cmath>
#include <stdexcept>

#include "gemm/gemm.hpp"

namespace pb::gemm {

// One table a GPU generation, each compiled in when ci/tune-gemm has written
// it (impl/gemm/cuda/tuned_sm<NN>.inc; a new generation needs its line here).
const std::vector<TunedTile>& tuned_table(int sm) {
  static const std::vector<TunedTile> none;
#if __has_include("gemm/cuda/tuned_sm80.inc")
  if (sm == 80) {
    static const std::vector<TunedTile> t = {
#include "gemm/cuda/tuned_sm80.inc"
    };
    return t;
  }
#endif
#if __has_include("gemm/cuda/tuned_sm89.inc")
  if (sm == 89) {
    static const std::vector<TunedTile> t = {
#include "gemm/cuda/tuned_sm89.inc"
    };
    return t;
  }
#endif
#if __has_include("gemm/cuda/tuned_sm90.inc")
  if (sm == 90) {
    static const std::vector<TunedTile> t = {
#include "gemm/cuda/tuned_sm90.inc"
    };
    return t;
  }
#endif
#if __has_include("gemm/cuda/tuned_sm100.inc")
  if (sm == 100) {
    static const std::vector<TunedTile> t = {
#include "gemm/cuda/tuned_sm100.inc"
    };
    return t;
  }
#endif
  return none;
}

std::string tuned_tile(const std::vector<TunedTile>& table, const std::string& variant, const Problem& p,
                       const std::string& type) {
  const double want = std::log2(double(p.m)) + std::log2(double(p.n)) + std::log2(double(p.k));
  const TunedTile* best = nullptr;
  double best_gap = 0;
  for (const auto& t : table) {
    if (variant != t.variant || type != t.type || std::string(to_string(p.op)) != t.op) continue;
    const double gap =
        std::fabs(std::log2(double(t.m)) + std::log2(double(t.n)) + std::log2(double(t.k)) - want);
    if (!best || gap < best_gap) best = &t, best_gap = gap;
  }
  return best ? best->tile : "";
}

int choose_tile(const char* variant, const std::vector<std::string>& names, int forced, const Problem& p,
                const std::string& type, int sm) {
  if (forced >= 0) {
    if (forced >= int(names.size()))
      throw std::logic_error(std::string(variant) + " has no tile configuration " + std::to_string(forced));
    return forced;
  }
  const auto tile = tuned_tile(tuned_table(sm), variant, p, type);
  if (tile.empty()) return 0;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == tile) return int(i);
  throw std::logic_error("the sm_" + std::to_string(sm) + " tuning table names tile " + tile + " that " +
                         variant + " does not have (rerun ci/tune-gemm)");
}

}  // namespace pb::gemm
