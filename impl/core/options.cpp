#include "core/options.hpp"

#include <omp.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/gpu.hpp"
#include "core/mpi.hpp"
#include "core/status.hpp"
#include "core/strings.hpp"

namespace pb {

std::int64_t parse_int(const std::string& what, const std::string& text, std::int64_t lo, std::int64_t hi) {
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '-'))
    throw UsageError(what + ": '" + text + "' is not an integer");
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0') throw UsageError(what + ": '" + text + "' is not an integer");
  if (v < lo || v > hi)
    throw UsageError(what + ": " + text + " is out of range [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "]");
  return v;
}

double parse_number(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
    throw UsageError(flag + ": '" + text + "' is not a finite number");
  return v;
}

std::vector<std::int64_t> parse_dims(const std::string& flag, const std::string& item, std::size_t count,
                                     std::int64_t lo, std::int64_t hi, const std::string& form) {
  const auto parts = split(item, 'x');
  if (parts.size() != count) throw UsageError(flag + ": '" + item + "' is not " + form);
  std::vector<std::int64_t> out;
  for (const auto& part : parts) out.push_back(parse_int(flag, part, lo, hi));
  return out;
}

namespace {

bool take(const char* arg, const char* flag, std::string& value) {
  auto n = std::strlen(flag);
  if (std::strncmp(arg, flag, n) != 0) return false;
  if (arg[n] == '=') {
    value = arg + n + 1;
    return true;
  }
  if (arg[n] == '\0') throw UsageError(std::string(flag) + " needs a value: " + flag + "=...");
  return false;
}

}  // namespace

const char* to_string(Profile p) {
  switch (p) {
    case Profile::Smoke: return "smoke";
    case Profile::Default: return "default";
    case Profile::Full: return "full";
  }
  return "?";
}

std::string Shape3::str() const {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

std::vector<Shape3> parse_sizes(const std::string& text, const std::string& flag, std::int64_t max) {
  std::vector<Shape3> out;
  if (text.empty()) throw UsageError(flag + ": empty list");
  for (const auto& item : split(text, ',')) {
    auto dims = split(item, 'x');
    if (dims.size() != 1 && dims.size() != 3)
      throw UsageError(flag + ": '" + item + "' is neither N nor MxNxK");
    std::vector<std::int64_t> v;
    for (const auto& d : dims) v.push_back(parse_int(flag, d, 1, max));
    out.push_back(v.size() == 1 ? Shape3{v[0], v[0], v[0]} : Shape3{v[0], v[1], v[2]});
  }
  return out;
}

std::vector<int> parse_int_list(const std::string& flag, const std::string& text, int lo, int hi) {
  if (text.empty()) throw UsageError(flag + ": empty list");
  std::vector<int> out;
  for (const auto& item : split(text, ',')) out.push_back(static_cast<int>(parse_int(flag, item, lo, hi)));
  return out;
}

std::vector<std::string> parse_word_list(const std::string& flag, const std::string& text,
                                         const std::vector<std::string>& allowed) {
  if (text.empty()) throw UsageError(flag + ": empty list");
  std::vector<std::string> out;
  for (const auto& item : split(text, ',')) {
    if (std::find(allowed.begin(), allowed.end(), item) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      throw UsageError(flag + ": unknown value '" + item + "' (allowed: " + list + ")");
    }
    out.push_back(item);
  }
  return out;
}

std::vector<std::int64_t> parse_counts(const std::string& flag, const std::string& text, std::int64_t max,
                                       bool allow_all) {
  if (text.empty()) throw UsageError(flag + ": empty list");
  std::vector<std::int64_t> out;
  for (const auto& item : split(text, ',')) {
    if (allow_all && item == "all") {
      out.push_back(0);
    } else if (item.rfind("2^", 0) == 0) {
      const auto e = parse_int(flag, item.substr(2), 0, 62);
      const std::int64_t v = std::int64_t(1) << e;
      if (v > max) throw UsageError(flag + ": " + item + " is out of range [1, " + std::to_string(max) + "]");
      out.push_back(v);
    } else {
      out.push_back(parse_int(flag, item, 1, max));
    }
  }
  return out;
}

std::vector<int> parse_gpu_counts(const std::string& flag, const std::string& text) {
  if (text.empty()) throw UsageError(flag + ": empty list");
  std::vector<int> out;
  // Under mpirun a run may span hosts: each of them has this host's GPUs.
  const int hosts = std::max(1, mpi::size() / std::max(1, mpi::local_size()));
  const int visible = gpu_status().count * hosts;
  for (const auto& item : split(text, ',')) {
    const int g = int(parse_int(flag, item, 1, 1024));
    if (g > visible)
      throw UsageError(flag + ": " + item + " GPUs asked, " + std::to_string(visible) + " visible" +
                       (gpu_status().available ? "" : " (" + gpu_status().reason + ")"));
    out.push_back(g);
  }
  return out;
}

std::vector<int> default_gpu_axis() {
  std::vector<int> out;
  for (int g = 1; g <= std::max(1, gpu_status().count); ++g) out.push_back(g);
  return out;
}

bool flag_value(const std::string& arg, const char* name, std::string& value) {
  const std::string prefix = std::string(name) + "=";
  if (arg.compare(0, prefix.size(), prefix) != 0) return false;
  value = arg.substr(prefix.size());
  return true;
}

bool help_asked(int argc, char** argv) {
  return argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0);
}

