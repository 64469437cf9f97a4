#include "core/energy.hpp"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace pb::energy {
namespace {

std::string fmt(const char* f, double a, double b = 0, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

Result no(const std::string& source, const std::string& why) {
  Result r;
  r.source = source;
  r.reason = why;
  return r;
}

double overlap(const Call& c, double lo, double hi) {
  return std::max(0.0, std::min(c.end, hi) - std::max(c.begin, lo));
}

// The calls inside [lo, hi], a call cut by an end counted by the fraction inside.
double calls_within(const std::vector<Call>& calls, double lo, double hi) {
  double n = 0;
  for (const auto& c : calls) {
    const double len = c.end - c.begin;
    if (len > 0)
      n += overlap(c, lo, hi) / len;
    else if (c.begin >= lo && c.begin <= hi)
      n += 1;
  }
  return n;
}

bool read_text(const std::string& path, std::string& out, int& err) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f) {
    err = errno;
    return false;
  }
  char buf[128] = {};
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  err = std::ferror(f) ? errno : 0;
  std::fclose(f);
  if (err) return false;
  out.assign(buf, n);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return true;
}

}  // namespace

Result stepped_window(const std::vector<Sample>& polls, const std::vector<Call>& calls) {
  const std::string src = "energy counter";
  if (calls.empty()) return no(src, "no timed call");
  for (std::size_t i = 1; i < polls.size(); ++i)
    if (polls[i].value < polls[i - 1].value)
      return no(src, fmt("the energy counter went backwards (%.3f J, then %.3f J)", polls[i - 1].value,
                         polls[i].value));
  const double lo = calls.front().begin, hi = calls.back().end;
  // Each step: when (the midpoint of the span the reads around it allow),
  // give or take half that span, and the energy it shows.
  struct Step {
    double t, half, joules;
  };
  std::vector<Step> inside;
  std::vector<double> gaps;  // between consecutive steps, for the reason
  double last_step = -1;
  for (std::size_t i = 1; i < polls.size(); ++i) {
    if (polls[i].value == polls[i - 1].value) continue;
    const double from = polls[i - 1].t - polls[i - 1].read_s, to = polls[i].t;
    const Step s{(from + to) / 2, (to - from) / 2, polls[i].value};
    if (last_step >= 0) gaps.push_back(s.t - last_step);
    last_step = s.t;
    if (s.t - s.half >= lo && s.t + s.half <= hi) inside.push_back(s);
  }
  if (inside.size() < 2) {
    std::string why = fmt("the timed loop (%.3f s) holds %.0f step(s) of the energy counter, fewer than two",
                          hi - lo, double(inside.size()));
    if (!gaps.empty()) {
      std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
      why += fmt(" (it moves about every %.0f ms)", gaps[gaps.size() / 2] * 1e3);
    }
    return no(src, why);
  }
  const Step& a = inside.front();
  const Step& b = inside.back();
  Result r;
  r.source = src;
  r.window_s = b.t - a.t;
  r.calls = calls_within(calls, a.t, b.t);
  if (r.calls <= 0) return no(src, "no timed call inside the energy counter's window");
  const double joules = b.joules - a.joules;
  r.joules_per_call = joules / r.calls;
  r.watts = joules / r.window_s;
  r.error_bound = (a.half + b.half) / r.window_s;
  r.ok = true;
  return r;
}

Result integrated_power(const std::vector<Sample>& watts, const std::vector<Call>& calls) {
  const std::string src = "power samples";
  if (calls.empty()) return no(src, "no timed call");
  const double lo = calls.front().begin, hi = calls.back().end;
  std::vector<Sample> in;
  for (const auto& s : watts)
    if (s.t >= lo && s.t <= hi) in.push_back(s);
  if (in.size() < 2)
    return no(src, fmt("the timed loop (%.3f s) holds %.0f power sample(s), fewer than two", hi - lo,
                       double(in.size())));
  // The trapezoids between samples, and the ends held at the first and last sample.
  double joules = in.front().value * (in.front().t - lo) + in.back().value * (hi - in.back().t);
  for (std::size_t i = 1; i < in.size(); ++i)
    joules += (in[i].value + in[i - 1].value) / 2 * (in[i].t - in[i - 1].t);
  Result r;
  r.source = src;
  r.window_s = hi - lo;
  r.calls = double(calls.size());
  r.joules_per_call = joules / r.calls;
  r.watts = joules / r.window_s;
  r.ok = true;
  return r;
}

double wrapped_delta(double begin, double end, double range) {
  if (end >= begin) return end - begin;
  return range > 0 ? end + range - begin : end - begin;
}

std::string powercap_root() {
  const char* v = std::getenv("PARBENCH_POWERCAP_ROOT");
  return v && *v ? v : "/sys/class/powercap";
}

