#pragma once
// bench's reporters. The JSON one writes Google Benchmark's own JSON (the
// library's writer does the fields) plus parbench's schema (core/meta.hpp):
// a "parbench" object in every entry and the counter kinds in the context,
// and no NaN or Infinity (a value that is not finite is written as null).
// The console one hides unsupported entries on request and keeps the
// progress line (core/progress.hpp) out of the table.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

namespace pb {

// Entries a variant cannot run (no GPU, a shape it cannot do): by default one
// line per distinct reason with its count, after the table; every entry with
// Show; none with Hide. The JSON keeps every entry whatever this says.
enum class Unsupported { Summary, Show, Hide };

struct ConsoleSettings {
  bool color = false;
  bool tabular = false;
  Unsupported unsupported = Unsupported::Summary;
};

// Whether Google Benchmark marked a run skipped or failed: 1.8 has `skipped`,
// 1.7 `error_occurred` (call as run_flagged(run, 0)).
template <class R>
auto run_flagged(const R& r, int) -> decltype(r.skipped, bool()) {
  return r.skipped != decltype(r.skipped){};
}
template <class R>
bool run_flagged(const R& r, long) {
  return r.error_occurred;
}

// The display reporter for --benchmark_format=console|json|csv.
std::unique_ptr<benchmark::BenchmarkReporter> make_display_reporter(const std::string& format,
                                                                    const ConsoleSettings& console);
// The file reporter for --benchmark_out_format=json|console|csv.
std::unique_ptr<benchmark::BenchmarkReporter> make_file_reporter(const std::string& format);

// Replaces every JSON value NaN, -NaN, Infinity or -Infinity (as Google
// Benchmark's writer prints them, one "key": value per line) by null.
std::string without_nonfinite(const std::string& json);

// Counts of the registered instances by disposition, for the exit status.
struct Outcomes {
  int passed = 0, unsupported = 0, incorrect = 0, out_of_memory = 0, failed = 0, not_run = 0;
  int errors() const { return incorrect + out_of_memory + failed; }
  std::string text() const;  // "12 passed, 3 unsupported, 0 incorrect, ..."
};
Outcomes outcomes();

}  // namespace pb
