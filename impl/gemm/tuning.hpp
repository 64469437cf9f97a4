#pragma once
// Tile configurations chosen by measurement. A tunable kernel (CUDA.Pipelined,
// CUDA.DMMA) has a small list of configurations; `ci/tune-gemm` runs every
// one of them on every op over a sweep of shapes on the current GPU (bench
// --gemm-tile=all) and writes the winners, per (variant, op, type, swept
// shape), into the table the kernels read: impl/gemm/tuned_sm<NN>.inc (sm_80,
// 89, 90 and 100 are compiled in when present; the repository has sm_90's).
// A problem takes the choice of the swept shape nearest to it in log(M N K).
// Host-clean.
#include <string>
#include <vector>

#include "gemm/gemm.hpp"

namespace pb::gemm {

struct TunedTile {
  const char* variant;  // "CUDA.Pipelined"
  const char* op;       // "AB", "AtB", "ABtC"
  const char* type;     // "f32", "f64"
  long long m, n, k;    // the swept shape
  const char* tile;     // the configuration that was fastest there
};

// The table for compute capability sm (90: sm_90); empty when none was written.
const std::vector<TunedTile>& tuned_table(int sm);

// The tile the table chooses for p, or "" when it has none.
std::string tuned_tile(const std::vector<TunedTile>& table, const std::string& variant, const Problem& p,
                       const std::string& type);

// The index into `names` of the configuration a kernel runs p with: `forced`
// when >= 0 (a sweep's --gemm-tile), else the table's choice for GPU sm,
// else 0 (the default). Throws std::logic_error when forced is out of range
// or the table names a configuration the kernel does not have (stale table).
int choose_tile(const char* variant, const std::vector<std::string>& names, int forced, const Problem& p,
                const std::string& type, int sm);

}  // namespace pb::gemm
