#pragma once
// parbench's own command-line flags (everything that is not --benchmark_*):
// core's (the profile, the knobs every family shares: threads, blocks) and
// the ones each family declares in its FlagSection (core knows none of
// them). parse_options() removes what it consumes from argv so Google
// Benchmark sees only its own flags.
#include <any>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace pb {

enum class Profile { Smoke, Default, Full };
const char* to_string(Profile p);

struct Shape3 {
  std::int64_t m = 0, n = 0, k = 0;
  std::string str() const;  // "MxNxK"
};

struct Options;

// A flag a family declares: --NAME=VALUE, the override of one of its axes.
// Family flags are named --<family>-<axis> (--gemm-shapes, --sort-key); the
// knobs all families share (--threads, --block) belong to core.
struct FamilyFlag {
  std::string name;     // "--gemm-shapes"
  std::string metavar;  // "LIST"
  std::string help;     // one paragraph; usage() wraps it
  // Parses the value, or throws UsageError naming `flag` (the spelling the
  // user typed). parse_options keeps what it returns (Options::value), so the
  // family reads the parsed value and no flag is parsed twice.
  std::function<std::any(const std::string& flag, const std::string& value)> parse;
  // Earlier spellings, still accepted for one release with a note on stderr.
  std::vector<std::string> old_names;
};

struct FlagSection {
  std::string title;  // "GEMM"
  std::vector<FamilyFlag> flags;
  // Rules across the section's flags, after every flag parsed; UsageError.
  std::function<void(const Options&)> check_together;
};

struct Options {
  Profile profile = Profile::Default;
  std::uint64_t seed = 0x9a7b3e1d5c4f2a60ull;  // base seed of every fixture
  bool flush_l2 = false;                       // GPU: flush L2 between timed iterations
  bool gpu_idle_start = false;                 // GPU: start the clock on an idle GPU (launch latency timed)
  bool energy = true;                          // meter the timed calls' energy (--no-energy: off)
  // Axes every family with such an axis shares.
  std::optional<std::vector<int>> threads;
  std::optional<std::vector<int>> blocks;
  // Multi-GPU variants: strong (one problem over 1, 2, ... GPUs) and/or weak
  // (each GPU's share fixed, the problem grown with the GPU count).
  std::vector<std::string> scalings{"strong"};
  bool oversubscribe = false;  // MPI: allow ranks x threads above this host's cores
  // Family flags given, by their current name: what their parse returned
  // (the text is parsed once, here, and not kept).
  std::map<std::string, std::any> parsed;
  // One line per deprecated spelling used, for stderr.
  std::vector<std::string> notes;
  // Console and exit status.
  bool hide_unsupported = false;  // console: leave unsupported entries out (the JSON keeps them)
  bool show_unsupported = false;  // console: one line per unsupported entry, not per reason
  bool list_devices = false;      // print "cpu|gpu|gpus:G NAME" per selected instance and run nothing
  bool no_progress = false;       // no progress line on stderr (it is drawn only on a terminal anyway)
  bool allow_errors = false;      // exit 0 even when an entry was incorrect or failed
  bool help = false;

  // Whether a family flag (by its current name) was given.
  bool given(const std::string& name) const { return parsed.count(name) > 0; }
  // A family flag's parsed value, or nullptr when not given; T must be the
  // type its parse returns (std::logic_error otherwise).
  template <class T>
  const T* value(const std::string& name) const {
    auto it = parsed.find(name);
    if (it == parsed.end()) return nullptr;
    if (const T* v = std::any_cast<T>(&it->second)) return v;
    throw std::logic_error(name + ": its parsed value is read as another type");
  }
};

// Throws UsageError on a malformed or out-of-range value, or a flag no
// section declares.
Options parse_options(int& argc, char** argv, const std::vector<FlagSection>& sections = {});
std::string usage(const std::vector<FlagSection>& sections = {});

// Parsers for flags, shared by the families. Each throws UsageError naming
// `flag` and the offending text.
// Shapes: each item N (a cube) or MxNxK; every number in [1, max].
std::vector<Shape3> parse_sizes(const std::string& text, const std::string& flag,
                                std::int64_t max = std::int64_t(1) << 22);
// Comma-separated counts, each N or 2^K, in [1, max]; with allow_all, the
// word "all" too (returned as 0).
std::vector<std::int64_t> parse_counts(const std::string& flag, const std::string& text, std::int64_t max,
                                       bool allow_all = false);
std::int64_t parse_int(const std::string& flag, const std::string& text, std::int64_t lo, std::int64_t hi);
std::vector<int> parse_int_list(const std::string& flag, const std::string& text, int lo, int hi);
// A finite number (strtod syntax); UsageError naming `flag` otherwise.
double parse_number(const std::string& flag, const std::string& text);
// One item of `count` integers joined by 'x' (a grid MxN, a block XxY, NxDxK),
// each in [lo, hi]; `form` names the expected shape in the error ("MxN").
std::vector<std::int64_t> parse_dims(const std::string& flag, const std::string& item, std::size_t count,
                                     std::int64_t lo, std::int64_t hi, const std::string& form);
std::vector<std::string> parse_word_list(const std::string& flag, const std::string& text,
                                         const std::vector<std::string>& allowed);

// GPU counts for a multi-GPU variant's `gpus` axis: each at least 1 and at
// most the GPUs this process can see (none in a build without CUDA).
std::vector<int> parse_gpu_counts(const std::string& flag, const std::string& text);
// Every count from 1 to the GPUs visible (1 where none is).
std::vector<int> default_gpu_axis();

// For the small tools beside bench (sor-solve, kmeans-inputs): whether `arg`
// is `name=value`, the value then in `value`; and whether the only argument
// asks for help (--help or -h).
bool flag_value(const std::string& arg, const char* name, std::string& value);
bool help_asked(int argc, char** argv);

// A stand-alone tool's arguments (kmeans-inputs, sor-solve): --help prints
// `usage` to stdout and exits 0; a UsageError from parse(argc, argv) prints
// "tool: message" on stderr and exits 2; otherwise parse's result.
template <class Parse>
auto parse_tool_args(const char* tool, const char* usage, int argc, char** argv, Parse parse) {
  if (help_asked(argc, argv)) {
    std::fputs(usage, stdout);
    std::exit(0);
  }
  try {
    return parse(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: %s\n", tool, e.what());
    std::exit(2);
  }
}

// 1, 2, 4, ... up to the number of cores, plus the core count itself.
std::vector<int> default_thread_axis();
int core_count();

}  // namespace pb
