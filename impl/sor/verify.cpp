#include "sor/verify.hpp"

#include <cmath>
#include <cstdio>

namespace pb::sor {

Check verify(const Problem& p, const std::vector<double>& u0, const std::vector<double>& ref,
             const std::vector<double>& got) {
  const std::int64_t m = p.m, n = p.n;
  char buf[256];
  if (std::int64_t(got.size()) != m * n) return {false, "the field has the wrong size", "field"};
  double scale = 1e-300;
  for (double v : ref) scale = std::max(scale, std::fabs(v));
  std::int64_t bad = 0, at = -1;
  double worst = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const std::size_t k = std::size_t(i * n + j);
      const bool edge = i == 0 || j == 0 || i == m - 1 || j == n - 1;
      if (edge) {
        if (!(got[k] == u0[k])) {
          std::snprintf(buf, sizeof buf, "boundary point (%lld, %lld) changed: %.17g, given %.17g",
                        (long long)i, (long long)j, got[k], u0[k]);
          return {false, buf, "field"};
        }
        continue;
      }
      const double e = std::fabs(got[k] - ref[k]);
      if (!(e <= 1e-10 * scale)) {
        if (bad++ == 0 || !(e <= worst)) worst = e, at = std::int64_t(k);
      }
    }
  }
  if (bad) {
    std::snprintf(buf, sizeof buf,
                  "%lld of %lld interior points differ from the reference; worst (%lld, %lld): %.17g, "
                  "reference %.17g",
                  (long long)bad, (long long)p.interior(), (long long)(at / n), (long long)(at % n),
                  got[std::size_t(at)], ref[std::size_t(at)]);
    return {false, buf, "field"};
  }
  return {true, "", "field"};
}

}  // namespace pb::sor
