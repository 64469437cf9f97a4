// bench: every family in one binary. Parses parbench's own flags, registers
// every instance, records the machine and build in the JSON context, then
// hands over to Google Benchmark.
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <omp.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "benchmarks/families.hpp"
#include "core/build_info.hpp"
#include "core/duet.hpp"
#include "core/gb_flags.hpp"
#include "core/gpu.hpp"
#include "core/layout.hpp"
#include "core/mpi.hpp"
#include "core/options.hpp"
#include "core/progress.hpp"
#include "core/registrar.hpp"
#include "core/reporters.hpp"
#include "core/status.hpp"
#include "fixtures/fixtures.hpp"

namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      auto pos = line.find(':');
      if (pos != std::string::npos) return line.substr(pos + 2);
    }
  return "unknown";
}

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

void add_context(const pb::Options& opt) {
  const auto& b = pb::build_info();
  auto add = [](const std::string& k, const std::string& v) { benchmark::AddCustomContext(k, v); };
  add("parbench_git_revision", b.git_revision);
  add("parbench_build_type", b.build_type);
  add("parbench_cxx_compiler", b.cxx_compiler);
  add("parbench_cxx_flags", b.cxx_flags);
  add("parbench_cuda_compiler", b.cuda_compiler.empty() ? "none" : b.cuda_compiler);
  add("parbench_cuda_flags", b.cuda_flags);
  add("parbench_cuda_architectures", b.cuda_architectures);
  add("parbench_sanitize", b.sanitize);
  add("parbench_profile", pb::to_string(opt.profile));
  add("parbench_seed", std::to_string(opt.seed));
  add("parbench_fixtures_version", std::to_string(pb::fixtures::kVersion));
  add("parbench_flush_l2", opt.flush_l2 ? "true" : "false");
  add("parbench_aslr", pb::layout::randomisation());
  add("parbench_gpu_start", opt.flush_l2 ? "after-l2-flush" : opt.gpu_idle_start ? "idle" : "queued");
  add("parbench_energy", opt.energy ? "metered" : "off (--no-energy)");
  add("cpu_model", cpu_model());
  add("cpu_cores", std::to_string(pb::core_count()));
  add("openmp_version", std::to_string(_OPENMP));
  add("omp_max_threads", std::to_string(omp_get_max_threads()));
  add("omp_proc_bind", env_or("OMP_PROC_BIND", "unset"));
  add("omp_places", env_or("OMP_PLACES", "unset"));
  add("openblas_config", openblas_get_config());
  add("openblas_num_threads_at_start", std::to_string(openblas_get_num_threads()));
  for (const auto& [k, v] : pb::gpu_context()) add(k, v);
  for (const auto& family : pb::families())
    if (family.context)
      for (const auto& [k, v] : family.context()) add(k, v);
}

// Ranks other than 0 run every instance too (the collectives need them) but
// report nothing.
class Silent : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

// A flag's value as Google Benchmark reads it: the last --NAME=value, else
// the environment variable it also reads (BENCHMARK_ + NAME in capitals).
std::string flag_of(int argc, char** argv, const char* name, const char* env, const char* fallback) {
  const std::string prefix = std::string("--") + name + "=";
  const char* e = std::getenv(env);
  std::string v = e ? e : fallback;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) v = argv[i] + prefix.size();
  return v;
}

std::string filter_of(int argc, char** argv) {
  const std::string f = flag_of(argc, argv, "benchmark_filter", "BENCHMARK_FILTER", ".");
  return f.empty() || f == "all" ? "." : f;
}

// Options that would make the ranks run different sequences.
void check_mpi_lockstep(int argc, char** argv) {
  const std::string shuffle = flag_of(argc, argv, "benchmark_enable_random_interleaving",
                                      "BENCHMARK_ENABLE_RANDOM_INTERLEAVING", "false");
  if (shuffle == "true" || shuffle == "1")
    throw pb::UsageError(
        "--benchmark_enable_random_interleaving cannot run under mpirun: each rank would "
        "shuffle the instances its own way");
}

// One number for the list of registered instances, to compare across ranks.
std::uint64_t registered_hash() {
  std::uint64_t h = 1469598103934665603ull;
  for (const auto& r : pb::registered()) {
    for (unsigned char c : r.name) h = (h ^ c) * 1099511628211ull;
    h = (h ^ (r.mpi ? 1u : 2u)) * 1099511628211ull;
  }
  return h;
}

// The filter as Google Benchmark applies it (extended regex, searched in the
// full name; a leading '-' negates). Throws UsageError when it does not compile.
struct Filter {
  std::regex re;
  bool negative = false;
  bool selects(const std::string& name) const { return std::regex_search(name, re) != negative; }
};
Filter filter(int argc, char** argv) {
  Filter f;
  std::string text = filter_of(argc, argv);
  f.negative = text[0] == '-';
  if (f.negative) text = text.substr(1);
  try {
    f.re = std::regex(text, std::regex::extended);
  } catch (const std::regex_error&) {
    throw pb::UsageError("--benchmark_filter: '" + text + "' is not a regular expression");
  }
  return f;
}

