#pragma once
// THE list of GEMM variants. Benchmarks and tests both iterate over it, so a
// variant listed here is benchmarked and tested. Adding one touches its file,
// one line (naming that file, and its factory's declaration) in registry.cpp
// and one source name in CMakeLists.txt.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "core/family.hpp"
#include "core/knobs.hpp"
#include "core/registrar.hpp"
#include "gemm/gemm.hpp"

namespace pb::gemm {

using pb::Knob;
using pb::Knobs;

// A tunable kernel's tile configurations (gemm/gemm.hpp) in the one type
// it is tuned for; nullptr: not tunable there. --gemm-tile sweeps them.
using TileList = const std::vector<std::string>& (*)();
struct Traits {
  TileList tiles = nullptr;
};
// The traits of a kernel tuned for type Tuned, in the registry of type T.
template <class T, class Tuned>
constexpr Traits tuned_in(TileList tiles) {
  return {std::is_same<T, Tuned>::value ? tiles : nullptr};
}

template <class T>
using Entry = pb::Entry<Variant<T>, Traits>;

// GFLOPS and the work of a call; the bytes are the roofline's, not a rate.
inline Throughput throughput() { return Throughput().bytes(Show::Model).flops(Show::RateAndModel); }

template <class T>
const std::vector<Entry<T>>& registry();

// The variants of the TF32 and BF16 types (Precision): tensor-core kernels and
// their library peer. Float problems with prec TF32 or BF16; empty without CUDA.
const std::vector<Entry<float>>& tensor_registry();

#ifdef PARBENCH_WITH_CUDA
const std::vector<std::string>& pipelined_tiles();
const std::vector<std::string>& dmma_tiles();
#endif

}  // namespace pb::gemm

// What other families use of GEMM's registration: one GEMM instance of a
// vendor library's variant under any run name (the Ceiling family's GEMM
// rates), named by a type, so a misspelt variant cannot reach start-up.

namespace pb {

namespace gemm {
enum class Vendor { OpenBLAS, cuBLAS };
// The element type a GEMM's operands are stored in (the registry it runs
// from: float also for the tf32 and bf16 Precisions, double for f64).
enum class Scalar { F32, F64 };
// The registry entry a vendor's GEMM is (a test checks that it exists).
const char* variant_of(Vendor v);
}  // namespace gemm

void register_gemm_instance(const RunName& name, gemm::Vendor vendor, gemm::Scalar scalar, Knobs k,
                            const gemm::Problem& p, std::uint64_t seed, const RegisterOptions& ro);

}  // namespace pb

// One problem's inputs and oracle, shared by every variant that runs it
// (pb::shared_case in core/family.hpp keeps the last one).

namespace pb::gemm {

template <class T>
class Case : public CaseBase<Problem, Inputs<T>, std::unique_ptr<Oracle<T>>> {
 public:
  // Problems with the same inputs and reference share a Case.
  static bool same_inputs(const Problem& a, const Problem& b) {
    return a.op == b.op && a.m == b.m && a.n == b.n && a.k == b.k && a.prec == b.prec;
  }
  Case(const Problem& p, std::uint64_t base_seed)
      : CaseBase<Problem, Inputs<T>, std::unique_ptr<Oracle<T>>>(p, base_seed, make_inputs<T>(p, base_seed)) {
  }
  const Oracle<T>& oracle() {
    return *this->reference_once([&](std::unique_ptr<Oracle<T>>& o) {
      o = std::make_unique<Oracle<T>>(this->problem, this->inputs, this->seed);
    });
  }
};

// The GEMM Job: a registry entry's variant on one problem, checked against the
// oracle; its work is the problem's flops and least bytes (throughput()).

template <class T>
class Job final : public VariantJob<Entry<T>, Variant<T>, Problem, Case<T>> {
 public:
  using VariantJob<Entry<T>, Variant<T>, Problem, Case<T>>::VariantJob;
  Check check() override {
    std::vector<T> out;
    this->variant_->result(out);
    return this->verdict([&] { return this->case_->oracle().check(out); });
  }
  Work work() const override {
    Work w;
    w.flops = this->problem_.flops();
    const double ab = this->problem_.prec == Precision::BF16 ? 2.0 : double(sizeof(T));
    w.bytes = this->problem_.min_bytes(ab, double(sizeof(T)));
    return w;
  }
};

}  // namespace pb::gemm
