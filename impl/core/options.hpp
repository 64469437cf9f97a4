#pragma once
// parbench's own command-line flags (everything that is not --benchmark_*):
// the profile and the axis overrides. parse_options() removes what it consumes
// from argv so Google Benchmark sees only its own flags.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pb {

enum class Profile { Smoke, Default, Full };
const char* to_string(Profile p);

struct Shape3 {
  std::int64_t m = 0, n = 0, k = 0;
  std::string str() const;  // "MxNxK"
};

struct Options {
  Profile profile = Profile::Default;
  std::uint64_t seed = 0x9a7b3e1d5c4f2a60ull;  // base seed of every fixture
  bool flush_l2 = false;                       // GPU: flush L2 between timed iterations
  bool gpu_idle_start = false;                 // GPU: start the clock on an idle GPU (launch latency timed)
  std::optional<std::vector<Shape3>> sizes;
  std::optional<std::vector<int>> threads;
  std::optional<std::vector<int>> blocks;
  std::optional<std::vector<std::string>> precisions;
  std::optional<std::vector<std::string>> ops;
  // k-means
  std::optional<std::vector<Shape3>> kmeans_shapes;  // NxDxK
  std::optional<std::vector<std::string>> dists;     // uniform, blobs
  std::optional<int> kmeans_loops;                   // fixed mode with this many iterations
  std::optional<std::vector<double>> kmeans_exit;    // max_iter, min_changes, precision
  // sorting
  std::optional<std::vector<std::int64_t>> elements;  // totals
  std::optional<std::vector<std::int64_t>> lengths;   // array lengths; 0 = the whole input
  std::optional<std::vector<std::string>> keys, payloads, orders, sort_dists;
  bool oversubscribe = false;  // MPI: allow ranks x threads above this host's cores
  // Console and exit status.
  bool hide_unsupported = false;  // console: leave unsupported entries out (the JSON keeps them)
  bool no_progress = false;       // no progress line on stderr (it is drawn only on a terminal anyway)
  bool allow_errors = false;      // exit 0 even when an entry was incorrect or failed
  bool help = false;
};

// Throws UsageError on a malformed or out-of-range value.
Options parse_options(int& argc, char** argv);
std::string usage();

// Parsers, exposed for tests. Each throws UsageError with the offending text.
// GEMM shapes: each item N (square) or MxNxK; every number in [1, max].
std::vector<Shape3> parse_sizes(const std::string& text, const std::string& flag = "--sizes",
                                std::int64_t max = std::int64_t(1) << 22);
// Comma-separated counts, each N or 2^K, in [1, max]; with allow_all, the
// word "all" too (returned as 0).
std::vector<std::int64_t> parse_counts(const std::string& flag, const std::string& text, std::int64_t max,
                                       bool allow_all = false);
std::vector<double> parse_exit(const std::string& text);  // "maxIt,minChanges,precision"
// k-means problems: each exactly NxDxK (points x dimensions x clusters), K <= N.
std::vector<Shape3> parse_kmeans_shapes(const std::string& text);
std::vector<int> parse_int_list(const std::string& flag, const std::string& text, int lo, int hi);
std::vector<std::string> parse_word_list(const std::string& flag, const std::string& text,
                                         const std::vector<std::string>& allowed);

// 1, 2, 4, ... up to the number of cores, plus the core count itself.
std::vector<int> default_thread_axis();
int core_count();

}  // namespace pb
