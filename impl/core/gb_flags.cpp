#include "core/gb_flags.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "core/status.hpp"

namespace pb::gb_flags {
namespace {

enum class Kind { Bool, Choice, Count, Seconds, MinTime, Level, Context, Text };

struct Flag {
  const char* name;
  Kind kind;
  std::initializer_list<const char*> choices;  // Kind::Choice
};

// The flags of Google Benchmark 1.7 and 1.8 (benchmark.cc), by what their
// values may be. benchmark_filter and benchmark_out bench checks elsewhere
// (a regular expression, a writable file).
const Flag kFlags[] = {
    {"benchmark_list_tests", Kind::Bool, {}},
    {"benchmark_enable_random_interleaving", Kind::Bool, {}},
    {"benchmark_report_aggregates_only", Kind::Bool, {}},
    {"benchmark_display_aggregates_only", Kind::Bool, {}},
    {"benchmark_counters_tabular", Kind::Bool, {}},
    {"benchmark_format", Kind::Choice, {"console", "json", "csv"}},
    {"benchmark_out_format", Kind::Choice, {"console", "json", "csv"}},
    {"benchmark_time_unit", Kind::Choice, {"ns", "us", "ms", "s"}},
    {"benchmark_color", Kind::Choice, {"auto", "true", "false", "yes", "no", "on", "off", "1", "0"}},
    {"benchmark_repetitions", Kind::Count, {}},
    {"benchmark_min_warmup_time", Kind::Seconds, {}},
    {"benchmark_min_time", Kind::MinTime, {}},
    {"v", Kind::Level, {}},
    {"benchmark_context", Kind::Context, {}},
    {"benchmark_perf_counters", Kind::Text, {}},
    {"benchmark_filter", Kind::Text, {}},
    {"benchmark_out", Kind::Text, {}},
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

[[noreturn]] void bad(const std::string& name, const std::string& value, const std::string& why) {
  throw UsageError("--" + name + "=" + value + ": " + why);
}

// A whole decimal integer in [lo, hi].
bool integer(const std::string& v, long lo, long hi) {
  if (v.empty() || !std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c); }))
    return false;
  if (v.size() > 9) return false;
  const long n = std::strtol(v.c_str(), nullptr, 10);
  return n >= lo && n <= hi;
}

// A plain decimal number (no sign, hex, inf or nan) and what follows it.
bool number(const std::string& v, double& x, std::string& rest) {
  std::size_t i = 0, digits = 0;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) ++i, ++digits;
  if (i < v.size() && v[i] == '.') {
    ++i;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < v.size() && (v[i] == 'e' || v[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < v.size() && (v[j] == '+' || v[j] == '-')) ++j;
    const std::size_t e0 = j;
    while (j < v.size() && std::isdigit(static_cast<unsigned char>(v[j]))) ++j;
    if (j > e0) i = j;
  }
  x = std::strtod(v.substr(0, i).c_str(), nullptr);
  rest = v.substr(i);
  return std::isfinite(x);
}

std::string min_time(const std::string& name, const std::string& v, bool suffix) {
  double x = 0;
  std::string rest;
  if (!number(v, x, rest) || (rest != "" && rest != "s" && rest != "x"))
    bad(name, v, "not seconds (0.5 or 0.5s) or iterations (100x)");
  const std::string digits = v.substr(0, v.size() - rest.size());
  if (rest == "x") {
    if (!integer(digits, 1, 999999999)) bad(name, v, "the iterations are not a whole count of at least 1");
    if (!suffix)
      bad(name, v,
          "iterations (NNx) need Google Benchmark 1.8 or later, and this bench is built with an older one: "
          "give seconds, e.g. 0.5");
    return v;
  }
  if (!(x > 0) || x > 1e6) bad(name, v, "the seconds are not in (0, 1e6]");
  return suffix ? digits + "s" : digits;
}

