#pragma once
// The skeleton every family shares: its registry entries, the per-profile
// caps on slow variants, the one-problem cache of inputs and reference, and
// the Job that binds a registry entry to a problem (the family adds check(),
// work() and, for counters other than the work's, report()).
//
// A family is a table of entries plus its kernels:
//
//   impl/<family>/registry.cpp   THE list: one Entry::Line per variant, its
//                                factory declared just above the list
//   impl/<family>/registry.hpp   the registry; where the family's tests drive
//                                them, also the Case (one problem's inputs and
//                                reference) and the Job (VariantJob + check()
//                                + work()); Scan keeps both in family.cpp
//   impl/<family>/family.cpp     axes (an AxisSet), flags (a FlagSection) and
//                                registration (its Throughput and run-name
//                                args; register_entry does the rest)
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/code.hpp"
#include "core/job.hpp"
#include "core/knobs.hpp"
#include "core/mpi_family.hpp"
#include "core/options.hpp"
#include "core/registrar.hpp"

namespace pb {

// log2 of the largest work (the family's measure: M*N*K, N*D*K, n ...) that a
// variant runs in each profile, so a slow variant's sweep stays in minutes.
// The caps hold for command-line sizes too; --profile=full lifts them to its
// own.
struct WorkCap {
  static constexpr int kNone = 1023;
  int smoke = kNone, normal = kNone, full = kNone;  // Profile::Smoke, Default, Full
  int log2(Profile p) const { return p == Profile::Smoke ? smoke : p == Profile::Default ? normal : full; }
};
inline constexpr WorkCap kNoCap{};

struct NoTraits {};

// The longest a call of a CPU instance may take in each profile (seconds,
// 0: no limit), judged from the variant's own speed on this machine at a
// smaller size of the same sweep (RegisterOptions::speed_key): the default
// profile's sweep then stays in minutes on a laptop and reaches the sizes a
// fast host can afford. The smoke profile keeps its fixed WorkCaps alone.
inline double call_budget(Profile p) { return p == Profile::Default ? 3.0 : 0.0; }

// The run name without its problem-size arguments (those that are also axes):
// the instances that share one speed.
inline std::string speed_key(const RunName& name, const Counters& axes) {
  RunName key{name.family, name.variant, {}};
  for (const auto& arg : name.args) {
    bool size = false;
    for (const auto& axis : axes) size = size || axis.first == arg.first;
    if (!size) key.args.push_back(arg);
  }
  return key.format();
}

// Variants written but not yet run on a GPU (say, on a machine without one) join
// their family's registry only when PARBENCH_PREVIEW=1: a kernel that faults
// would take the CUDA context, and every GPU entry after it, with it. A
// registry appends them after its list (none wait now):
//   if (preview_variants()) v.push_back(Line{"CUDA.New"}.cuda()...);
inline bool preview_variants() {
  const char* v = std::getenv("PARBENCH_PREVIEW");
  return v && std::string(v) == "1";
}

// One line of a family's registry. VariantT is the family's variant
// interface; Traits what else a family needs to know of a variant before
// building it (sort: whether it sorts batches). A registry writes a line
// with named setters (Entry::Line), never positionally:
//
//   using Line = Entry::Line;
//   Line{"OMP"}.threads().cap(kCpu).code("impl/scan/cpu/scan.cpp")
//       .factory([](const Knobs& k) { return make_omp(k.threads); })
template <class VariantT, class Traits = NoTraits>
struct Entry {
  using Factory = std::function<std::unique_ptr<VariantT>(const Knobs&)>;
  // A line named after its variant (the run name's), completed by its
  // setters; it becomes an Entry where the list takes it.
  class Line;

