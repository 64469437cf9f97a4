#pragma once
// The sequential red-black SOR of seed 002, and the residual.
#include <vector>

#include "sor/sor.hpp"

namespace pb::sor {

// One red-black sweep of u in place: every red interior point (i + j even),
// then every black one. threads > 1 splits each half-sweep's rows, which
// changes no arithmetic (points of one colour do not depend on each other):
// the field is bitwise that of one thread. threads = 0: all cores.
void sweep(const Consts& c, double* u, int threads);

// Root mean square, over the interior, of the Gauss-Seidel correction
// (sor.hpp): the discrete equation's residual divided by its diagonal.
double residual(const Problem& p, const std::vector<double>& u, int threads = 0);

// Sweeps until p.sweeps are done or, with tol > 0, until the residual is at
// most tol (checked after every `every` sweeps); returns the sweeps run. With
// `trace`, the residual after each check (one entry per check).
int solve(const Problem& p, std::vector<double>& u, int threads, double tol = 0, int every = 1,
          std::vector<double>* trace = nullptr);

}  // namespace pb::sor
