// Sorting axes, declared as data: total x array length x key x order x
// distribution x payload, then variant x (threads | block).
// Run names: Sort/<variant>/key:<u32|f32>/payload:<keys|pairs>/order:<asc|desc>/
//            dist:<d>/n:<total>/length:<keys per array>[/threads:<t>|/block:<b>]
// Counters: elements_per_second, and GBps counting each key (and value) read
// once and written once, the least any sort moves (for fraction-of-ceiling).
#include "core/family.hpp"

#include "core/axes.hpp"
#include "core/registrar.hpp"
#include "sort/registry.hpp"

namespace pb {
namespace {
using namespace sort;

// The axes, declared once (core/axes.hpp), in the order the cross product
// turns them (the total outermost, the payload innermost: keys-only and
// pairs share one cached input and reference); run names read key,
// payload, order, dist, n, length. A length is "all" (one array of the
// total) or must divide the total: a given length runs with every total it
// divides, and one that divides none is a usage error.
const AxisSet& axes() {
  static const AxisSet a{
      "Sort",
      {Axis::count("elements", 1, kMaxElements)
           .key("n")
           .help("total keys, each N or 2^K, e.g. 2^24,1000003")
           .counter()
           .values({"4096", "10007"}, {"2^16", "2^20", "2^24", "2^26"},
                   {"2^10", "2^12", "2^14", "2^16", "2^18", "2^20", "2^22", "2^24", "2^26", "2^28"})
           .old("--elements"),
       // 0: all, resolved to the point's total.
       Axis::of<std::int64_t>(
           "length",
           [](const std::string& flag, const std::string& item) {
             return item == "all" ? std::int64_t(0) : parse_counts(flag, item, kMaxElements).at(0);
           },
           [](const std::int64_t& v) { return v == 0 ? std::string("all") : std::to_string(v); })
           .help("keys per array (batch = total / length; must divide the total), N, 2^K or all (one array); "
                 "the "
                 "networks sweep it")
           .counter()
           .values({"all", "64"}, {"all", "1024"}, {"all", "64", "1024", "2^16", "2^20"})
           .resolve<std::int64_t>([](const std::int64_t& v, const Point& raw) {
             return v == 0 ? raw.get<std::int64_t>("elements") : v;
           })
           .old("--length"),
       Axis::choice<Key>("key", {{"u32", Key::U32}, {"f32", Key::F32}})
           .help("u32, f32 (f32: -0.0 sorts equal to +0.0)")
           .values({"u32", "f32"}, {"u32", "f32"}, {"u32", "f32"})
           .old("--key"),
       Axis::choice<Order>("order", {{"asc", Order::Asc}, {"desc", Order::Desc}})
           .help("asc, desc")
           .values({"asc"}, {"asc"}, {"asc"})
           .old("--order"),
       Axis::choice<Dist>("dist", {{"uniform", Dist::Uniform},
                                   {"sorted", Dist::Sorted},
                                   {"reversed", Dist::Reversed},
                                   {"few-unique", Dist::FewUnique},
                                   {"all-equal", Dist::AllEqual}})
           .help("uniform, sorted, reversed, few-unique, all-equal")
           .values({"uniform"}, {"uniform"}, {"uniform"}),
       Axis::choice<Payload>("payload", {{"keys", Payload::Keys}, {"pairs", Payload::Pairs}})
           .help("keys (keys only), pairs (32-bit values move with keys)")
           .values({"keys", "pairs"}, {"keys", "pairs"}, {"keys", "pairs"})
           .old("--payload")},
      [](const Point& p) -> std::string {
        const std::int64_t n = p.get<std::int64_t>("elements"), l = p.get<std::int64_t>("length");
        if (l > n || n % l != 0)
          return "--sort-length: " + p.text("length") + " does not divide the total " + p.text("elements");
        return "";
      },
      {"key", "payload", "order", "dist", "elements", "length"}};
  return a;
}

}  // namespace

static void register_sort(const Options& opt) {
  axes().declare_counters();
  const auto threads = opt.threads ? *opt.threads : default_thread_axis();
  const std::vector<int> default_blocks = opt.profile == Profile::Smoke ? std::vector<int>{128}
                                          : opt.profile == Profile::Full
                                              ? std::vector<int>{128, 256, 512, 1024}
                                              : std::vector<int>{256, 1024};
  const auto blocks = opt.blocks ? *opt.blocks : default_blocks;
  for (const Point& pt : axes().points(opt)) {
    Problem p;
    p.n = pt.get<std::int64_t>("elements"), p.length = pt.get<std::int64_t>("length");
    p.key = pt.get<Key>("key"), p.payload = pt.get<Payload>("payload");
    p.order = pt.get<Order>("order"), p.dist = pt.get<Dist>("dist");
    validate(p);  // UsageError before anything runs
    for (const auto& e : registry()) {
      if (p.length != p.n && !e.traits.batched) continue;  // batches are the networks' axis
      for (const auto& k : entry_knobs(e, opt, threads, blocks)) {
        RegisterOptions ro;
        ro.unit = benchmark::kMicrosecond;
        ro.axes = axes().counters(pt);
        ro.rate = Rate{"GBps", "bandwidth"};
        ro.throughput = Throughput().items("elements").bytes(Show::Rate);
        register_entry<sort::Job>(axes().name(pt, e.name), e, k, p, opt, ro, "n", double(p.n));
      }
    }
  }
}

static FlagSection sort_flags() { return axes().flags(); }

Family sort_family() { return {"Sort", sort_flags, register_sort, nullptr}; }

}  // namespace pb
