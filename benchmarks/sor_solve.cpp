// sor-solve: one SOR problem solved with the reference until its residual
// falls below a tolerance, for the pictures the benchmark's fixed sweeps do
// not give: the converged field (DIR/field.npy, float64 M x N, row-major, the
// NumPy format) and the residual every K sweeps (DIR/residuals.json).
// plots/sor_field.py draws them; plots/plot --sor-field DIR puts them in the report.
//
// Exit codes: 0 converged; 2 bad input (one line, nothing written); 3 the
// iteration diverged or did not reach the tolerance (files still written);
// 1 the files could not be written.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <string>
#include <vector>

#include "core/npy.hpp"
#include "core/options.hpp"
#include "core/status.hpp"
#include "core/strings.hpp"
#include "sor/sor.hpp"

namespace {
using namespace pb;
using namespace pb::sor;

const char* kUsage =
    "usage: sor-solve --grid=MxN --out=DIR [--field=vortex|analytic] [--omega=W] [--tol=T]\n"
    "                 [--max-sweeps=S] [--every=K] [--steps=H1,H2] [--seed=N]\n"
    "Solves one SOR problem with the reference until the residual (RMS of the Gauss-Seidel\n"
    "correction) is at most T (default 1e-8), at most S sweeps (default 100000), checking\n"
    "every K sweeps (default 10); omega defaults to 1.8. Writes DIR/field.npy and DIR/residuals.json.\n";

struct Args {
  Problem p;
  double tol = 1e-8;
  int every = 10;
  std::uint64_t seed = Options{}.seed;
  std::string out;
};

Args parse(int argc, char** argv) {
  Args a;
  a.p.omega = 1.8;
  a.p.sweeps = 100000;
  bool grid = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string v;
    if (flag_value(arg, "--grid", v)) {
      const auto d = parse_dims("--grid", v, 2, 3, std::int64_t(1) << 20, "MxN (grid points, at least 3x3)");
      a.p.m = d[0], a.p.n = d[1], grid = true;
    } else if (flag_value(arg, "--field", v)) {
      a.p.field = parse_field(v);
    } else if (flag_value(arg, "--omega", v)) {
      a.p.omega = parse_number("--omega", v);
    } else if (flag_value(arg, "--tol", v)) {
      a.tol = parse_number("--tol", v);
      if (!(a.tol > 0)) throw UsageError("--tol: " + v + " is not positive");
    } else if (flag_value(arg, "--max-sweeps", v)) {
      a.p.sweeps = int(parse_int("--max-sweeps", v, 1, 100000000));
    } else if (flag_value(arg, "--every", v)) {
      a.every = int(parse_int("--every", v, 1, 1000000));
    } else if (flag_value(arg, "--steps", v)) {
      const auto parts = split(v, ',');
      if (parts.size() != 2) throw UsageError("--steps: want H1,H2");
      a.p.h1 = parse_number("--steps", parts[0]), a.p.h2 = parse_number("--steps", parts[1]);
    } else if (flag_value(arg, "--seed", v)) {
      a.seed = std::uint64_t(parse_int("--seed", v, 0, std::int64_t(1) << 62));
    } else if (flag_value(arg, "--out", v)) {
      a.out = v;
    } else {
      throw UsageError("unknown argument '" + arg + "'");
    }
  }
  if (!grid) throw UsageError("--grid=MxN is required");
  if (a.out.empty()) throw UsageError("--out=DIR is required");
  validate(a.p);
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse_tool_args("sor-solve", kUsage, argc, argv, parse);
  auto u = make_inputs(a.p, a.seed).u0;
  const Consts c = consts(a.p);
  std::vector<double> trace;
  int done = 0;
  bool converged = false, diverged = false;
  auto last = std::chrono::steady_clock::now();
  while (done < a.p.sweeps) {
    sweep(c, u.data(), 0);
    ++done;
    if (done % a.every != 0 && done != a.p.sweeps) continue;
    const double r = residual(a.p, u);
    trace.push_back(r);
    if (r <= a.tol) {
      converged = true;
      break;
    }
    if (!std::isfinite(r) || r > 1e6 * trace.front()) {
      diverged = true;
      break;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - last > std::chrono::seconds(2)) {
      std::fprintf(stderr, "sor-solve: %d sweeps, residual %.3g (tolerance %.3g)\n", done, r, a.tol);
      last = now;
    }
  }
  const std::string dir = a.out;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !write_npy(dir + "/field.npy", u.data(), {a.p.m, a.p.n})) {
    std::fprintf(stderr, "sor-solve: cannot write %s/field.npy\n", dir.c_str());
    return 1;
  }
  std::ofstream j(dir + "/residuals.json");
  j << std::setprecision(17);
  j << "{\"parbench_sor_solve\": 1, \"field\": \"" << to_string(a.p.field) << "\", \"M\": " << a.p.m
    << ", \"N\": " << a.p.n << ", \"omega\": " << a.p.omega << ", \"h1\": " << c.h1 << ", \"h2\": " << c.h2
    << ", \"tolerance\": " << a.tol << ", \"every\": " << a.every << ", \"sweeps\": " << done
    << ", \"converged\": " << (converged ? "true" : "false") << ", \"residuals\": [";
  for (std::size_t i = 0; i < trace.size(); ++i)
    if (std::isfinite(trace[i]))
      j << (i ? ", " : "") << trace[i];
    else
      j << (i ? ", " : "") << "null";
  j << "]}\n";
  if (!j) {
    std::fprintf(stderr, "sor-solve: cannot write %s/residuals.json\n", dir.c_str());
    return 1;
  }
  if (!converged) {
    std::fprintf(stderr, "sor-solve: %s after %d sweeps (residual %.3g, tolerance %.3g) at omega %g\n",
                 diverged ? "diverged" : "did not converge", done, trace.empty() ? 0.0 : trace.back(), a.tol,
                 a.p.omega);
    return 3;
  }
  std::fprintf(stderr, "sor-solve: converged in %d sweeps (residual %.3g)\n", done, trace.back());
  return 0;
}
