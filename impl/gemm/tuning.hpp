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

// A tunable kernel's choice, cached: the index of the configuration to run
// for a problem (choose_tile), looked up once per shape, so a timed launch
// only compares the shape with the last one's.
class TileChoice {
 public:
  TileChoice(const char* variant, const std::vector<std::string>& (*names)(), const char* type, int forced)
      : variant_(variant), names_(names), type_(type), forced_(forced) {}
  void set_sm(int sm) { sm_ = sm, index_ = -1; }  // the GPU it runs on (bind time)
  int operator()(const Problem& p) {
    if (index_ < 0 || p.op != last_.op || p.m != last_.m || p.n != last_.n || p.k != last_.k)
      index_ = choose_tile(variant_, names_(), forced_, p, type_, sm_), last_ = p;
    return index_;
  }

 private:
  const char* variant_;
  const std::vector<std::string>& (*names_)();
  std::string type_;
  int forced_, sm_ = 0, index_ = -1;
  Problem last_;
};

}  // namespace pb::gemm
