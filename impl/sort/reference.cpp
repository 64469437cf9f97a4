#include "sort/reference.hpp"

#include <omp.h>

#include <algorithm>
#include <parallel/algorithm>

namespace pb::sort {

std::vector<std::uint32_t> reference(const Problem& p, const Inputs& in) {
  const std::int64_t n = p.n, L = p.length;
  std::vector<std::uint64_t> w(static_cast<std::size_t>(n));
  const bool desc = p.order == Order::Desc;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint32_t o = ord(p.key, in.keys[std::size_t(i)]);
    if (desc) o = ~o;
    // Index within the array: ties broken by input position = stable.
    w[std::size_t(i)] = (std::uint64_t(o) << 32) | std::uint64_t(i % L);
  }
  if (p.batch() == 1) {
    __gnu_parallel::sort(w.begin(), w.end());
  } else {
#pragma omp parallel for schedule(dynamic, 1)
    for (std::int64_t a = 0; a < p.batch(); ++a) std::sort(w.begin() + a * L, w.begin() + (a + 1) * L);
  }
  std::vector<std::uint32_t> ref(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i)
    ref[std::size_t(i)] = std::uint32_t((i / L) * L + std::int64_t(w[std::size_t(i)] & 0xffffffffu));
  return ref;
}

}  // namespace pb::sort
