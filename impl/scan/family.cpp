// Scan axes, declared once (core/axes.hpp): type x elements x segment, then
// variant x (threads).
// Run names: Scan/<variant>/type:<u32|f32>/n:<elements>/segment:<none|mean length>[/threads:<t>]
// Counters: elements_per_second, and GBps counting each element read once
// and written once (and each key read once, segmented), the least a scan
// moves: read against the device copy ceiling.
#include "core/family.hpp"

#include <mutex>

#include "core/axes.hpp"
#include "core/registrar.hpp"
#include "scan/registry.hpp"

namespace pb {
namespace {
using namespace scan;

const AxisSet& axes() {
  static const AxisSet a{
      "Scan",
      {Axis::choice<Type>("type", {{"u32", Type::U32}, {"f32", Type::F32}})
           .help("element types: u32 (wrapping sums, checked exactly), f32 (checked to a bound)")
           .values({"u32", "f32"}, {"u32", "f32"}, {"u32", "f32"}),
       Axis::count("elements", 1, kMaxElements)
           .key("n")
           .help("elements, each N or 2^K, at most 2^30")
           .counter()
           .values({"1000", "65537"}, {"2^20", "2^24", "2^28"}, {"2^16", "2^20", "2^24", "2^28", "2^30"}),
       // 0: none, one scan over all.
       Axis::of<std::int64_t>(
           "segment",
           [](const std::string& flag, const std::string& item) {
             return item == "none" ? std::int64_t(0) : parse_counts(flag, item, kMaxElements).at(0);
           },
           [](const std::int64_t& v) { return v == 0 ? std::string("none") : std::to_string(v); })
           .help("none (one scan over all) or the mean segment length of a segmented scan (segments of "
                 "random lengths)")
           .values({"none", "7"}, {"none", "1000"}, {"none", "1000"})},
      [](const Point& p) -> std::string {
        if (p.get<std::int64_t>("segment") > p.get<std::int64_t>("elements"))
          return "a mean segment length above the elements";
        return "";
      }};
  return a;
}

Problem problem_of(const Point& pt) {
  Problem p;
  p.type = pt.get<Type>("type");
  p.n = pt.get<std::int64_t>("elements");
  p.segment = pt.get<std::int64_t>("segment");
  return p;
}

// One problem's inputs and reference, shared by every variant that runs it.
class Case : public CaseBase<Problem, Inputs, Reference> {
 public:
  static bool same_inputs(const Problem& a, const Problem& b) {
    return a.type == b.type && a.n == b.n && a.segment == b.segment;
  }
  Case(const Problem& p, std::uint64_t base_seed) : CaseBase(p, base_seed, make_inputs(p, base_seed)) {}
  const Reference& ref() {
    return reference_once([&](Reference& r) { r = reference(problem, inputs); });
  }
};

class ScanJob final : public VariantJob<scan::Entry, scan::Variant, Problem, Case> {
 public:
  using VariantJob::VariantJob;
  Check check() override {
    Output out;
    variant_->result(out);
    return verdict([&] { return verify(problem_, case_->inputs, case_->ref(), out); });
  }
  Work work() const override {
    Work w;
    w.items = double(problem_.n);
    w.bytes = w.items * (problem_.segmented() ? 12.0 : 8.0);
    return w;
  }
};

void register_scan(const Options& opt) {
  axes().declare_counters();
  const auto threads = opt.threads ? *opt.threads : default_thread_axis();
  for (const Point& pt : axes().points(opt)) {
    const Problem p = problem_of(pt);
    for (const auto& e : registry())
      for (const auto& k : entry_knobs(e, opt, threads, {})) {
        RegisterOptions ro;
        ro.unit = benchmark::kMicrosecond;
        ro.axes = axes().counters(pt);
        ro.rate = Rate{"GBps", "bandwidth"};
        ro.throughput = Throughput().items("elements").bytes(Show::Rate);
        register_entry<ScanJob>(axes().name(pt, e.name), e, k, p, opt, ro, "n", double(p.n));
      }
  }
}

FlagSection scan_flags() { return axes().flags(); }

}  // namespace

Family scan_family() { return {"Scan", scan_flags, register_scan, nullptr}; }

}  // namespace pb
