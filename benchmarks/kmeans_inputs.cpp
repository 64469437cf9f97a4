// kmeans-inputs: writes the points and first centroids that `bench` gives
// every k-means variant of one problem, so peers outside parbench
// (peers/kmeans_peers.py: scikit-learn, PyTorch) start from the same data:
// DIR/points.npy (float64 N x D), DIR/init.npy (float64 K x D) and
// DIR/problem.json (N, D, K, the distribution, the type and the seed). Type
// f32 writes the same arrays with their values rounded to float (still
// float64 files: the peer converts them).
//
//   kmeans-inputs --shape=NxDxK --out=DIR [--dist=uniform|blobs] [--type=f64|f32] [--seed=N]
//
// Exit status: 0; 1 when DIR cannot be written; 2 on a bad argument.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/npy.hpp"
#include "core/options.hpp"
#include "core/status.hpp"
#include "kmeans/kmeans.hpp"

namespace {
using namespace pb;
using namespace pb::kmeans;

const char* kUsage =
    "usage: kmeans-inputs --shape=NxDxK --out=DIR [--dist=uniform|blobs] [--type=f64|f32] [--seed=N]\n"
    "Writes the points and first centroids bench gives every k-means variant of that problem:\n"
    "DIR/points.npy (N x D), DIR/init.npy (K x D), DIR/problem.json.\n";

struct Args {
  Problem p;
  std::uint64_t seed = Options{}.seed;
  std::string out;
};

Args parse(int argc, char** argv) {
  Args a;
  bool shape = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string v;
    if (flag_value(arg, "--shape", v)) {
      const auto d =
          parse_dims("--shape", v, 3, 1, std::int64_t(1) << 31, "NxDxK (points x dimensions x clusters)");
      a.p.n = d[0], a.p.d = d[1], a.p.k = d[2], shape = true;
    } else if (flag_value(arg, "--dist", v)) {
      const auto words = parse_word_list("--dist", v, {"uniform", "blobs"});
      if (words.size() != 1) throw UsageError("--dist: one distribution, uniform or blobs");
      a.p.dist = words[0] == "blobs" ? Dist::Blobs : Dist::Uniform;
    } else if (flag_value(arg, "--type", v)) {
      const auto words = parse_word_list("--type", v, {"f64", "f32"});
      if (words.size() != 1) throw UsageError("--type: one type, f64 or f32");
      a.p.type = words[0] == "f32" ? Type::F32 : Type::F64;
    } else if (flag_value(arg, "--seed", v)) {
      a.seed = std::uint64_t(parse_int("--seed", v, 0, std::int64_t(1) << 62));
    } else if (flag_value(arg, "--out", v)) {
      a.out = v;
    } else {
      throw UsageError("unknown argument '" + arg + "'");
    }
  }
  if (!shape) throw UsageError("--shape=NxDxK is required");
  if (a.out.empty()) throw UsageError("--out=DIR is required");
  // K <= N and the like; the stopping rule does not shape the inputs (a
  // fixed count, which type f32 asks for).
  a.p.crit.fixed = true;
  validate(a.p);
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse_tool_args("kmeans-inputs", kUsage, argc, argv, parse);
  const Inputs in = make_inputs(a.p, a.seed);
  std::error_code ec;
  std::filesystem::create_directories(a.out, ec);
  if (ec || !write_npy(a.out + "/points.npy", in.points.data(), {a.p.n, a.p.d}) ||
      !write_npy(a.out + "/init.npy", in.init.data(), {a.p.k, a.p.d})) {
    std::fprintf(stderr, "kmeans-inputs: cannot write the arrays in %s\n", a.out.c_str());
    return 1;
  }
  std::ofstream j(a.out + "/problem.json");
  j << "{\"parbench_kmeans_inputs\": 1, \"N\": " << a.p.n << ", \"D\": " << a.p.d << ", \"K\": " << a.p.k
    << ", \"dist\": \"" << to_string(a.p.dist) << "\", \"type\": \"" << to_string(a.p.type)
    << "\", \"seed\": " << a.seed << "}\n";
  if (!j) {
    std::fprintf(stderr, "kmeans-inputs: cannot write %s/problem.json\n", a.out.c_str());
    return 1;
  }
  return 0;
}
