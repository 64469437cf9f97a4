// The k-means problem: names, checks and the generated points (blobs or
// uniform) with their initial centroids.
#include <algorithm>
#include <cmath>
#include <limits>

#include "fixtures/fixtures.hpp"
#include "kmeans/kmeans.hpp"

namespace pb::kmeans {

const char* to_string(Dist d) { return d == Dist::Uniform ? "uniform" : "blobs"; }

std::string Problem::str() const {
  return std::to_string(n) + "x" + std::to_string(d) + " K=" + std::to_string(k) + " " + to_string(dist);
}

void validate(const Problem& p) {
  auto fail = [&](const std::string& why) { throw UsageError("k-means " + p.str() + ": " + why); };
  if (p.n <= 0) fail("N must be positive");
  if (p.d <= 0) fail("D must be positive");
  if (p.k <= 0) fail("K must be positive");
  if (p.k > p.n) fail("K must not exceed N (each initial centroid is a distinct point)");
  if (p.k > std::numeric_limits<int>::max()) fail("K too large");
  const auto& c = p.crit;
  if (c.fixed && c.loops < 1) fail("loops must be >= 1");
  if (!c.fixed) {
    if (c.max_iter < 1) fail("max iterations must be >= 1");
    if (!(c.min_changes >= 0 && c.min_changes <= 1)) fail("min changes fraction must be in [0, 1]");
    if (!(c.precision >= 0) || !std::isfinite(c.precision)) fail("precision must be finite and >= 0");
  }
}

Inputs make_inputs(const Problem& p, std::uint64_t base_seed) {
  Inputs in;
  const std::string name = std::string("kmeans.") + to_string(p.dist);
  const auto seed = fixtures::seed_for(base_seed, name, {p.n, p.d, p.k});
  in.points.resize(p.n * p.d);
  if (p.dist == Dist::Uniform) {
    fixtures::fill_uniform(in.points.data(), in.points.size(), seed);
  } else {
    // K blob centres uniform in (-10, 10)^D; each point picks a centre by hash
    // and lies within 0.5 of it per coordinate: clusters far apart.
    std::vector<double> centres(p.k * p.d);
    fixtures::fill_uniform(centres.data(), centres.size(), fixtures::hash(seed, 1));
    const auto pick = fixtures::hash(seed, 2), jitter = fixtures::hash(seed, 3);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < p.n; ++i) {
      const auto b = std::int64_t(fixtures::hash(pick, i) % std::uint64_t(p.k));
      for (std::int64_t t = 0; t < p.d; ++t)
        in.points[i * p.d + t] =
            10.0 * centres[b * p.d + t] + 0.5 * fixtures::unit_symmetric(fixtures::hash(jitter, i * p.d + t));
    }
  }
  // Initial centroids: the points at evenly spaced indices (distinct points).
  in.init.resize(p.k * p.d);
  for (std::int64_t c = 0; c < p.k; ++c) {
    const std::int64_t i = c * p.n / p.k;
    std::copy_n(in.points.begin() + i * p.d, p.d, in.init.begin() + c * p.d);
  }
  return in;
}

}  // namespace pb::kmeans