int core_count() { return std::max(1, omp_get_num_procs()); }

std::vector<int> default_thread_axis() {
  std::vector<int> out;
  int cores = core_count();
  for (int t = 1; t < cores; t *= 2) out.push_back(t);
  out.push_back(cores);
  return out;
}

namespace {

// Wraps `text` at `width` columns, every line indented by `indent` spaces
// (the first too, unless `first` is given: then it goes first, padded).
std::string wrap(const std::string& text, std::size_t indent, std::size_t width, const std::string& first) {
  std::string out, line = first;
  if (line.size() < indent)
    line.resize(indent, ' ');
  else if (!first.empty()) {
    out += line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
    line.assign(indent, ' ');
  }
  bool empty = true;
  for (const auto& word : split(text, ' ')) {
    if (word.empty()) continue;
    if (!empty && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line.assign(indent, ' ');
      empty = true;
    }
    line += (empty ? "" : " ") + word;
    empty = false;
  }
  return out + line + "\n";
}

// The family flag `arg` names (current or old spelling), or nullptr.
const FamilyFlag* find_family_flag(const std::vector<FlagSection>& sections, const char* arg,
                                   std::string& value, std::string& typed) {
  for (const auto& sec : sections)
    for (const auto& f : sec.flags) {
      if (take(arg, f.name.c_str(), value)) {
        typed = f.name;
        return &f;
      }
      for (const auto& old : f.old_names)
        if (take(arg, old.c_str(), value)) {
          typed = old;
          return &f;
        }
    }
  return nullptr;
}

}  // namespace

Options parse_options(int& argc, char** argv, const std::vector<FlagSection>& sections) {
  Options o;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    std::string v, typed;
    if (const FamilyFlag* f = find_family_flag(sections, a, v, typed)) {
      o.parsed[f->name] = f->parse(typed, v);
      if (typed != f->name)
        o.notes.push_back(typed + " is deprecated and goes in the next release: use " + f->name);
    } else if (take(a, "--profile", v)) {
      if (v == "smoke")
        o.profile = Profile::Smoke;
      else if (v == "default")
        o.profile = Profile::Default;
      else if (v == "full")
        o.profile = Profile::Full;
      else
        throw UsageError("--profile: unknown profile '" + v + "' (allowed: smoke, default, full)");
    } else if (take(a, "--seed", v)) {
      o.seed =
          static_cast<std::uint64_t>(parse_int("--seed", v, 0, std::numeric_limits<std::int64_t>::max()));
    } else if (take(a, "--threads", v)) {
      // "cores" stands for every core of this host, where the default sweep ends.
      std::string spelled;
      for (const auto& item : split(v, ','))
        spelled += (spelled.empty() ? "" : ",") + (item == "cores" ? std::to_string(core_count()) : item);
      o.threads = parse_int_list("--threads", spelled, 1, 4096);
    } else if (take(a, "--block", v)) {
      o.blocks = parse_int_list("--block", v, 1, 1024);
    } else if (take(a, "--scaling", v)) {
      o.scalings = parse_word_list("--scaling", v, {"strong", "weak"});
    } else if (std::strcmp(a, "--oversubscribe") == 0) {
      o.oversubscribe = true;
    } else if (std::strcmp(a, "--flush-l2") == 0) {
      o.flush_l2 = true;
    } else if (std::strcmp(a, "--gpu-idle-start") == 0) {
      o.gpu_idle_start = true;
    } else if (std::strcmp(a, "--hide-unsupported") == 0) {
      o.hide_unsupported = true;
    } else if (std::strcmp(a, "--show-unsupported") == 0) {
      o.show_unsupported = true;
    } else if (std::strcmp(a, "--no-progress") == 0) {
      o.no_progress = true;
    } else if (std::strcmp(a, "--no-energy") == 0) {
      o.energy = false;
    } else if (std::strcmp(a, "--list-devices") == 0) {
      o.list_devices = true;
    } else if (std::strcmp(a, "--allow-errors") == 0) {
      o.allow_errors = true;
    } else if (std::strcmp(a, "--help") == 0 || std::strcmp(a, "-h") == 0) {
      o.help = true;
      static char help[] = "--help";
      argv[kept++] = help;  // Google Benchmark prints its own part too (it knows only --help)
    } else if (std::strncmp(a, "--benchmark_", 12) == 0 || std::strncmp(a, "--v", 3) == 0) {
      argv[kept++] = argv[i];
    } else {
      throw UsageError(std::string("unknown argument '") + a + "' (see --help)");
    }
  }
  argc = kept;
  argv[argc] = nullptr;
  for (const auto& sec : sections)
    if (sec.check_together) sec.check_together(o);
  return o;
}