const Flag* find(const std::string& name) {
  for (const auto& f : kFlags)
    if (name == f.name) return &f;
  return nullptr;
}

// The variable the library reads a flag from: its name in capitals.
std::string env_name(const std::string& name) {
  std::string e = name;
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return char(std::toupper(c)); });
  return e;
}

bool exact(const std::string& value, std::initializer_list<const char*> choices) {
  for (const char* c : choices)
    if (value == c) return true;
  return false;
}

}  // namespace

std::string checked(const std::string& name, const std::string& value, bool min_time_suffix) {
  const Flag* f = find(name);
  if (!f) return value;
  const std::string v = lower(value);
  auto one_of = [&](std::initializer_list<const char*> choices) {
    for (const char* c : choices)
      if (v == c) return true;
    return false;
  };
  switch (f->kind) {
    case Kind::Bool:
      if (!one_of({"true", "false", "yes", "no", "on", "off", "1", "0", "t", "f", "y", "n"}))
        bad(name, value, "not a boolean (true or false)");
      return value;
    case Kind::Choice:
      // The library compares these exactly (JSON is not json) and answers a
      // mismatch with its usage and exit 0; the colour it reads as a boolean.
      if (!(std::string(f->name) == "benchmark_color" ? one_of(f->choices) : exact(value, f->choices))) {
        std::string list;
        for (const char* c : f->choices) list += std::string(list.empty() ? "" : ", ") + c;
        bad(name, value, "unknown value (one of " + list + ")");
      }
      return value;
    case Kind::Count:
      if (!integer(value, 1, 1000000)) bad(name, value, "not a count of at least 1");
      return value;
    case Kind::Level:
      if (!integer(value, 0, 1000)) bad(name, value, "not a verbosity level (0, 1, 2, ...)");
      return value;
    case Kind::Seconds: {
      double x = 0;
      std::string rest;
      if (!number(value, x, rest) || !rest.empty() || x > 1e6) bad(name, value, "not seconds in [0, 1e6]");
      return value;
    }
    case Kind::MinTime: return min_time(name, value, min_time_suffix);
    case Kind::Context: {
      // KEY=VALUE[,KEY=VALUE...], as the library splits it.
      std::size_t start = 0;
      do {
        const std::size_t end = std::min(value.find(',', start), value.size());
        const std::string pair = value.substr(start, end - start);
        const std::size_t eq = pair.find('=');
        if (eq == std::string::npos || eq == 0) bad(name, value, "not KEY=VALUE[,KEY=VALUE...]");
        start = end + 1;
      } while (start <= value.size());
      return value;
    }
    case Kind::Text: return value;
  }
  return value;
}

void check(int argc, char** argv, bool min_time_suffix, std::deque<std::string>& storage) {
  // The environment first: an argument overrides its variable, as in the library.
  for (const auto& f : kFlags) {
    // V, the variable of --v, is too common a name to hold bench to.
    if (f.kind == Kind::Text || f.kind == Kind::Level) continue;
    const std::string var = env_name(f.name);
    const char* e = std::getenv(var.c_str());
    if (!e) continue;
    try {
      const std::string v = checked(f.name, e, min_time_suffix);
      if (v != e) setenv(var.c_str(), v.c_str(), 1);
    } catch (const UsageError& err) {
      // "--NAME=VALUE: why" as the variable says it: "BENCHMARK_NAME=VALUE: why".
      throw UsageError(var + (err.what() + 2 + std::strlen(f.name)));
    }
  }
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strncmp(a, "--", 2) != 0) continue;
    const char* eq = std::strchr(a, '=');
    if (!eq) continue;  // a bare boolean flag, or not one of the library's
    const std::string name(a + 2, eq);
    const std::string value(eq + 1);
    const std::string v = checked(name, value, min_time_suffix);
    if (v != value) {
      storage.push_back("--" + name + "=" + v);
      argv[i] = storage.back().data();
    }
  }
}

}  // namespace pb::gb_flags
