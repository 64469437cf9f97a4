#include <omp.h>

#include <cmath>
#include <cstdio>
#include <memory>

#include "fixtures/fixtures.hpp"
#include "sor/cpu/host_field.hpp"
#include "sor/registry.hpp"
#include "sor/sor.hpp"

namespace pb::sor {

void sweep(const Consts& c, double* u, int threads) {
  const int nt = threads > 0 ? threads : omp_get_max_threads();
  for (int colour = 0; colour < 2; ++colour) {
#pragma omp parallel for num_threads(nt) schedule(static)
    for (std::int64_t i = 1; i < c.m - 1; ++i) relax_row(c, u, i, colour);
  }
}

double residual(const Problem& p, const std::vector<double>& u, int threads) {
  const Consts c = consts(p);
  const std::int64_t m = p.m, n = p.n;
  const int nt = threads > 0 ? threads : omp_get_max_threads();
  double sum = 0;
#pragma omp parallel for num_threads(nt) schedule(static) reduction(+ : sum)
  for (std::int64_t i = 1; i < m - 1; ++i) {
    const double* row = u.data() + i * n;
    for (std::int64_t j = 1; j < n - 1; ++j) {
      const double e = correction(c, i, j, row[j], row[j + n], row[j - n], row[j + 1], row[j - 1]);
      sum += e * e;
    }
  }
  return std::sqrt(sum / double(p.interior()));
}

int solve(const Problem& p, std::vector<double>& u, int threads, double tol, int every,
          std::vector<double>* trace) {
  const Consts c = consts(p);
  if (every < 1) every = 1;
  int done = 0;
  while (done < p.sweeps) {
    sweep(c, u.data(), threads);
    ++done;
    if ((tol > 0 || trace) && (done % every == 0 || done == p.sweeps)) {
      const double r = residual(p, u, threads);
      if (trace) trace->push_back(r);
      if (tol > 0 && r <= tol) break;
    }
  }
  return done;
}

namespace {
// Seq: the reference on one thread, the baseline of speedups.
class Seq final : public HostField {
 public:
  void run() override {
    for (int s = 0; s < sweeps_; ++s) sweep(c_, u_.data(), 1);
  }
};
}  // namespace

std::unique_ptr<Variant> make_seq() { return std::make_unique<Seq>(); }

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

// The SOR problem: names, checks, constants and the starting field.

namespace {
// The vortex problem's flow: a(x,y) = 50 x (1 - x)(1/2 - y), b(x,y) = 50 y
// (1 - y)(x - 1/2), a rotation about the centre with |a|, |b| <= 6.25, so the
// central differences stay stable (cell Peclet number h |a| / 2 < 1) on every
// grid. Being non-symmetric, it does not converge for every omega < 2: on a
// 33 x 41 grid SOR converges at omega 1.9 and diverges at 1.95 (with
// 200 instead of 50, already at 1.8), which a user sweeping omega sees in the residual.
constexpr double kVortex = 50.0;
// The analytic problem: constant a = 2, b = 1; u = exp(alpha x + gamma y)
// sin(pi y) solves the PDE when gamma = -b / 2 and alpha^2 + a alpha - b^2/4 -
// pi^2 = 0 (substitute it: the sin and cos terms vanish separately).
constexpr double kA = 2.0, kB = 1.0;
const double kPi = std::acos(-1.0);
double alpha() { return (-kA + std::sqrt(kA * kA + kB * kB + 4.0 * kPi * kPi)) / 2.0; }
constexpr double kGamma = -kB / 2.0;
}  // namespace

const char* to_string(Field f) { return f == Field::Vortex ? "vortex" : "analytic"; }

Field parse_field(const std::string& s) {
  if (s == "vortex") return Field::Vortex;
  if (s == "analytic") return Field::Analytic;
  throw UsageError("SOR field '" + s + "' is not one of vortex, analytic");
}

std::string Problem::str() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, " sweeps=%d omega=%g", sweeps, omega);
  return std::string(to_string(field)) + " " + std::to_string(m) + "x" + std::to_string(n) + buf;
}

void validate(const Problem& p) {
  auto fail = [&](const std::string& why) { throw UsageError("SOR " + p.str() + ": " + why); };
  if (p.m < 3 || p.n < 3) fail("the grid must be at least 3 x 3 (boundary included)");
  if (p.m > (std::int64_t(1) << 20) || p.n > (std::int64_t(1) << 20) || p.m * p.n > (std::int64_t(1) << 34))
    fail("the grid is larger than 2^34 points or 2^20 a side");
  if (!(p.omega > 0 && p.omega < 2)) fail("omega must be in (0, 2) for SOR to converge");
  if (p.sweeps < 1) fail("sweeps must be >= 1");
  for (double h : {p.h1, p.h2})
    if (h != 0 && !(h > 0 && std::isfinite(h))) fail("steps h1, h2 must be positive and finite");
}

Consts consts(const Problem& p) {
  Consts c{};
  c.m = p.m, c.n = p.n;
  c.h1 = p.step_x(), c.h2 = p.step_y();
  c.r = (c.h1 * c.h1) / (c.h2 * c.h2);
  const double d = 4.0 * (1.0 + c.r);
  c.two_d = 2.0 / d;
  c.h1_d = c.h1 / d;
  c.r_h2_d = c.r * c.h2 / d;
  c.omega = p.omega;
  if (p.field == Field::Vortex)
    c.a0 = 0, c.a1 = kVortex, c.b0 = 0, c.b1 = kVortex;
  else
    c.a0 = kA, c.a1 = 0, c.b0 = kB, c.b1 = 0;
  return c;
}

double analytic_solution(double x, double y) {
  return std::exp(alpha() * x + kGamma * y) * std::sin(kPi * y);
}

Inputs make_inputs(const Problem& p, std::uint64_t base_seed) {
  Inputs in;
  const auto seed = fixtures::seed_for(base_seed, std::string("sor.") + to_string(p.field), {p.m, p.n});
  in.u0.resize(std::size_t(p.m * p.n));
  const double h1 = p.step_x(), h2 = p.step_y();
  const double X = h1 * double(p.m - 1), Y = h2 * double(p.n - 1);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < p.m; ++i) {
    for (std::int64_t j = 0; j < p.n; ++j) {
      const bool edge = i == 0 || j == 0 || i == p.m - 1 || j == p.n - 1;
      const double x = double(i) * h1, y = double(j) * h2;
      double v;
      if (edge) {
        // Vortex: warm where x and y are both small or both large, (1 - x')(1 - y') + x' y'
        // on the domain scaled to the unit square.
        const double xs = x / X, ys = y / Y;
        v = p.field == Field::Vortex ? (1 - xs) * (1 - ys) + xs * ys : analytic_solution(x, y);
      } else {
        // A start far from the solution and never zero: uniform in (0, 1).
        v = 0.5 + 0.5 * fixtures::unit_symmetric(fixtures::hash(seed, std::uint64_t(i * p.n + j)));
      }
      in.u0[std::size_t(i * p.n + j)] = v;
    }
  }
  return in;
}

}  // namespace pb::sor
