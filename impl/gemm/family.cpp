// GEMM axes, declared as data: operation x type x shape, then variant x (threads | block).
// Run names:
// GEMM/<variant>/op:<op>/type:<f32|f64|tf32|bf16>/M:<m>/N:<n>/K:<k>[/tile:<name>][/threads:<t>|/block:<b>]
// (tf32 and bf16: the tensor-core variants of tensor_registry())
#include "core/family.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/axes.hpp"
#include "core/registrar.hpp"
#include "core/strings.hpp"
#include "gemm/cpu/simd.hpp"
#include "gemm/registry.hpp"

namespace pb {
namespace {
using namespace gemm;

std::vector<Shape3> default_shapes(Profile p) {
  switch (p) {
    case Profile::Smoke: return {{64, 64, 64}, {37, 29, 45}};
    case Profile::Default:
      return {{64, 64, 64},       {128, 128, 128},    {256, 256, 256},    {512, 512, 512},
              {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}, {1000, 1500, 777}};
    case Profile::Full:
      return {{64, 64, 64},       {128, 128, 128},    {256, 256, 256},    {512, 512, 512},
              {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192},
              {1000, 1500, 777},  {8192, 128, 8192},  {128, 8192, 8192}};
  }
  return {};
}

void declare_counters() {
  for (const char* dim : {"M", "N", "K"}) declare_counter(dim, CounterKind::Problem);
}

// A GEMM type: the registry it runs from (its scalar) and its precision.
using Element = std::pair<Scalar, Precision>;

// The axes, declared once (core/axes.hpp): op x type x shape, in run-name
// order; a shape names M, N and K.
const AxisSet& axes() {
  static const std::vector<std::string> ops{"AB", "AtB", "ABtC"}, types{"f32", "f64", "tf32", "bf16"};
  static const AxisSet a{
      "GEMM",
      {Axis::choice<Op>("op", {{"AB", Op::AB}, {"AtB", Op::AtB}, {"ABtC", Op::ABtC}})
           .help("GEMM operations: AB (C=A*B), AtB (C=A^T*B), ABtC (D=A*B^T+C)")
           .values(ops, ops, ops)
           .old("--op"),
       Axis::choice<Element>("type", {{"f32", {Scalar::F32, Precision::Native}},
                                      {"f64", {Scalar::F64, Precision::Native}},
                                      {"tf32", {Scalar::F32, Precision::TF32}},
                                      {"bf16", {Scalar::F32, Precision::BF16}}})
           .help("element types: f32, f64, and the tensor-core inputs tf32 and bf16 (f32 accumulation)")
           .values(types, types, types)
           .old("--precision"),
       Axis::shape("shapes", std::int64_t(1) << 22)
           .key("shape")
           .help("GEMM shapes, each N (a cube) or MxNxK, e.g. 1000x1500x777,4096")
           .typed_values(default_shapes(Profile::Smoke), default_shapes(Profile::Default),
                         default_shapes(Profile::Full))
           .old("--sizes")}};
  return a;
}

// A tunable kernel's tile configurations in the type it runs (its registry
// entry's traits), or nullptr.
template <class T>
const std::vector<std::string>* tunable_tiles(const gemm::Entry<T>& e) {
  return e.traits.tiles ? &e.traits.tiles() : nullptr;
}

// --gemm-tile: "all", or tile names of the tunable kernels.
std::vector<std::string> parse_tiles(const std::string& flag, const std::string& v) {
  std::vector<std::string> known;
  auto add = [&](const auto& list) {
    for (const auto& e : list)
      if (const auto* t = tunable_tiles(e)) known.insert(known.end(), t->begin(), t->end());
  };
  add(registry<float>());
  add(registry<double>());
  if (known.empty()) throw UsageError(flag + ": this build has no tunable GEMM kernel (CUDA is off)");
  return v == "all" ? known : parse_word_list(flag, v, known);
}

template <class T>
void register_type(const Options& opt, const Point& pt, const std::vector<gemm::Entry<T>>& entries,
                   Precision prec) {
  const auto threads = opt.threads ? *opt.threads : default_thread_axis();
  const auto* tile_flag = opt.value<std::vector<std::string>>("--gemm-tile");
  const auto swept = tile_flag ? *tile_flag : std::vector<std::string>{};
  const Shape3& shape = pt.get<Shape3>("shapes");
  const Problem p{pt.get<Op>("op"), shape.m, shape.n, shape.k, prec};
  for (const auto& e : entries) {
    // A sweep (--gemm-tile) runs a tunable kernel once per configuration
    // asked for, the name saying which (tile:<name>); else the table chooses.
    std::vector<std::pair<int, std::string>> tiles{{-1, ""}};
    if (const auto* names = tile_flag && prec == Precision::Native ? tunable_tiles(e) : nullptr) {
      tiles.clear();
      for (std::size_t i = 0; i < names->size(); ++i)
        if (std::find(swept.begin(), swept.end(), (*names)[i]) != swept.end())
          tiles.push_back({int(i), (*names)[i]});
    }
    for (const auto& [tile, tile_name] : tiles)
      for (auto k : entry_knobs(e, opt, threads, {})) {
        k.tile = tile;
        RunName name = axes().name(pt, e.name);
        if (tile >= 0) name.args.push_back({"tile", tile_name});
        RegisterOptions ro;
        ro.axes = axes().counters(pt);
        // GFLOP/s reads against the GEMM ceiling of its precision.
        ro.rate = Rate{"GFLOPS", "gemm_" + pt.text("type")};
        ro.throughput = gemm::throughput();
        register_entry<gemm::Job<T>>(name, e, k, p, opt, ro, "M*N*K", double(p.m) * p.n * p.k);
      }
  }
}

}  // namespace

const char* gemm::variant_of(Vendor v) { return v == Vendor::OpenBLAS ? "OpenBLAS" : "cuBLAS"; }

void register_gemm_instance(const RunName& name, gemm::Vendor vendor, gemm::Scalar scalar, Knobs k,
                            const gemm::Problem& p, std::uint64_t seed, const RegisterOptions& ro) {
  declare_counters();
  const std::string variant = gemm::variant_of(vendor);
  auto add = [&](auto tag) {
    using T = decltype(tag);
    // TF32 and BF16 problems run on the tensor-core list (float).
    const auto& list = [&]() -> const std::vector<gemm::Entry<T>>& {
      if constexpr (std::is_same<T, float>::value)
        if (p.prec != Precision::Native) return tensor_registry();
      return registry<T>();
    }();
    for (const auto& e : list)
      if (variant == e.name) {
        const gemm::Entry<T>* entry = &e;
        // A Ceiling's GEMM runs the variant's code and calls its library like the variant does.
        RegisterOptions r = ro;
        r.library = e.library;
        r.code = e.code;
        r.throughput = gemm::throughput();
        register_job(
            name, [entry, k, p, seed] { return std::make_unique<gemm::Job<T>>(*entry, k, p, seed); }, r);
        return;
      }
    throw std::logic_error("no GEMM variant " + variant);
  };
  if (scalar == gemm::Scalar::F64)
    add(double{});
  else
    add(float{});
}

static void register_gemm(const Options& opt) {
  declare_counters();
  if (const auto* simd = opt.value<Simd>("--gemm-simd")) set_blocked_simd(*simd);
  for (const Point& pt : axes().points(opt)) {
    const auto [scalar, prec] = pt.get<Element>("type");
    if (scalar == Scalar::F64)
      register_type<double>(opt, pt, registry<double>(), prec);
    else if (prec == Precision::Native)
      register_type<float>(opt, pt, registry<float>(), prec);
    else
      register_type<float>(opt, pt, tensor_registry(), prec);
  }
}

// The run's context: which SIMD micro-kernel OMP.Blocked was built with.
static ContextLines gemm_context() { return {{"cpu_simd", gemm::to_string(gemm::blocked_simd())}}; }

// The axes' flags, then the tuning sweep's and the CPU kernel's.
static FlagSection gemm_flags() {
  FlagSection s = axes().flags();
  s.flags.push_back(
      {"--gemm-tile",
       "LIST",
       "tuning sweeps (ci/tune-gemm): run CUDA.Pipelined and CUDA.DMMA once per tile configuration, "
       "'all' or names (run names gain tile:<name>); without it the tuned table chooses",
       [](const std::string& flag, const std::string& v) { return std::any(parse_tiles(flag, v)); },
       {}});
  s.flags.push_back(
      {"--gemm-simd",
       "ISA",
       "the instruction set of OMP.Blocked's micro-kernel: baseline, avx2 (with FMA) or avx512; "
       "default the widest this CPU has (the context key cpu_simd says which ran)",
       [](const std::string& flag, const std::string& v) { return std::any(parse_host_simd(flag, v)); },
       {}});
  return s;
}

Family gemm_family() { return {"GEMM", gemm_flags, register_gemm, gemm_context}; }

}  // namespace pb
