// Sorting axes: total x array length x key x payload x order x distribution x
// variant x (threads | block).
// Run names: Sort/<variant>/key:<u32|f32>/payload:<keys|pairs>/order:<asc|desc>/
//            dist:<d>/n:<total>/length:<keys per array>[/threads:<t>|/block:<b>]
// Counters: elements_per_second, and GBps counting each key (and value) read
// once and written once, the least any sort moves (for fraction-of-ceiling).
#include "core/family.hpp"

#include <cmath>

#include "core/registrar.hpp"
#include "sort/job.hpp"

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
    case Profile::Default:
      return {std::int64_t(1) << 16, std::int64_t(1) << 20, std::int64_t(1) << 24, std::int64_t(1) << 26};
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

const std::vector<std::string> kKeys{"u32", "f32"}, kPayloads{"keys", "pairs"}, kOrders{"asc", "desc"},
    kDists{"uniform", "sorted", "reversed", "few-unique", "all-equal"};

// A word axis: the flag's values (checked against `allowed`), or the fallback.
template <class E, class F>
std::vector<E> words(const Options& opt, const char* flag, const std::vector<std::string>& allowed,
                     std::vector<E> fallback, F parse) {
  const auto* given = opt.flag(flag);
  if (!given) return fallback;
  std::vector<E> out;
  for (const auto& w : parse_word_list(flag, *given, allowed)) out.push_back(parse(w));
  return out;
}

std::vector<std::int64_t> parse_totals(const std::string& flag, const std::string& v) {
  return parse_counts(flag, v, std::int64_t(1) << 30);
}
std::vector<std::int64_t> parse_lengths(const std::string& flag, const std::string& v) {
  return parse_counts(flag, v, std::int64_t(1) << 30, true);
}

FamilyFlag word_flag(const char* name, const char* help, const std::vector<std::string>* allowed,
                     const char* old) {
  return {name, "LIST", help,
          [allowed](const std::string& flag, const std::string& v) { parse_word_list(flag, v, *allowed); },
          old ? std::vector<std::string>{old} : std::vector<std::string>{}};
}

}  // namespace

static void register_sort(const Options& opt) {
  declare_counter("elements_per_second", CounterKind::Rate, "1/s");
  declare_counter("GBps", CounterKind::Rate, "GB/s");
  declare_counter("n", CounterKind::Problem);
  declare_counter("length", CounterKind::Problem);
  const auto* totals_flag = opt.flag("--sort-elements");
  const auto totals =
      totals_flag ? parse_totals("--sort-elements", *totals_flag) : default_totals(opt.profile);
  const auto* lengths_flag = opt.flag("--sort-length");
  const auto given_lengths =
      lengths_flag ? parse_lengths("--sort-length", *lengths_flag) : std::vector<std::int64_t>{};
  const auto threads = opt.threads ? *opt.threads : default_thread_axis();
  const std::vector<int> default_blocks = opt.profile == Profile::Smoke ? std::vector<int>{128}
                                          : opt.profile == Profile::Full
                                              ? std::vector<int>{128, 256, 512, 1024}
                                              : std::vector<int>{256, 1024};
  const auto blocks = opt.blocks ? *opt.blocks : default_blocks;
  const auto keys = words<Key>(opt, "--sort-key", kKeys, {Key::U32, Key::F32}, parse_key);
  const auto payloads =
      words<Payload>(opt, "--sort-payload", kPayloads, {Payload::Keys, Payload::Pairs}, parse_payload);
  const auto orders = words<Order>(opt, "--sort-order", kOrders, {Order::Asc}, parse_order);
  const auto dists = words<Dist>(opt, "--sort-dist", kDists, {Dist::Uniform}, parse_dist);

  for (const std::int64_t n : totals) {
    // Lengths: the user's (each must divide every total), or one whole array
    // plus the profile's batched lengths that divide this total.
    std::vector<std::int64_t> lengths;
    if (lengths_flag) {
      for (std::int64_t l : given_lengths) {
        if (l == 0) l = n;
        if (l > n || n % l != 0)
          throw UsageError("--sort-length: " + std::to_string(l) + " does not divide the total " +
                           std::to_string(n) + " (each length must divide every --sort-elements value)");
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
                if (length != n && !e.traits.batched) continue;  // batches are the networks' axis
                for (const auto& k : entry_knobs(e, opt, threads, blocks)) {
                  RunName name{"Sort",
                               e.name,
                               {{"key", to_string(key)},
                                {"payload", to_string(payload)},
                                {"order", to_string(order)},
                                {"dist", to_string(dist)},
                                {"n", std::to_string(n)},
                                {"length", std::to_string(length)}}};
                  RegisterOptions ro;
                  ro.unit = benchmark::kMicrosecond;
                  ro.axes = {{"n", double(n)}, {"length", double(length)}};
                  ro.rate = Rate{"GBps", "bandwidth"};
                  register_entry<sort::Job>(name, e, k, p, opt, ro, "n", double(n));
                }
              }
            }
  }
}

static FlagSection sort_flags() {
  return {"sorting",
          {{"--sort-elements",
            "LIST",
            "total keys, each N or 2^K, e.g. 2^24,1000003",
            [](const std::string& flag, const std::string& v) { parse_totals(flag, v); },
            {"--elements"}},
           {"--sort-length",
            "LIST",
            "keys per array (batch = total / length; must divide the total), N, 2^K or all (one array); the "
            "networks sweep it",
            [](const std::string& flag, const std::string& v) { parse_lengths(flag, v); },
            {"--length"}},
           word_flag("--sort-key", "u32, f32 (f32: -0.0 sorts equal to +0.0)", &kKeys, "--key"),
           word_flag("--sort-payload", "keys (keys only), pairs (32-bit values move with keys)", &kPayloads,
                     "--payload"),
           word_flag("--sort-order", "asc, desc", &kOrders, "--order"),
           word_flag("--sort-dist", "uniform, sorted, reversed, few-unique, all-equal", &kDists, nullptr)},
          nullptr};
}

Family sort_family() { return {"Sort", sort_flags, register_sort, nullptr}; }

}  // namespace pb
