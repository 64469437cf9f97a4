#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "fixtures/fixtures.hpp"
#include "kmeans/kmeans.hpp"

namespace pb::kmeans {

double finish_update(const double* sums, const std::int64_t* counts, double* centroids, std::int64_t k,
                     std::int64_t d) {
  double max_move2 = 0;
  for (std::int64_t c = 0; c < k; ++c) {
    if (counts[c] == 0) continue;  // an empty cluster keeps its centroid
    double move2 = 0;
    for (std::int64_t t = 0; t < d; ++t) {
      double v = sums[c * d + t] / double(counts[c]);
      double diff = v - centroids[c * d + t];
      move2 += diff * diff;
      centroids[c * d + t] = v;
    }
    max_move2 = std::max(max_move2, move2);
  }
  return std::sqrt(max_move2);
}

void lloyd(const Problem& p, const Inputs& in, int threads, Result& out) {
  const auto N = p.n, D = p.d, K = p.k;
  const int nt = threads > 0 ? threads : omp_get_max_threads();
  out.assign.assign(N, -1);
  out.centroids = in.init;
  std::vector<double> sums(K * D), best_d(N);
  std::vector<std::int64_t> counts(K);
  const double* X = in.points.data();
  for (out.iterations = 0;;) {
    std::int64_t changed = 0;
    const double* C = out.centroids.data();
    int* A = out.assign.data();
#pragma omp parallel for num_threads(nt) schedule(static) reduction(+ : changed)
    for (std::int64_t i = 0; i < N; ++i) {
      const int best = nearest(X + i * D, C, K, D, best_d[i]);
      if (A[i] != best) ++changed, A[i] = best;
    }
    std::fill(sums.begin(), sums.end(), 0.0);
    std::fill(counts.begin(), counts.end(), 0);
    for (std::int64_t i = 0; i < N; ++i) {
      const int c = A[i];
      ++counts[c];
      for (std::int64_t t = 0; t < D; ++t) sums[c * D + t] += X[i * D + t];
    }
    out.last_start = out.centroids;
    double move = finish_update(sums.data(), counts.data(), out.centroids.data(), K, D);
    ++out.iterations;
    if (p.crit.stop(out.iterations, changed, move, N)) break;
  }
  out.inertia = 0;
  for (double v : best_d) out.inertia += v;
}

namespace {
// Seq: the reference itself, one thread, timed as the baseline of speedups.
class Seq final : public Variant {
 public:
  void prepare(const Problem& p, const Inputs& in) override { p_ = p, in_ = &in; }
  void reset() override { out_ = Result{}; }
  void run() override { lloyd(p_, *in_, 1, out_); }
  void result(Result& out) override { out = out_; }

