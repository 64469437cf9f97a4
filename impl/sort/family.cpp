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

const std::vector<std::string> kKeys{"u32", "f32"}, kPayloads{"keys", "pairs"}, kOrders{"asc", "desc"},
    kDists{"uniform", "sorted", "reversed", "few-unique", "all-equal"};

// The axes, declared once (core/axes.hpp), in the order the cross product
// turns them (the total outermost, the payload innermost: keys-only and
// pairs share one cached input and reference); run names read key,
// payload, order, dist, n, length. A length is "all" (one array of the
// total) or must divide the total: a given length runs with every total it
// divides, and one that divides none is a usage error.
const AxisSet& axes() {
  static const AxisSet a{
      "Sort",
      {{"elements",
        "n",
        "total keys, each N or 2^K, e.g. 2^24,1000003",
        {"4096", "10007"},
        {"2^16", "2^20", "2^24", "2^26"},
        {"2^10", "2^12", "2^14", "2^16", "2^18", "2^20", "2^22", "2^24", "2^26", "2^28"},
        counts(1, kMaxElements),
        true,
        {},
        {},
        {"--elements"}},
       {"length",
        "length",
        "keys per array (batch = total / length; must divide the total), N, 2^K or all (one array); the "
        "networks sweep it",
        {"all", "64"},
        {"all", "1024"},
        {"all", "64", "1024", "2^16", "2^20"},
        [](const std::string& flag, const std::string& item) {
          return item == "all" ? item : counts(1, kMaxElements)(flag, item);
        },
        true,
        {},
        [](const std::string& v, const Point& raw) { return v == "all" ? raw["elements"] : v; },
        {"--length"}},
       {"key",
        "key",
        "u32, f32 (f32: -0.0 sorts equal to +0.0)",
        {"u32", "f32"},
        {"u32", "f32"},
        {"u32", "f32"},
        words(kKeys),
        false,
        {},
        {},
        {"--key"}},
       {"order", "order", "asc, desc", {"asc"}, {"asc"}, {"asc"}, words(kOrders), false, {}, {}, {"--order"}},
       {"dist",
        "dist",
        "uniform, sorted, reversed, few-unique, all-equal",
        {"uniform"},
        {"uniform"},
        {"uniform"},
        words(kDists)},
       {"payload",
        "payload",
        "keys (keys only), pairs (32-bit values move with keys)",
        {"keys", "pairs"},
        {"keys", "pairs"},
        {"keys", "pairs"},
        words(kPayloads),
        false,
        {},
        {},
        {"--payload"}}},
      [](const Point& p) -> std::string {
        const std::int64_t n = p.integer("elements"), l = p.integer("length");
        if (l > n || n % l != 0)
          return "--sort-length: " + p["length"] + " does not divide the total " + p["elements"];
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
    p.n = pt.integer("elements"), p.length = pt.integer("length");
    p.key = parse_key(pt["key"]), p.payload = parse_payload(pt["payload"]);
    p.order = parse_order(pt["order"]), p.dist = parse_dist(pt["dist"]);
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