// How many registered instances the filter selects; none is a usage error.
int selected_count(int argc, char** argv) {
  const Filter f = filter(argc, argv);
  int n = 0;
  for (const auto& r : pb::registered()) n += f.selects(r.name);
  if (n == 0)
    throw pb::UsageError("--benchmark_filter='" + filter_of(argc, argv) + "' matches none of the " +
                         std::to_string(pb::registered().size()) +
                         " benchmarks of this run (list them with --benchmark_list_tests)");
  return n;
}

// Google Benchmark 1.8 reads --benchmark_min_time as "<seconds>s" (a bare
// number still works, with a warning); 1.7 as a bare number. 1.8 is the one
// whose State has SkipWithMessage.
template <class S>
constexpr auto min_time_has_suffix(int) -> decltype(std::declval<S&>().SkipWithMessage(""), bool()) {
  return true;
}
template <class S>
constexpr bool min_time_has_suffix(long) {
  return false;
}

// Google Benchmark's flags (core/gb_flags.hpp), and a --benchmark_out it
// would open only after the registration, and then exit 1.
void check_benchmark_flags(int argc, char** argv, std::deque<std::string>& storage) {
  pb::gb_flags::check(argc, argv, min_time_has_suffix<benchmark::State>(0), storage);
  const std::string out = flag_of(argc, argv, "benchmark_out", "BENCHMARK_OUT", "");
  if (!out.empty()) {
    // Google Benchmark would open it only after the registration, and exit 1.
    std::ofstream probe(out, std::ios::app);
    if (!probe) throw pb::UsageError("--benchmark_out: cannot write '" + out + "'");
  }
}

// Under mpirun with P > 1 only MPI instances may run: the others would run P
// times over, unsynchronised. Throws UsageError naming the first offender.
void check_mpi_filter(int argc, char** argv) {
  const Filter f = filter(argc, argv);
  for (const auto& r : pb::registered())
    if (!r.mpi && f.selects(r.name))
      throw pb::UsageError("under mpirun with " + std::to_string(pb::mpi::size()) +
                           " ranks only MPI benchmarks run, and the filter selects " + r.name +
                           " (use e.g. --benchmark_filter=/MPI/)");
}

// A usage error is one line: an argument quoted in it that holds a line
// break or another control character is shown escaped (\n, \x1b).
std::string one_line(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += char(c);
    }
  }
  return out;
}

bool is_terminal(int fd) { return isatty(fd) == 1; }

bool color_terminal() {
  const char* term = std::getenv("TERM");
  return is_terminal(STDOUT_FILENO) && term && *term && std::strcmp(term, "dumb") != 0;
}

bool truthy(const std::string& v) { return v == "true" || v == "yes" || v == "1" || v == "on"; }

// A boolean Google Benchmark flag: --NAME alone means true.
bool bool_flag(int argc, char** argv, const char* name, const char* env) {
  const std::string bare = std::string("--") + name;
  for (int i = 1; i < argc; ++i)
    if (bare == argv[i]) return true;
  return truthy(flag_of(argc, argv, name, env, "false"));
}