std::string usage(const std::vector<FlagSection>& sections) {
  std::string families;
  for (const auto& sec : sections) {
    families += "\n" + sec.title + " (an axis flag replaces that axis):\n";
    for (const auto& f : sec.flags) {
      families += wrap(f.help, 22, 86, "  " + f.name + "=" + f.metavar + "  ");
      if (!f.old_names.empty()) {
        std::string old = "formerly";
        for (const auto& o : f.old_names) old += " " + o;
        families += wrap(old + ", still accepted until the next release", 22, 86, "");
      }
    }
  }
  return R"(parbench: classic parallel algorithms, every variant verified, then timed.

usage: bench [parbench flags] [Google Benchmark flags]

parbench flags:
  --profile=smoke|default|full  problem-size set: smoke is a quick check that every
                                variant runs (tiny sizes, each instance timed for 0.01 s
                                unless --benchmark_min_time is given); default the sizes
                                worth measuring; full sweeps the largest sizes
  --threads=LIST      CPU thread counts (OpenMP, OpenBLAS), e.g. 1,2,4,16; "cores"
                      is every core of this host (--threads=cores)
  --block=LIST        CUDA block / tile sizes where a variant has that axis
  --scaling=LIST      multi-GPU variants: strong (one problem over 1, 2, ... GPUs;
                      the default), weak (each GPU's share fixed: the run name
                      gives the share and scaling:weak, the counters the whole)
  --oversubscribe     MPI: allow ranks per host x threads above the host's cores
  --seed=N            base seed of every generated input (default fixed)
  --flush-l2          GPU: flush the L2 cache before every timed iteration
  --gpu-idle-start    GPU: record the start event on an idle GPU, so a timed run
                      includes the host's launch latency (by default a 30 us spin
                      kernel queued before it lets the run's launches queue up)
  --show-unsupported  console: an error line for every entry a variant cannot run
                      (no GPU, a shape it cannot do, a size the profile excludes);
                      by default one line per distinct reason, with its count
  --hide-unsupported  console: not even those lines; the JSON keeps every entry
  --no-progress       no progress line (instance i of n, elapsed, time left) on
                      stderr; it is drawn only when stderr is a terminal
  --allow-errors      exit 0 even when an entry was incorrect or failed
  --no-energy         do not meter the energy of the timed calls (by default a
                      GPU's NVML energy counter, the CPU's RAPL zones)
  --list-devices      list the instances the filter selects, each after where it
                      runs (cpu, gpu: one GPU, or gpus:G: G GPUs at once), and
                      run nothing (for ci/run-suite)
  --help              this text, then Google Benchmark's
)" + families +
         R"(
Run names read Family/Variant/key:value/...; filter them with
--benchmark_filter (a regex), e.g. --benchmark_filter='GEMM/cuBLAS/op:AB/type:f32'.
Results: --benchmark_out=run.json --benchmark_out_format=json.
Exit codes: 0 every selected entry passed or is unsupported; 1 an entry was
incorrect, out of memory or failed (each is an error entry in the JSON; with
--allow-errors, 0); 2 bad command line (a bad value, a filter that is not a
regular expression or matches nothing, --benchmark_repetitions below 1, an
output file that cannot be written) before anything runs.
)";
}

}  // namespace pb
