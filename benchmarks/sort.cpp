// Sorting axes: total x array length x key x payload x order x distribution x
// variant x (threads | block).
// Run names: Sort/<variant>/key:<u32|f32>/payload:<keys|pairs>/order:<asc|desc>/
//            dist:<d>/n:<total>/length:<keys per array>[/threads:<t>|/block:<b>]
// Counters: elements_per_second, and GBps counting each key (and value) read
// once and written once, the least any sort moves (for fraction-of-ceiling).
#include <cmath>

#include "benchmarks/families.hpp"
#include "benchmarks/variant_job.hpp"
#include "core/registrar.hpp"
#include "sort/reference.hpp"
#include "sort/registry.hpp"

namespace pb {
namespace {
using namespace sort;

std::vector<std::int64_t> pow2s(int lo, int hi, int step) {
  std::vector<std::int64_t> out;
  for (int e = lo; e <= hi; e += step) out.push_back(std::int64_t(1) << e);
  return out;
}

std::vector<std::int64_t> default_totals(Profile p) {
  switch (p) {
    case Profile::Smoke: return {std::int64_t(1) << 12, 10007};
    case Profile::Default: return {std::int64_t(1) << 16, std::int64_t(1) << 20, std::int64_t(1) << 24,
                                   std::int64_t(1) << 26};
    case Profile::Full: return pow2s(10, 28, 2);
  }
  return {};
}

// Batched lengths the networks sweep besides one whole array.
std::vector<std::int64_t> default_lengths(Profile p) {
  switch (p) {
    case Profile::Smoke: return {64};
    case Profile::Default: return {1024};
    case Profile::Full: return {64, 1024, std::int64_t(1) << 16, std::int64_t(1) << 20};
  }
  return {};
}

class SortJob final : public VariantJob<Entry, Variant, Problem, Case, &shared_case> {
 public:
  using VariantJob::VariantJob;
  void reset() override { variant_->reset(); }
  Check check() override {
    Output out;
    variant_->result(out);
    return verify(problem_, case_->inputs, case_->ref(), out, variant_->stable());
  }
  void report(Counters& out, double seconds, std::int64_t runs) override {
    const double per_run = runs ? seconds / double(runs) : 0.0;
    const double n = double(problem_.n);
    out.emplace_back("elements_per_second", per_run > 0 ? n / per_run : 0.0);
    const double bytes = 2.0 * n * (problem_.pairs() ? 8.0 : 4.0);
    out.emplace_back("GBps", per_run > 0 ? bytes / per_run * 1e-9 : 0.0);
  }
};

template <class E, class F>
std::vector<E> words(const std::optional<std::vector<std::string>>& given, std::vector<E> fallback, F parse) {
  if (!given) return fallback;
  std::vector<E> out;
  for (const auto& w : *given) out.push_back(parse(w));
  return out;
}

}  // namespace

void register_sort(const Options& opt) {
  declare_counter("elements_per_second", CounterKind::Rate, "1/s");
  declare_counter("GBps", CounterKind::Rate, "GB/s");
  declare_counter("n", CounterKind::Problem);
  declare_counter("length", CounterKind::Problem);
  const auto totals = opt.elements ? *opt.elements : default_totals(opt.profile);
  const auto threads = opt.threads ? *opt.threads : default_thread_axis();
  const std::vector<int> default_blocks = opt.profile == Profile::Smoke  ? std::vector<int>{128}
                                          : opt.profile == Profile::Full ? std::vector<int>{128, 256, 512, 1024}
                                                                         : std::vector<int>{256, 1024};
  const auto blocks = opt.blocks ? *opt.blocks : default_blocks;
  const auto keys = words<Key>(opt.keys, {Key::U32, Key::F32}, parse_key);
  const auto payloads = words<Payload>(opt.payloads, {Payload::Keys, Payload::Pairs}, parse_payload);
  const auto orders = words<Order>(opt.orders, {Order::Asc}, parse_order);
  const auto dists = words<Dist>(opt.sort_dists, {Dist::Uniform}, parse_dist);
  const int prof = int(opt.profile);

  for (const std::int64_t n : totals) {
    // Lengths: the user's (each must divide every total), or one whole array
    // plus the profile's batched lengths that divide this total.
    std::vector<std::int64_t> lengths;
    if (opt.lengths) {
      for (std::int64_t l : *opt.lengths) {
        if (l == 0) l = n;
        if (l > n || n % l != 0)
          throw UsageError("--length: " + std::to_string(l) + " does not divide the total " + std::to_string(n) +
                           " (each length must divide every --elements value)");
        lengths.push_back(l);
      }
    } else {
      lengths.push_back(n);
      for (std::int64_t l : default_lengths(opt.profile))
        if (l < n && n % l == 0) lengths.push_back(l);
    }
    // Payload innermost: keys-only and pairs share one cached input and reference.
    for (const std::int64_t length : lengths)
      for (const Key key : keys)
        for (const Order order : orders)
          for (const Dist dist : dists)
            for (const Payload payload : payloads) {
              Problem p;
              p.n = n, p.length = length, p.key = key, p.payload = payload, p.order = order, p.dist = dist;
              validate(p);  // UsageError before anything runs
              for (const auto& e : registry()) {
                if (length != n && !e.batched) continue;  // batches are the networks' axis
                for (const auto& k : knob_values(e.knob, threads, blocks)) {
                  RunName name{"Sort",
                               e.name,
                               {{"key", to_string(key)},
                                {"payload", to_string(payload)},
                                {"order", to_string(order)},
                                {"dist", to_string(dist)},
                                {"n", std::to_string(n)},
                                {"length", std::to_string(length)}},
                               "",
                               ""};
                  RegisterOptions ro;
                  ro.unit = benchmark::kMicrosecond;
                  ro.flush_l2 = opt.flush_l2;
                  ro.axes = {{"n", double(n)}, {"length", double(length)}};
                  add_knob(e.knob, k, name, ro);
                  ro.excluded = excluded_by_profile(opt.profile, e.name, "n", double(n), e.max_log2[prof]);
                  ro.role = e.name == std::string(kBaseline) ? Role::Baseline : Role::Variant;
                  ro.backend = e.backend;
                  ro.rate = Rate{"GBps", "bandwidth"};
                  ro.library = e.library;
                  const Entry* entry = &e;
                  const std::uint64_t seed = opt.seed;
                  register_job(
                      name, [entry, k, p, seed] { return std::make_unique<SortJob>(*entry, k, p, seed); }, ro);
                }
              }
            }
  }
}

}  // namespace pb