// Rank 0 alone writes --benchmark_out.
void drop_file_output(int& argc, char** argv) {
  int kept = 1;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--benchmark_out", 15) != 0) argv[kept++] = argv[i];
  argc = kept;
  argv[argc] = nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  pb::layout::fixed_layout(argv);
  pb::duet::active();  // a compare --run duet partner: registered before any listing or fixture
  pb::mpi::init(&argc, &argv);
  const int rank = pb::mpi::rank();
  pb::Options opt;
  std::string err;
  int selected = 0;
  std::deque<std::string> rewritten;  // the text of the arguments check_benchmark_flags respells
  try {
    const auto sections = pb::family_flags();
    opt = pb::parse_options(argc, argv, sections);
    if (rank == 0)
      for (const auto& note : opt.notes) std::fprintf(stderr, "bench: %s\n", note.c_str());
    pb::set_gpu_idle_start(opt.gpu_idle_start);
    pb::set_energy_metering(opt.energy);
    if (opt.help) {
      std::fputs(pb::usage(sections).c_str(), stdout);
      std::fputs("\nGoogle Benchmark's flags:\n", stdout);
      std::fflush(stdout);
    } else {
      for (const auto& family : pb::families()) family.register_instances(opt);
    }
    if (!opt.help) {
      check_benchmark_flags(argc, argv, rewritten);
      selected = selected_count(argc, argv);
    }
    if (pb::mpi::size() > 1) {
      check_mpi_filter(argc, argv);
      check_mpi_lockstep(argc, argv);
    }
  } catch (const pb::UsageError& e) {
    err = e.what();
  }
  // One verdict for all ranks, so none is left waiting in a collective: a
  // usage error on any rank ends every rank. Rank 0 says why; another rank
  // speaks only when rank 0 found nothing wrong (hosts that differ).
  bool bad = pb::mpi::any(!err.empty());
  if (!bad && pb::mpi::size() > 1 && !pb::mpi::same(registered_hash())) {
    bad = true;
    err =
        "the ranks registered different benchmarks (hosts that differ in cores, or in how mpirun binds "
        "ranks to them): give --threads explicitly and run mpirun with --bind-to none";
  }
  if (bad) {
    const bool root_bad = pb::mpi::root_says(!err.empty());
    if (!err.empty() && (rank == 0 || !root_bad))
      std::fprintf(stderr,
                   rank == 0 ? "bench: %s\n" : ("bench (rank " + std::to_string(rank) + "): %s\n").c_str(),
                   one_line(err).c_str());
    pb::mpi::finalize();
    return pb::kExitUsage;
  }
  if (opt.list_devices) {
    if (rank == 0) {
      const Filter f = filter(argc, argv);
      for (const auto& r : pb::registered())
        if (f.selects(r.name)) {
          const std::string where = !pb::on_gpu(r.backend) ? "cpu"
                                    : r.gpus == 1          ? "gpu"
                                                           : "gpus:" + std::to_string(r.gpus);
          std::printf("%s %s\n", where.c_str(), r.name.c_str());
        }
      std::fflush(stdout);
    }
    pb::mpi::finalize();
    return 0;
  }
  if (rank != 0) {
    drop_file_output(argc, argv);
    unsetenv("BENCHMARK_OUT");
  }
  // What the reporters need from Google Benchmark's flags, read before it consumes them.
  const std::string out_file = rank == 0 ? flag_of(argc, argv, "benchmark_out", "BENCHMARK_OUT", "") : "";
  const std::string out_format = flag_of(argc, argv, "benchmark_out_format", "BENCHMARK_OUT_FORMAT", "json");
  const std::string format = flag_of(argc, argv, "benchmark_format", "BENCHMARK_FORMAT", "console");
  const std::string color = flag_of(argc, argv, "benchmark_color", "BENCHMARK_COLOR", "auto");
  const bool tabular = bool_flag(argc, argv, "benchmark_counters_tabular", "BENCHMARK_COUNTERS_TABULAR");
  const bool listing = bool_flag(argc, argv, "benchmark_list_tests", "BENCHMARK_LIST_TESTS");
  // The smoke profile's promise (seconds): a short minimum time per instance,
  // unless the user set one.
  std::vector<char*> args(argv, argv + argc);
  static char smoke_min_time[] = "--benchmark_min_time=0.01s";
  if (opt.profile == pb::Profile::Smoke &&
      flag_of(argc, argv, "benchmark_min_time", "BENCHMARK_MIN_TIME", "").empty()) {
    if (!min_time_has_suffix<benchmark::State>(0)) smoke_min_time[sizeof smoke_min_time - 2] = '\0';
    args.push_back(smoke_min_time);
  }
  args.push_back(nullptr);
  int nargs = int(args.size()) - 1;
  benchmark::Initialize(&nargs, args.data());  // prints its usage and exits on --help
  if (benchmark::ReportUnrecognizedArguments(nargs, args.data())) {
    pb::mpi::finalize();
    return pb::kExitUsage;
  }
  add_context(opt);
  if (pb::mpi::built()) {
    benchmark::AddCustomContext("mpi_ranks", std::to_string(pb::mpi::size()));
    benchmark::AddCustomContext("mpi_ranks_per_host", std::to_string(pb::mpi::local_size()));
    // Whether this MPI can take GPU memory: the MPI x GPU variants exchange
    // through NCCL either way, and a CUDA-aware MPI is what a user's own code
    // on this cluster might use instead.
    benchmark::AddCustomContext("mpi_cuda_aware", pb::mpi::cuda_aware());
  }
  if (rank == 0) {
    pb::ConsoleSettings console;
    console.color = color == "auto" ? color_terminal() : truthy(color);
    console.tabular = tabular;
    console.unsupported = opt.hide_unsupported   ? pb::Unsupported::Hide
                          : opt.show_unsupported ? pb::Unsupported::Show
                                                 : pb::Unsupported::Summary;
    auto display = pb::make_display_reporter(format, console);
    auto file = out_file.empty() ? nullptr : pb::make_file_reporter(out_format);
    if (!opt.no_progress && !listing && is_terminal(STDERR_FILENO)) pb::progress::start(selected);
    benchmark::RunSpecifiedBenchmarks(display.get(), file.get());
    pb::progress::stop();
  } else {
    Silent silent;
    benchmark::RunSpecifiedBenchmarks(&silent);
  }
  pb::release_kept_job();
  benchmark::Shutdown();
  const pb::Outcomes t = pb::outcomes();
  if (rank == 0 && !listing) std::fprintf(stderr, "bench: %d instances: %s\n", selected, t.text().c_str());
  pb::mpi::finalize();
  if (t.errors() > 0 && !opt.allow_errors) {
    if (rank == 0)
      std::fprintf(stderr,
                   "bench: exit status 1: %d entries incorrect, out of memory or failed "
                   "(they are error entries in the output; --allow-errors exits 0)\n",
                   t.errors());
    return 1;
  }
  return 0;
}
