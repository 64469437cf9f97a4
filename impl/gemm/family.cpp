// GEMM axes: operation x precision x shape x variant x (threads | block).
// Run names:
// GEMM/<variant>/op:<op>/type:<f32|f64|tf32|bf16>/M:<m>/N:<n>/K:<k>[/tile:<name>][/threads:<t>|/block:<b>]
// (tf32 and bf16: the tensor-core variants of tensor_registry())
#include "core/family.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/registrar.hpp"
#include "gemm/cpu/simd.hpp"
#include "gemm/family.hpp"
#include "gemm/job.hpp"

namespace pb {
namespace {
using namespace gemm;

std::vector<Shape3> default_sizes(Profile p) {
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
  declare_counter("GFLOPS", CounterKind::Rate, "GFLOP/s");
  declare_counter("flops_per_call", CounterKind::Model, "flop");
  declare_counter("bytes_per_call", CounterKind::Model, "B");
  for (const char* dim : {"M", "N", "K"}) declare_counter(dim, CounterKind::Problem);
}

const std::vector<std::string> kOps{"AB", "AtB", "ABtC"};

}  // namespace
#ifdef PARBENCH_WITH_CUDA
namespace gemm {
const std::vector<std::string>& pipelined_tiles();
const std::vector<std::string>& dmma_tiles();
}  // namespace gemm
#endif
namespace {

// A tunable kernel's tile configurations (gemm/tuning.hpp) in the one type
// it runs, or nullptr.
const std::vector<std::string>* tunable_tiles(const std::string& variant, const std::string& type) {
#ifdef PARBENCH_WITH_CUDA
  if (variant == "CUDA.Pipelined" && type == "f32") return &gemm::pipelined_tiles();
  if (variant == "CUDA.DMMA" && type == "f64") return &gemm::dmma_tiles();
#endif
  (void)variant, (void)type;
  return nullptr;
}

// --gemm-tile: "all", or tile names of the tunable kernels.
std::vector<std::string> parse_tiles(const std::string& flag, const std::string& v) {
  std::vector<std::string> known;
  for (const auto& [variant, type] : {std::pair{"CUDA.Pipelined", "f32"}, std::pair{"CUDA.DMMA", "f64"}})
    if (const auto* t = tunable_tiles(variant, type)) known.insert(known.end(), t->begin(), t->end());
  if (known.empty()) throw UsageError(flag + ": this build has no tunable GEMM kernel (CUDA is off)");
  return v == "all" ? known : parse_word_list(flag, v, known);
}

template <class T>
void register_type(const Options& opt, Op op, const char* type, const std::vector<gemm::Entry<T>>& entries,
                   Precision prec) {
  const auto* given = opt.flag("--gemm-shapes");
  const auto sizes = given ? parse_sizes(*given, "--gemm-shapes") : default_sizes(opt.profile);
  const auto threads = opt.threads ? *opt.threads : default_thread_axis();
  const auto* tile_flag = opt.flag("--gemm-tile");
  const auto swept = tile_flag ? parse_tiles("--gemm-tile", *tile_flag) : std::vector<std::string>{};
  for (const auto& s : sizes) {
    Problem p{op, s.m, s.n, s.k, prec};
    for (const auto& e : entries) {
      // A sweep (--gemm-tile) runs a tunable kernel once per configuration
      // asked for, the name saying which (tile:<name>); else the table chooses.
      std::vector<std::pair<int, std::string>> tiles{{-1, ""}};
      if (const auto* names = tile_flag ? tunable_tiles(e.name, type) : nullptr) {
        tiles.clear();
        for (std::size_t i = 0; i < names->size(); ++i)
          if (std::find(swept.begin(), swept.end(), (*names)[i]) != swept.end())
            tiles.push_back({int(i), (*names)[i]});
      }
      for (const auto& [tile, tile_name] : tiles)
        for (auto k : entry_knobs(e, opt, threads, {})) {
          k.tile = tile;
          RunName name{"GEMM",
                       e.name,
                       {{"op", to_string(op)},
                        {"type", type},
                        {"M", std::to_string(p.m)},
                        {"N", std::to_string(p.n)},
                        {"K", std::to_string(p.k)}}};
          if (tile >= 0) name.args.push_back({"tile", tile_name});
          RegisterOptions ro;
          ro.axes = {{"M", double(p.m)}, {"N", double(p.n)}, {"K", double(p.k)}};
          // GFLOP/s reads against the GEMM ceiling of its precision.
          ro.rate = Rate{"GFLOPS", std::string("gemm_") + type};
          register_entry<gemm::Job<T>>(name, e, k, p, opt, ro, "M*N*K", double(p.m) * p.n * p.k);
        }
    }
  }
}

}  // namespace

const char* gemm::variant_of(Vendor v) { return v == Vendor::OpenBLAS ? "OpenBLAS" : "cuBLAS"; }

void register_gemm_instance(const RunName& name, gemm::Vendor vendor, bool f64, Knobs k,
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
        register_job(
            name, [entry, k, p, seed] { return std::make_unique<gemm::Job<T>>(*entry, k, p, seed); }, r);
        return;
      }
    throw std::logic_error("no GEMM variant " + variant);
  };
  if (f64)
    add(double{});
  else
    add(float{});
}

