#include "kmeans/verify.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace pb::kmeans {

Check compare(const Problem& p, const Result& ref, const Result& got) {
  char buf[256];
  if (got.iterations != ref.iterations) {
    std::snprintf(buf, sizeof buf, "ran %d iterations, reference %d", got.iterations, ref.iterations);
    return {false, buf, "assignment"};
  }
  if (got.assign.size() != ref.assign.size() || got.centroids.size() != ref.centroids.size())
    return {false, "result has the wrong size", "assignment"};
  std::int64_t diff = 0, first = -1;
  for (std::size_t i = 0; i < ref.assign.size(); ++i)
    if (got.assign[i] != ref.assign[i] && diff++ == 0) first = std::int64_t(i);
  if (diff) {
    std::snprintf(buf, sizeof buf,
                  "%lld of %lld points in another cluster; first: point %lld in %d, reference %d",
                  (long long)diff, (long long)p.n, (long long)first, got.assign[first], ref.assign[first]);
    return {false, buf, "assignment"};
  }
  // Centroids are means of the same points summed in another order: relative
  // error ~ N * eps at worst; 1e-9 of the coordinate scale is far above that
  // for N <= 2^24 and far below any real error.
  double scale = 1e-300, worst = 0;
  std::int64_t at = 0;
  for (double v : ref.centroids) scale = std::max(scale, std::fabs(v));
  for (std::size_t j = 0; j < ref.centroids.size(); ++j) {
    double e = std::fabs(got.centroids[j] - ref.centroids[j]);
    if (!(e <= worst)) worst = e, at = std::int64_t(j);
  }
  if (!(worst <= 1e-9 * scale)) {
    std::snprintf(buf, sizeof buf, "centroid %lld coordinate %lld: got %.17g, reference %.17g",
                  (long long)(at / p.d), (long long)(at % p.d), got.centroids[at], ref.centroids[at]);
    return {false, buf, "assignment"};
  }
  // Inertia: relative to the data's scale too, since the GEMM form of the
  // distance (|x|^2 - 2x.c + |c|^2) leaves ~eps * |x|^2 where the true
  // distance is 0 (K = N).
  const double inertia_scale = ref.inertia + double(p.n) * double(p.d) * scale * scale;
  if (!(std::fabs(got.inertia - ref.inertia) <= 1e-9 * inertia_scale)) {
    std::snprintf(buf, sizeof buf, "inertia %.17g, reference %.17g", got.inertia, ref.inertia);
    return {false, buf, "assignment"};
  }
  return {true, "", "assignment"};
}

}  // namespace pb::kmeans