  const char* name = "";
  Backend backend = Backend::Cpu;
  Knob knob = Knob::None;
  std::vector<int> blocks;  // Knob::Block: the block sizes it runs by default (empty: the family's)
  WorkCap cap = kNoCap;
  // Role::Baseline: the variant speedups are measured from (one per family;
  // the JSON marks it); Role::Variant otherwise.
  Role role = Role::Variant;
  // The source that defines the variant's factory, from the repository root
  // ("impl/gemm/cpu/naive.cpp"): the JSON's "code" fingerprints it and the
  // code it calls (core/code.hpp). A test checks that every variant file the
  // registry calls is some line's code.
  Code code;
  Factory make;
  const char* library = "";  // the external library its timed run calls (RegisterOptions::library)
  Traits traits = {};
};

// The setters of a registry line. Unset fields keep Entry's defaults: a CPU
// variant with no knob, no cap, Role::Variant, no library. The line becomes
// its Entry where a std::vector<Entry> takes it; one without a factory or a
// code is a programming error (std::logic_error at start-up).
template <class VariantT, class Traits>
class Entry<VariantT, Traits>::Line {
 public:
  explicit Line(const char* name) { e_.name = name; }
  Line& on(Backend b) {
    e_.backend = b;
    return *this;
  }
  Line& cuda() { return on(Backend::Cuda); }
  // The knob its instances sweep: one per thread count, block size (`blocks`:
  // its own defaults, empty: the family's), 2-D block shape or GPU count.
  Line& knob(Knob k, std::vector<int> blocks = {}) {
    e_.knob = k;
    e_.blocks = std::move(blocks);
    return *this;
  }
  Line& threads() { return knob(Knob::Threads); }
  Line& blocks(std::vector<int> own = {}) { return knob(Knob::Block, std::move(own)); }
  Line& cap(const WorkCap& c) {
    e_.cap = c;
    return *this;
  }
  Line& role(Role r) {
    e_.role = r;
    return *this;
  }
  Line& code(Code c) {
    e_.code = std::move(c);
    return *this;
  }
  Line& factory(Factory f) {
    e_.make = std::move(f);
    return *this;
  }
  Line& library(const char* l) {
    e_.library = l;
    return *this;
  }
  Line& traits(const Traits& t) {
    e_.traits = t;
    return *this;
  }
  operator Entry() const {
    if (!e_.make || e_.code.sources.empty())
      throw std::logic_error(std::string("registry line ") + e_.name + ": a factory and a code");
    return e_;
  }

 private:
  Entry e_;
};

// Why the profile leaves out an instance whose `measure` is `work`; empty when
// it runs.
inline std::string excluded_by_profile(Profile p, const std::string& variant, const WorkCap& cap,
                                       const char* measure, double work) {
  const int cap_log2 = cap.log2(p);
  if (cap_log2 >= WorkCap::kNone || work <= std::ldexp(1.0, cap_log2)) return {};
  return std::string("size excluded by profile '") + to_string(p) + "': " + variant + " runs " + measure +
         " <= 2^" + std::to_string(cap_log2) + " (use --profile=full)";
}

// One problem's inputs and its reference, shared by every variant that runs
// it (shared_case below keeps the last one). The reference is built once, on
// first use, whichever thread asks first: a variant that is unsupported never
// pays for it. A family's Case derives from it, adding same_inputs() and an
// accessor that hands its computation to reference_once().
template <class ProblemT, class InputsT, class RefT>
class CaseBase {
 public:
  CaseBase(const ProblemT& p, std::uint64_t base_seed, InputsT in)
      : problem(p), seed(base_seed), inputs(std::move(in)) {}
  const ProblemT problem;
  const std::uint64_t seed;
  const InputsT inputs;

 protected:
  template <class Build>
  const RefT& reference_once(Build&& build) {
    std::call_once(once_, [&] { build(ref_); });
    return ref_;
  }

 private:
  std::once_flag once_;
  RefT ref_;
};

// The Case (inputs, and the reference built on first use) of (problem, seed),
// reusing the previous one when CaseT::same_inputs says the two problems have
// the same inputs and reference. Instances are registered problem by problem,
// so one cached case means inputs are generated and the reference computed
// once per problem. One cache per CaseT (a function template's statics).
template <class CaseT, class ProblemT>
std::shared_ptr<CaseT> shared_case(const ProblemT& p, std::uint64_t seed) {
  static std::mutex mu;
  static std::shared_ptr<CaseT> last;
  std::lock_guard<std::mutex> lock(mu);
  if (last && last->seed == seed && CaseT::same_inputs(last->problem, p)) return last;
  last.reset();  // free the old inputs before generating new ones
  last = std::make_shared<CaseT>(p, seed);
  return last;
}

// The Job every family registers: one registry entry's variant, built with
// its knob, bound to a problem and to the shared Case. Families add check()
// and report(), and reset() where their variants have one.
template <class EntryT, class VariantT, class ProblemT, class CaseT>
class VariantJob : public Job {
 public:
  VariantJob(const EntryT& e, Knobs k, ProblemT p, std::uint64_t seed)
      : entry_(e), knobs_(k), problem_(p), seed_(seed) {}
  Backend backend() const override { return entry_.backend; }
  Support supports() override {
    variant_ = entry_.make(knobs_);
    return variant_->supports(problem_);
  }
  void prepare() override {
    case_ = shared_case<CaseT>(problem_, seed_);
    variant_->prepare(problem_, case_->inputs);
  }
  void run() override { variant_->run(); }
  void* cuda_stream() override { return variant_->stream(); }