static void register_gemm(const Options& opt) {
  declare_counters();
  if (const auto* simd = opt.flag("--gemm-simd")) set_blocked_simd(parse_host_simd("--gemm-simd", *simd));
  const auto* given = opt.flag("--gemm-op");
  const auto ops = given ? parse_word_list("--gemm-op", *given, kOps) : kOps;
  const auto types =
      opt.precisions ? *opt.precisions : std::vector<std::string>{"f32", "f64", "tf32", "bf16"};
  for (const auto& o : ops) {
    Op op = parse_op(o);
    for (const auto& t : types) {
      if (t == "f32")
        register_type<float>(opt, op, "f32", registry<float>(), Precision::Native);
      else if (t == "f64")
        register_type<double>(opt, op, "f64", registry<double>(), Precision::Native);
      else if (t == "tf32")
        register_type<float>(opt, op, "tf32", tensor_registry(), Precision::TF32);
      else if (t == "bf16")
        register_type<float>(opt, op, "bf16", tensor_registry(), Precision::BF16);
    }
  }
}

// The run's context: which SIMD micro-kernel OMP.Blocked was built with.
static ContextLines gemm_context() { return {{"cpu_simd", gemm::to_string(gemm::blocked_simd())}}; }

static FlagSection gemm_flags() {
  return {"GEMM",
          {{"--gemm-shapes",
            "LIST",
            "GEMM shapes, comma-separated, each N (a cube) or MxNxK, e.g. --gemm-shapes=1000x1500x777,4096",
            [](const std::string& flag, const std::string& v) { parse_sizes(v, flag); },
            {"--sizes"}},
           {"--gemm-op",
            "LIST",
            "GEMM operations: AB (C=A*B), AtB (C=A^T*B), ABtC (D=A*B^T+C)",
            [](const std::string& flag, const std::string& v) { parse_word_list(flag, v, kOps); },
            {"--op"}},
           {"--gemm-tile",
            "LIST",
            "tuning sweeps (ci/tune-gemm): run CUDA.Pipelined and CUDA.DMMA once per tile configuration, "
            "'all' or names (run names gain tile:<name>); without it the tuned table chooses",
            [](const std::string& flag, const std::string& v) { parse_tiles(flag, v); },
            {}},
           {"--gemm-simd",
            "ISA",
            "the instruction set of OMP.Blocked's micro-kernel: baseline, avx2 (with FMA) or avx512; default "
            "the widest this CPU has (the context key cpu_simd says which ran)",
            [](const std::string& flag, const std::string& v) { parse_host_simd(flag, v); },
            {}}},
          nullptr};
}

Family gemm_family() { return {"GEMM", gemm_flags, register_gemm, gemm_context}; }

}  // namespace pb