Rapl find_rapl(const std::string& root) {
  Rapl out;
  DIR* dir = opendir(root.c_str());
  if (!dir) {
    out.reason = "no powercap interface (" + root + ": " + std::strerror(errno) +
                 "): a virtual machine, or a kernel without intel_rapl";
    return out;
  }
  std::vector<std::string> zones;
  while (const dirent* e = readdir(dir)) {
    const std::string n = e->d_name;
    if (n.rfind("intel-rapl:", 0) == 0) zones.push_back(n);
  }
  closedir(dir);
  std::sort(zones.begin(), zones.end());
  for (const auto& z : zones) {
    std::string name, range;
    int err = 0;
    if (!read_text(root + "/" + z + "/name", name, err)) continue;
    if (name.rfind("package", 0) != 0 && name != "dram") continue;  // core, uncore: inside the package
    RaplDomain d;
    d.name = name;
    d.file = root + "/" + z + "/energy_uj";
    if (read_text(root + "/" + z + "/max_energy_range_uj", range, err))
      d.range_j = std::atof(range.c_str()) * 1e-6;
    out.domains.push_back(d);
  }
  if (out.domains.empty()) out.reason = "no RAPL package or DRAM zone under " + root;
  return out;
}

bool read_joules(const RaplDomain& d, double& joules, std::string& why) {
  std::string text;
  int err = 0;
  if (!read_text(d.file, text, err)) {
    why = err == EACCES ? "permission denied reading " + d.file + " (RAPL counters are readable by root only)"
                        : "cannot read " + d.file + ": " + std::strerror(err);
    return false;
  }
  char* end = nullptr;
  const double uj = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) {
    why = d.file + " does not hold a number (\"" + text + "\")";
    return false;
  }
  joules = uj * 1e-6;
  return true;
}

Result sum(const std::vector<Result>& parts) {
  Result r;
  if (parts.empty()) return r.reason = "no device metered", r;
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (!parts[i].ok) {
      r.source = parts[i].source;
      r.reason = parts.size() == 1 ? parts[i].reason : "GPU " + std::to_string(i) + ": " + parts[i].reason;
      return r;
    }
  r = parts[0];
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const Result& p = parts[i];
    r.joules_per_call += p.joules_per_call;
    r.watts += p.watts;
    r.window_s = std::min(r.window_s, p.window_s);
    r.calls = std::min(r.calls, p.calls);
    r.error_bound = r.error_bound < 0 || p.error_bound < 0 ? -1 : std::max(r.error_bound, p.error_bound);
  }
  if (parts.size() > 1) r.source += ", " + std::to_string(parts.size()) + " GPUs summed";
  return r;
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace {

// RAPL's counters update about every millisecond: each end of the window is
// known to that.
constexpr double kRaplUpdate = 1e-3;

class RaplMeter final : public Meter {
 public:
  explicit RaplMeter(const std::string& root) : rapl_(find_rapl(root)) {}
  bool reads() const override { return !rapl_.domains.empty(); }
  void begin() override {
    calls_.clear();
    why_ = rapl_.reason;
    start_.assign(rapl_.domains.size(), 0.0);
    for (std::size_t i = 0; i < rapl_.domains.size() && why_.empty(); ++i)
      read_joules(rapl_.domains[i], start_[i], why_);
    t0_ = now();
  }
  Result end() override {
    const double t1 = now();
    const std::string src = "RAPL";
    if (!why_.empty()) return no(src, why_);
    if (calls_.empty()) return no(src, "no timed call");
    double joules = 0;
    for (std::size_t i = 0; i < rapl_.domains.size(); ++i) {
      double e = 0;
      std::string why;
      if (!read_joules(rapl_.domains[i], e, why)) return no(src, why);
      const double d = wrapped_delta(start_[i], e, rapl_.domains[i].range_j);
      if (d < 0)
        return no(src, rapl_.domains[i].name + "'s counter went backwards and gives no range to wrap at");
      joules += d;
    }
    Result r;
    r.source = src;
    r.window_s = t1 - t0_;
    if (r.window_s <= 0) return no(src, "an empty window");
    r.calls = double(calls_.size());
    r.joules_per_call = joules / r.calls;
    r.watts = joules / r.window_s;
    r.error_bound = 2 * kRaplUpdate / r.window_s;
    r.ok = true;
    return r;
  }

 private:
  Rapl rapl_;
  std::vector<double> start_;
  std::string why_;
  double t0_ = 0;
};

class Unavailable final : public Meter {
 public:
  explicit Unavailable(std::string why) : why_(std::move(why)) {}
  void begin() override {}
  bool reads() const override { return false; }
  Result end() override { return no("", why_); }

 private:
  std::string why_;
};

}  // namespace

std::unique_ptr<Meter> make_rapl_meter(const std::string& root) { return std::make_unique<RaplMeter>(root); }
std::unique_ptr<Meter> make_unavailable_meter(const std::string& why) {
  return std::make_unique<Unavailable>(why);
}

}  // namespace pb::energy