 private:
  Problem p_;
  const Inputs* in_ = nullptr;
  Result out_;
};
}  // namespace

std::unique_ptr<Variant> make_seq() { return std::make_unique<Seq>(); }

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

Check check_last_step(const Problem& p, const Inputs& in, const Result& got, Ties* out_ties) {
  char buf[320];
  const auto N = p.n, D = p.d, K = p.k;
  if (p.crit.fixed && got.iterations != p.crit.loops) {
    std::snprintf(buf, sizeof buf, "ran %d iterations, the problem %d", got.iterations, p.crit.loops);
    return {false, buf, "assignment"};
  }
  if (std::int64_t(got.assign.size()) != N || std::int64_t(got.centroids.size()) != K * D ||
      std::int64_t(got.last_start.size()) != K * D)
    return {false, "result has the wrong size (or no last_start)", "assignment"};
  const double* C = got.last_start.data();
  std::vector<double> cc(K);
  for (std::int64_t c = 0; c < K; ++c) {
    double s = 0;
    for (std::int64_t t = 0; t < D; ++t) s += C[c * D + t] * C[c * D + t];
    cc[c] = s;
  }
  // Each point against every start centroid, exactly (double on float values).
  std::int64_t bad = -1, ties = 0;
  // worst: the largest gap / bound of a tie; slack: the TF32 bound of the
  // inertia, each point's distance error bound summed.
  double worst = 0, inertia = 0, slack = 0;
  int bad_best = 0;
  double bad_gap = 0, bad_bound = 0;
  const int* A = got.assign.data();
#pragma omp parallel
  {
    std::int64_t my_bad = -1, my_ties = 0;
    double my_worst = 0, my_inertia = 0, my_slack = 0, my_gap = 0, my_bound = 0;
    int my_best = 0;
#pragma omp for schedule(static) nowait
    for (std::int64_t i = 0; i < N; ++i) {
      const double* x = in.points.data() + i * D;
      const int a = A[i];
      if (a < 0 || a >= K) {
        if (my_bad < 0) my_bad = i, my_best = -1;
        continue;
      }
      double best_d, xx = 0;
      const int best = nearest(x, C, K, D, best_d);
      const double da = dist2(x, C + std::int64_t(a) * D, D);
      for (std::int64_t t = 0; t < D; ++t) xx += x[t] * x[t];
      my_inertia += da;
      my_slack += tf32_tie_bound(xx, cc[a], cc[a]) / 4;  // one distance: 2^-10 (xx + c)
      if (a == best) continue;
      const double gap = da - best_d, bound = tf32_tie_bound(xx, cc[a], cc[best]);
      if (gap <= bound) {
        ++my_ties;
        my_worst = std::max(my_worst, gap / bound);
      } else if (my_bad < 0) {
        my_bad = i, my_best = best, my_gap = gap, my_bound = bound;
      }
    }
#pragma omp critical
    {
      ties += my_ties;
      worst = std::max(worst, my_worst);
      inertia += my_inertia;
      slack += my_slack;
      if (my_bad >= 0 && (bad < 0 || my_bad < bad))
        bad = my_bad, bad_best = my_best, bad_gap = my_gap, bad_bound = my_bound;
    }
  }
  if (bad >= 0) {
    if (bad_best < 0)
      std::snprintf(buf, sizeof buf, "point %lld in cluster %d of %lld", (long long)bad, A[bad],
                    (long long)K);
    else
      std::snprintf(
          buf, sizeof buf,
          "point %lld in cluster %d, nearest %d: its distance %.6g farther, beyond the TF32 bound %.6g",
          (long long)bad, A[bad], bad_best, bad_gap, bad_bound);
    return {false, buf, "assignment"};
  }
  // The update from those assignments, in double.
  std::vector<double> sums(K * D, 0.0);
  std::vector<std::int64_t> counts(K, 0);
  for (std::int64_t i = 0; i < N; ++i) {
    ++counts[A[i]];
    for (std::int64_t t = 0; t < D; ++t) sums[A[i] * D + t] += in.points[i * D + t];
  }
  std::vector<double> want(got.last_start);
  finish_update(sums.data(), counts.data(), want.data(), K, D);
  double scale = 1e-300;
  for (double v : want) scale = std::max(scale, std::fabs(v));
  for (std::int64_t j = 0; j < K * D; ++j)
    if (!(std::fabs(got.centroids[j] - want[j]) <= 1e-5 * scale)) {
      std::snprintf(buf, sizeof buf, "centroid %lld coordinate %lld: got %.9g, the mean of its points %.9g",
                    (long long)(j / D), (long long)(j % D), got.centroids[j], want[j]);
      return {false, buf, "assignment"};
    }
  if (!(std::fabs(got.inertia - inertia) <= 1e-5 * inertia + slack)) {
    std::snprintf(buf, sizeof buf, "inertia %.9g, the exact distances' sum %.9g (TF32 bound %.3g)",
                  got.inertia, inertia, slack);
    return {false, buf, "assignment"};
  }
  if (out_ties) *out_ties = Ties{ties, worst};
  return {true, "", "last-step"};
}

// The k-means problem: names, checks and the generated points (blobs or
// uniform) with their initial centroids.

const char* to_string(Dist d) { return d == Dist::Uniform ? "uniform" : "blobs"; }
const char* to_string(Type t) { return t == Type::F64 ? "f64" : "f32"; }

std::string Problem::str() const {
  return std::to_string(n) + "x" + std::to_string(d) + " K=" + std::to_string(k) + " " + to_string(dist) +
         (type == Type::F32 ? " f32" : "");
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
  if (p.type == Type::F32 && !c.fixed)
    fail(
        "type f32 runs a fixed number of iterations (--kmeans-loops N): its trajectory may leave the exact "
        "one");
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
  // Single precision: the same points, rounded to float.
  if (p.type == Type::F32)
    for (double& v : in.points) v = double(float(v));
  // Initial centroids: the points at evenly spaced indices (distinct points).
  in.init.resize(p.k * p.d);
  for (std::int64_t c = 0; c < p.k; ++c) {
    const std::int64_t i = c * p.n / p.k;
    std::copy_n(in.points.begin() + i * p.d, p.d, in.init.begin() + c * p.d);
  }
  return in;
}

}  // namespace pb::kmeans
