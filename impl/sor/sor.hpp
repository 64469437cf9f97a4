#pragma once
// Red-black SOR family (seed 002): the 2-D elliptic PDE
//
//   u_xx + u_yy + a(x,y) u_x + b(x,y) u_y = 0
//
// on an M x N grid (boundary rows and columns included) with fixed (Dirichlet)
// boundary values, steps h1 (x, along rows i) and h2 (y, along columns j),
// solved by successive over-relaxation with red-black ordering. Central
// differences give, at an interior point (i, j), the Gauss-Seidel value
//
//   u* = [ (2 + h1 a) u(i+1,j) + (2 - h1 a) u(i-1,j)
//          + r ((2 + h2 b) u(i,j+1) + (2 - h2 b) u(i,j-1)) ] / D,
//   r = h1^2 / h2^2,  D = 4 (1 + r)  (the constant denominator, precomputed),
//
// and the update u <- u + omega (u* - u). A sweep updates every red point
// (i + j even), then every black one (i + j odd); the points of one colour
// depend only on the other colour, so any order within a half-sweep gives
// the same field: every variant must match the reference point for point (up
// to the rounding of fused multiply-adds).
//
// Layout: row-major, u[i * n + j], i in [0, m), j in [0, n); j is contiguous.
//
// Coefficients a(x,y) = a0 + a1 x (1 - x)(1/2 - y), b(x,y) = b0 + b1 y (1 - y)(x - 1/2)
// with x = i h1, y = j h2, computed in the kernels (no coefficient arrays), so
// the least traffic of a sweep is the field itself.
#include <cstdint>
#include <string>
#include <vector>

#include "core/host_device.hpp"
#include "core/job.hpp"
#include "core/status.hpp"

