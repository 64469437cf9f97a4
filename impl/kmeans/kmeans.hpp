#pragma once
// K-means family (seeds 000 and 001): Lloyd's algorithm on N points of D
// double coordinates, K clusters.
//
// The algorithm every variant implements, step for step:
//   assign[i] = -1 for all i; centroids = the problem's initial centroids
//   repeat:
//     assignment: each point goes to the centroid at the smallest squared
//       Euclidean distance; exact ties go to the lowest cluster index;
//       `changed` counts points whose cluster differs from the last one
//     update: each centroid becomes the mean of its points; a cluster with no
//       points keeps its centroid; `move` = largest Euclidean distance a
//       centroid moved
//     iterations += 1
//   until (fixed mode) iterations == loops, or (seed 001's criteria) stop as
//   soon as iterations == max_iter or changed <= min_changes * N or
//   move <= precision.
// inertia = sum over points of the squared distance found in the last
// assignment step (against the centroids that step used).
//
// Single precision (type f32): the points and initial centroids are the
// double problem's values rounded to float, and a variant may compute the
// distances in TF32 on the tensor cores, so its assignments may differ from
// the exact ones on near ties and its trajectory drift from the reference's.
// Such a run is checked on its last iteration, from the centroids that
// iteration started from (check_last_step); it runs a fixed number of
// iterations.
//
// Host-clean: no CUDA types here.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/host_device.hpp"
#include "core/job.hpp"
#include "core/status.hpp"

namespace pb::kmeans {

enum class Dist { Uniform, Blobs };
const char* to_string(Dist d);
enum class Type { F64, F32 };
const char* to_string(Type t);
// How a variant with fused centroid sums updates them each iteration: Delta
// adds and removes only the points that changed cluster; Full sums every
// point again.
enum class SumUpdate { Delta, Full };

struct Criteria {
  bool fixed = false;         // seed 000: exactly `loops` iterations
  int loops = 10;             // fixed mode
  int max_iter = 500;         // seed 001 defaults
  double min_changes = 0.01;  // fraction of N
  double precision = 0.01;    // largest centroid move
  PB_HOST_DEVICE bool stop(int iterations, std::int64_t changed, double move, std::int64_t n) const {
    if (fixed) return iterations >= loops;
    return iterations >= max_iter || double(changed) <= min_changes * double(n) || move <= precision;
  }
};

struct Problem {
  std::int64_t n = 0, d = 0, k = 0;
  Dist dist = Dist::Uniform;
  Criteria crit;
  Type type = Type::F64;
  std::string str() const;
};

// Throws UsageError with a clear message for an impossible problem.
void validate(const Problem& p);

struct Inputs {
  std::vector<double> points;  // N x D, point-major
  std::vector<double> init;    // K x D: initial centroids, the same for every variant
};
Inputs make_inputs(const Problem& p, std::uint64_t base_seed);

struct Result {
  std::vector<int> assign;        // N
  std::vector<double> centroids;  // K x D, final
  int iterations = 0;
  double inertia = 0.0;
  // K x D: the centroids the last assignment started from. Single-precision
  // variants report them (check_last_step); others may leave them empty.
  std::vector<double> last_start;
};

// Seed 000's bottleneck split of one run, in seconds.
struct Breakdown {
  double h2d = 0, kernel = 0, d2h = 0, host = 0;
};

// Contract (core/job.hpp): prepare() is untimed (allocation, upload of the
// points); reset() is untimed and restores the initial centroids and the
// "no cluster yet" assignment; run() is timed and performs the whole
// algorithm; result() and breakdown() are untimed.
class Variant {
 public:
  virtual ~Variant() = default;
  virtual Support supports(const Problem&) const { return Support::yes(); }
  virtual void prepare(const Problem& p, const Inputs& in) = 0;
  virtual void reset() = 0;
  virtual void run() = 0;
  virtual void result(Result& out) = 0;
  virtual Breakdown breakdown() const { return {}; }
  virtual void* stream() { return nullptr; }
  // Untimed, after result(): the last run's communication between GPUs alone.
  virtual CommProfile communication() { return {}; }
};

// Shared pieces of the sequential algorithm (also used by the CPU variants).
// Squared distance of a point to a centroid: four interleaved partial sums
// (combined in a fixed order), so the loop is not one serial chain of adds.
// Every CPU variant uses this one function, so their distances agree bitwise.
inline double dist2(const double* x, const double* c, std::int64_t d) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::int64_t t = 0;
  for (; t + 4 <= d; t += 4) {
    const double a = x[t] - c[t], b = x[t + 1] - c[t + 1], e = x[t + 2] - c[t + 2], f = x[t + 3] - c[t + 3];
    s0 += a * a, s1 += b * b, s2 += e * e, s3 += f * f;
  }
  for (; t < d; ++t) {
    const double a = x[t] - c[t];
    s0 += a * a;
  }
  return (s0 + s1) + (s2 + s3);
}
// The nearest centroid of point x (ties to the lowest index) and its squared
// distance: the assignment step every CPU variant shares.
inline int nearest(const double* x, const double* C, std::int64_t k, std::int64_t d, double& best_d) {
  int best = 0;
  double bd = dist2(x, C, d);
  for (std::int64_t c = 1; c < k; ++c) {
    const double dc = dist2(x, C + c * d, d);
    if (dc < bd) bd = dc, best = int(c);
  }
  best_d = bd;
  return best;
}
// New centroids from sums and counts; returns the largest move (Euclidean).
double finish_update(const double* sums, const std::int64_t* counts, double* centroids, std::int64_t k,
                     std::int64_t d);

// The sequential k-means of seed 001 (point-major, update on the host). With
// threads > 1 only the assignment loop is split over points, which changes no
// arithmetic: each point's distances are computed the same way and the sums
// are still added in point order, so the result is bitwise that of 1 thread.
// The Seq variant runs it with 1 thread; the verifier with all cores.

// threads = 0: all cores.
void lloyd(const Problem& p, const Inputs& in, int threads, Result& out);

// The k-means verifier.

// Same assignment and iteration count as the reference, and centroids /
// inertia within a relative 1e-9 (different summation orders).
Check compare(const Problem& p, const Result& ref, const Result& got);

// A single-precision run's last iteration, from got.last_start: every point's
// cluster is its nearest by the exact distance or a near tie within the TF32
// bound of the distance (tf32_tie_bound), the centroids are the means of the
// points so assigned (an empty cluster keeps its start) within a relative
// 1e-5 (float sums), the inertia their exact distances' sum within the sum
// of each distance's TF32 bound (and a relative 1e-5), and the
// iteration count is the problem's. `ties` (where given) receives how many
// points took a near tie and the largest such gap as a fraction of its bound.
struct Ties {
  std::int64_t points = 0;
  double worst = 0;
};
Check check_last_step(const Problem& p, const Inputs& in, const Result& got, Ties* ties = nullptr);

// The most two squared distances |x - c|^2 computed in TF32 products with
// FP32 sums may err against each other, for a point of squared norm xx and
// centroids of squared norms c1 and c2: each operand rounded to TF32 (10
// mantissa bits, relative 2^-11) and the norms' and sums' float rounding
// bound each distance's error by 2^-9 (xx + c), so the two by 2^-9 (2 xx +
// c1 + c2).
inline double tf32_tie_bound(double xx, double c1, double c2) { return std::ldexp(2 * xx + c1 + c2, -9); }

}  // namespace pb::kmeans