 protected:
  // A family's check() returns verdict(its comparison): for an MPI variant,
  // whose ranks all hold the result, rank 0 alone compares and every rank gets
  // its verdict (core/mpi_family.hpp), so no family writes MPI code for it.
  Check verdict(const std::function<Check()>& compare) const {
    return collective(entry_.backend) ? mpi::root_verdict(compare) : compare();
  }

  const EntryT& entry_;
  Knobs knobs_;
  ProblemT problem_;
  std::uint64_t seed_;
  std::unique_ptr<VariantT> variant_;
  std::shared_ptr<CaseT> case_;
};

// The knob values of a registry entry: --threads / --block when given, else
// the default thread axis and the entry's own blocks (or the family's).
template <class EntryT>
std::vector<Knobs> entry_knobs(const EntryT& e, const Options& opt, const std::vector<int>& threads,
                               const std::vector<int>& family_blocks) {
  const auto& blocks = opt.blocks ? *opt.blocks : e.blocks.empty() ? family_blocks : e.blocks;
  return knob_values(e.knob, threads, blocks);
}

// Registers one instance of a registry entry: its knob in the run name and
// counters, the profile's cap on `work` (the family's `measure`), role,
// backend and library from the entry, and a JobT (entry, knobs, problem, seed).
// The family fills in the name's axes, ro's unit, axes and rate.
template <class JobT, class EntryT, class ProblemT>
void register_entry(RunName name, const EntryT& e, const Knobs& k, const ProblemT& p, const Options& opt,
                    RegisterOptions ro, const char* measure, double work) {
  const Counters sizes = ro.axes;  // the family's problem axes, before the knob's
  if (collective(e.backend)) mpi::add_ranks(name, ro);
  add_knob(e.knob, k, name, ro);
  if (e.backend == Backend::Cpu && call_budget(opt.profile) > 0) {
    ro.speed_key = speed_key(name, sizes);  // the knob (threads) stays in the key
    ro.work = work, ro.measure = measure, ro.call_budget = call_budget(opt.profile);
    ro.profile = to_string(opt.profile);
  }
  ro.flush_l2 = opt.flush_l2;
  ro.excluded = excluded_by_profile(opt.profile, e.name, e.cap, measure, work);
  ro.role = e.role;
  ro.backend = e.backend;
  ro.library = e.library;
  ro.code = e.code;
  const EntryT* entry = &e;
  const std::uint64_t seed = opt.seed;
  register_job(
      name, [entry, k, p, seed] { return std::make_unique<JobT>(*entry, k, p, seed); }, ro);
}

// A family as the bench driver sees it (the build generates the list from
// benchmarks/families.cpp.in, one line per parbench_add_family):
// its flags (nullptr: none of its own), the registration of its instances,
// which throws UsageError on an axis value it cannot accept, before anything
// runs, and what it adds to the run's context (the build of a library its
// variants call: GEMM's SIMD kernel, k-means' NCCL; nullptr: nothing), so
// the driver knows no family's libraries. Each family defines one, in
// impl/<family>/family.cpp.
using ContextLines = std::vector<std::pair<std::string, std::string>>;
struct Family {
  const char* name;
  FlagSection (*flags)();
  void (*register_instances)(const Options&);
  ContextLines (*context)();
};

// The registry entry named `name`, or nullptr.
template <class EntryT>
const EntryT* find_entry(const std::vector<EntryT>& list, const std::string& name) {
  for (const auto& e : list)
    if (name == e.name) return &e;
  return nullptr;
}

}  // namespace pb