namespace pb::sor {

// The problems: `vortex` is the benchmark problem (a rotating flow a, b that
// carries the heat of two warm corners around; seed 002 does not state its
// coefficients, so these are parbench's); `analytic` has constant a, b and
// the exact solution u = exp(alpha x + gamma y) sin(pi y) (reference.cpp), so
// the discretisation error can be measured.
enum class Field { Vortex, Analytic };
const char* to_string(Field);
Field parse_field(const std::string&);  // UsageError on an unknown name

struct Problem {
  std::int64_t m = 0, n = 0;  // grid points along x (rows) and y (columns), boundary included
  int sweeps = 1;             // red-black sweeps per run
  double omega = 1.5;         // relaxation factor, in (0, 2)
  Field field = Field::Vortex;
  double h1 = 0, h2 = 0;  // steps; 0: the unit square's, 1 / (m - 1) and 1 / (n - 1)
  double step_x() const { return h1 > 0 ? h1 : 1.0 / double(m - 1); }
  double step_y() const { return h2 > 0 ? h2 : 1.0 / double(n - 1); }
  std::int64_t points() const { return m * n; }
  std::int64_t interior() const { return (m - 2) * (n - 2); }
  std::string str() const;  // "vortex 1026x1026 sweeps=20 omega=1.5"
};

// Throws UsageError for a grid below 3 x 3 or above 2^34 points, omega
// outside (0, 2), sweeps < 1, steps that are not positive and finite.
void validate(const Problem& p);

// What every kernel needs, computed once on the host (seed 002 kept these in
// constant memory): the grid, the steps, r, 2/D and h1/D, h2/D, omega, and
// the coefficient polynomials.
struct Consts {
  std::int64_t m, n;
  double h1, h2;
  double r;       // h1^2 / h2^2
  double two_d;   // 2 / D
  double h1_d;    // h1 / D
  double r_h2_d;  // r h2 / D
  double omega;
  double a0, a1, b0, b1;
};
Consts consts(const Problem& p);

// Gauss-Seidel value minus the point, for u(i,j) with its neighbours along x
// (i+1, i-1) and y (j+1, j-1): the residual of the discrete equation divided
// by its diagonal, the measure of convergence (omega-free).
PB_HOST_DEVICE inline double correction(const Consts& c, std::int64_t i, std::int64_t j, double u, double xp,
                                        double xm, double yp, double ym) {
  const double x = double(i) * c.h1, y = double(j) * c.h2;
  const double a = c.a0 + c.a1 * x * (1.0 - x) * (0.5 - y);
  const double b = c.b0 + c.b1 * y * (1.0 - y) * (x - 0.5);
  return c.two_d * (xp + xm + c.r * (yp + ym)) + c.h1_d * a * (xp - xm) + c.r_h2_d * b * (yp - ym) - u;
}

// Floating-point operations of one point's update as correction() and
// relax() write it: 2 for the coordinates, 6 each for the coefficients a and
// b, 14 for the correction, 2 for the relaxation (the roofline's work model).
constexpr double kFlopsPerUpdate = 30.0;

// The one definition of a point's update, used by every variant (host and
// device): u + omega (u* - u).
PB_HOST_DEVICE inline double relax(const Consts& c, std::int64_t i, std::int64_t j, double u, double xp,
                                   double xm, double yp, double ym) {
  return u + c.omega * correction(c, i, j, u, xp, xm, yp, ym);
}

// The first interior column of colour `colour` (0 red, 1 black) in row i:
// (i + j) % 2 == colour.
PB_HOST_DEVICE inline std::int64_t first_column(std::int64_t i, int colour) {
  return 1 + ((i + 1 + colour) & 1);
}

// One half-sweep of row i of the natural layout, in place.
inline void relax_row(const Consts& c, double* u, std::int64_t i, int colour) {
  double* row = u + i * c.n;
  const std::int64_t n = c.n;
  for (std::int64_t j = first_column(i, colour); j < n - 1; j += 2)
    row[j] = relax(c, i, j, row[j], row[j + n], row[j - n], row[j + 1], row[j - 1]);
}

struct Inputs {
  std::vector<double> u0;  // m * n: the boundary values and the starting interior (never zero)
};
Inputs make_inputs(const Problem& p, std::uint64_t base_seed);

// The exact solution of the analytic problem at (x, y).
double analytic_solution(double x, double y);

class Variant {
 public:
  virtual ~Variant() = default;
  virtual Support supports(const Problem&) const { return Support::yes(); }
  virtual void prepare(const Problem& p, const Inputs& in) = 0;  // untimed
  virtual void reset() = 0;                                      // untimed: the starting field back in place
  virtual void run() = 0;                                        // p.sweeps red-black sweeps
  virtual void result(std::vector<double>& u) = 0;               // the field, m * n, row-major
  virtual CommProfile communication() { return {}; }             // untimed: the halo exchange alone
  virtual void* stream() { return nullptr; }
};

// The sequential red-black SOR of seed 002, and the residual.

// One red-black sweep of u in place: every red interior point (i + j even),
// then every black one. threads > 1 splits each half-sweep's rows, which
// changes no arithmetic (points of one colour do not depend on each other):
// the field is bitwise that of one thread. threads = 0: all cores.
void sweep(const Consts& c, double* u, int threads);

// Root mean square, over the interior, of the Gauss-Seidel correction
// (above): the discrete equation's residual divided by its diagonal.
double residual(const Problem& p, const std::vector<double>& u, int threads = 0);

// Sweeps until p.sweeps are done or, with tol > 0, until the residual is at
// most tol (checked after every `every` sweeps); returns the sweeps run. With
// `trace`, the residual after each check (one entry per check).
int solve(const Problem& p, std::vector<double>& u, int threads, double tol = 0, int every = 1,
          std::vector<double>* trace = nullptr);

// The SOR verifier.

// The boundary bitwise as given, and every interior point within 1e-10 of
// the field's scale (max |reference|) of the reference: the same updates in
// the same red-black order, differing only where a compiler fused a
// multiply-add (a relative 1e-16 per update, which SOR's contraction keeps
// from growing). A missed halo exchange or a point updated with the wrong
// colour's old value is off by far more after one sweep.
Check verify(const Problem& p, const std::vector<double>& u0, const std::vector<double>& ref,
             const std::vector<double>& got);

}  // namespace pb::sor
