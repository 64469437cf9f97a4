// GEMM axes: operation x precision x shape x variant x (threads | block).
// Run names: GEMM/<variant>/op:<op>/type:<f32|f64>/M:<m>/N:<n>/K:<k>[/threads:<t>|/block:<b>]
#include <cmath>

#include "benchmarks/families.hpp"
#include "benchmarks/variant_job.hpp"
#include "core/registrar.hpp"
#include "gemm/case.hpp"
#include "gemm/registry.hpp"

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

// log2 of the largest M*N*K a slow CPU variant runs in each profile (cost 1: vectorised
// loop, ~5-10 GFLOP/s a core; cost 2: textbook loop, ~1 GFLOP/s): about a
// second per call at the cap, so a sweep stays in minutes. The caps hold for
// --sizes too: a 4096^3 textbook loop would take minutes a call.
int work_cap_log2(int cost, Profile p) {
  if (cost == 0) return 1023;  // no cap
  const int exp2[2][3] = {{24, 30, 33}, {21, 27, 30}};  // [cost-1][smoke, default, full]
  return exp2[cost - 1][int(p)];
}

template <class T>
class GemmJob final : public VariantJob<Entry<T>, Variant<T>, Problem, Case<T>, &shared_case<T>> {
 public:
  using VariantJob<Entry<T>, Variant<T>, Problem, Case<T>, &shared_case<T>>::VariantJob;
  Check check() override {
    std::vector<T> out;
    this->variant_->result(out);
    return this->case_->oracle().check(out);
  }
  void report(Counters& out, double seconds, std::int64_t iterations) override {
    const double flops = this->problem_.flops();
    out.emplace_back("GFLOPS", seconds > 0 ? flops * iterations / seconds * 1e-9 : 0.0);
    out.emplace_back("flops_per_call", flops);
  }
};

void declare_counters() {
  declare_counter("GFLOPS", CounterKind::Rate, "GFLOP/s");
  declare_counter("flops_per_call", CounterKind::Model, "flop");
  for (const char* dim : {"M", "N", "K"}) declare_counter(dim, CounterKind::Problem);
}

// Role, device and rate of a GEMM instance: GFLOP/s reads against the GEMM
// ceiling of its precision.
void describe(RegisterOptions& ro, const std::string& variant, Backend backend, const std::string& type) {
  ro.role = variant == kBaseline ? Role::Baseline : Role::Variant;
  ro.backend = backend;
  ro.rate = Rate{"GFLOPS", type == "f64" ? "gemm_f64" : "gemm_f32"};
}

template <class T>
void register_type(const Options& opt, Op op, const char* type) {
  const auto sizes = opt.sizes ? *opt.sizes : default_sizes(opt.profile);
  const auto threads = opt.threads ? *opt.threads : default_thread_axis();
  for (const auto& s : sizes) {
    Problem p{op, s.m, s.n, s.k};
    for (const auto& e : registry<T>()) {
      const auto knobs = knob_values(e.knob, threads, opt.blocks ? *opt.blocks : e.blocks);
      for (const auto& k : knobs) {
        RunName name{"GEMM",
                     e.name,
                     {{"op", to_string(op)},
                      {"type", type},
                      {"M", std::to_string(p.m)},
                      {"N", std::to_string(p.n)},
                      {"K", std::to_string(p.k)}},
                     "",
                     ""};
        RegisterOptions ro;
        ro.flush_l2 = opt.flush_l2;
        ro.axes = {{"M", double(p.m)}, {"N", double(p.n)}, {"K", double(p.k)}};
        add_knob(e.knob, k, name, ro);
        ro.excluded = excluded_by_profile(opt.profile, e.name, "M*N*K", double(p.m) * p.n * p.k,
                                          work_cap_log2(e.cost, opt.profile));
        describe(ro, e.name, e.backend, type);
        ro.library = e.library;
        const Entry<T>* entry = &e;
        const std::uint64_t seed = opt.seed;
        register_job(
            name, [entry, k, p, seed] { return std::make_unique<GemmJob<T>>(*entry, k, p, seed); }, ro);
      }
    }
  }
}

}  // namespace

void register_gemm_instance(const RunName& name, const std::string& variant, bool f64, Knobs k,
                            const gemm::Problem& p, std::uint64_t seed, const RegisterOptions& ro) {
  declare_counters();
  auto add = [&](auto tag) {
    using T = decltype(tag);
    for (const auto& e : registry<T>())
      if (variant == e.name) {
        const Entry<T>* entry = &e;
        // A Ceiling's GEMM calls the variant's library like the variant does.
        RegisterOptions r = ro;
        r.library = e.library;
        register_job(
            name, [entry, k, p, seed] { return std::make_unique<GemmJob<T>>(*entry, k, p, seed); }, r);
        return;
      }
    throw std::logic_error("no GEMM variant " + variant);
  };
  if (f64)
    add(double{});
  else
    add(float{});
}

void register_gemm(const Options& opt) {
  declare_counters();
  const auto ops = opt.ops ? *opt.ops : std::vector<std::string>{"AB", "AtB", "ABtC"};
  const auto types = opt.precisions ? *opt.precisions : std::vector<std::string>{"f32", "f64"};
  for (const auto& o : ops) {
    Op op = parse_op(o);
    for (const auto& t : types) {
      if (t == "f32")
        register_type<float>(opt, op, "f32");
      else
        register_type<double>(opt, op, "f64");
    }
  }
}

}  // namespace pb
