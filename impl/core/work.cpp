#include "core/work.hpp"

#include "core/meta.hpp"

namespace pb {
namespace {
bool rated(Show s) { return s == Show::Rate || s == Show::RateAndModel; }
bool modelled(Show s) { return s == Show::Model || s == Show::RateAndModel; }
}  // namespace

void Throughput::declare() const {
  if (!items_.empty()) declare_counter(items_ + "_per_second", CounterKind::Rate, "1/s");
  if (rated(bytes_)) declare_counter("GBps", CounterKind::Rate, "GB/s");
  if (modelled(bytes_)) declare_counter("bytes_per_" + per_, CounterKind::Model, "B");
  if (rated(flops_)) declare_counter("GFLOPS", CounterKind::Rate, "GFLOP/s");
  if (modelled(flops_)) declare_counter("flops_per_" + per_, CounterKind::Model, "flop");
}

void Throughput::add(Counters& out, const Work& w, double seconds_per_run) const {
  if (!items_.empty())
    out.emplace_back(items_ + "_per_second", per_second(w.items * w.units, seconds_per_run));
  if (rated(bytes_)) out.emplace_back("GBps", per_second(w.bytes * w.units, seconds_per_run) * 1e-9);
  if (modelled(bytes_)) out.emplace_back("bytes_per_" + per_, w.bytes);
  if (rated(flops_)) out.emplace_back("GFLOPS", per_second(w.flops * w.units, seconds_per_run) * 1e-9);
  if (modelled(flops_)) out.emplace_back("flops_per_" + per_, w.flops);
}

}  // namespace pb
