#include "core/reporters.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <utility>
#include <vector>

#include "core/meta.hpp"
#include "core/progress.hpp"
#include "core/registrar.hpp"

namespace pb {
namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += char(c);
        }
    }
  }
  return out + "\"";
}

Disposition disposition_of(const benchmark::BenchmarkReporter::Run& r, const Registered* reg) {
  if (!run_flagged(r, 0)) return Disposition::Passed;
  if (reg && reg->disposition != Disposition::Passed && reg->disposition != Disposition::NotRun)
    return reg->disposition;
  return Disposition::Failed;  // flagged by Google Benchmark itself
}

std::string counters_json() {
  std::string s = "{";
  bool first = true;
  for (const auto& [name, info] : declared_counters()) {
    s += first ? "\n" : ",\n";
    first = false;
    s += "      " + quoted(name) + ": {\"kind\": " + quoted(to_string(info.kind));
    if (!info.unit.empty()) s += ", \"unit\": " + quoted(info.unit);
    if (info.kind == CounterKind::Time || info.kind == CounterKind::Energy) s += ", \"better\": \"lower\"";
    if (info.kind == CounterKind::Rate) s += ", \"better\": \"higher\"";
    s += "}";
  }
  return s + "\n    }";
}

std::string entry_json(const benchmark::BenchmarkReporter::Run& r) {
  const Registered* reg = find_registered(r.run_name.function_name);
  const Disposition d = disposition_of(r, reg);
  std::string s = "{\"disposition\": " + quoted(to_string(d));
  if (d != Disposition::Passed) s += ", \"reason\": " + quoted(reg ? reg->reason : std::string());
  // How the result was checked against the family's reference ("full",
  // "sampled+freivalds", "full+stable", "assignment" ...).
  if (d == Disposition::Passed && reg && !reg->verified.empty())
    s += ", \"verified\": " + quoted(reg->verified);
  if (reg) {
    s += ", \"role\": " + quoted(to_string(reg->role));
    s += ", \"device\": " + quoted(on_gpu(reg->backend) ? "gpu" : "cpu");
    if (d == Disposition::Passed && !reg->energy.empty()) s += ", \"energy\": " + quoted(reg->energy);
    if (!reg->rate.empty())
      s += ", \"rate\": {\"counter\": " + quoted(reg->rate.counter) +
           ", \"ceiling\": " + quoted(reg->rate.kind) +
           (reg->rate.roof.empty() ? std::string() : ", \"roof\": " + quoted(reg->rate.roof)) + "}";
    if (!reg->code_fingerprint.empty()) s += ", \"code\": " + quoted(reg->code_fingerprint);
    if (!reg->library.empty()) s += ", \"library\": " + quoted(reg->library);
    if (!reg->library_version.empty()) s += ", \"library_version\": " + quoted(reg->library_version);
  }
  return s + "}";
}

// Google Benchmark's JSON, each piece of it rewritten on its way out.
class JsonReporter final : public benchmark::JSONReporter {
 public:
  bool ReportContext(const Context& context) override {
    std::ostream& out = GetOutputStream();
    std::ostringstream buf;
    SetOutputStream(&buf);
    const bool ok = benchmark::JSONReporter::ReportContext(context);
    SetOutputStream(&out);
    std::string s = without_nonfinite(buf.str());
    const auto end = s.rfind("\n  },\n  \"benchmarks\": [");
    if (end != std::string::npos)
      s.insert(end, ",\n    \"parbench_schema\": " + std::to_string(kSchemaVersion) +
                        ",\n    \"parbench_counters\": " + counters_json());
    out << s;
    return ok;
  }

  void ReportRuns(const std::vector<Run>& runs) override {
    std::ostream& out = GetOutputStream();
    for (const auto& r : runs) {
      std::ostringstream buf;
      SetOutputStream(&buf);
      benchmark::JSONReporter::ReportRuns(std::vector<Run>{r});
      SetOutputStream(&out);
      std::string s = without_nonfinite(buf.str());
      // The entry ends "\n    }": the object goes after its last field.
      const auto close = s.rfind('}');
      const auto nl = close == std::string::npos ? close : s.rfind('\n', close);
      if (nl != std::string::npos) s.insert(nl, ",\n      \"parbench\": " + entry_json(r));
      out << s;
    }
    out.flush();  // a run killed later keeps what was reported (plots recover a cut file)
  }
};

const char* const kDebugWarning = "***WARNING*** Library was built as DEBUG. Timings may be affected.";
const char* const kDebugNote =
    "note: this Google Benchmark library was built without NDEBUG (Debian's libbenchmark is), which slows "
    "its "
    "own bookkeeping between runs; parbench times every run itself (wall clock or CUDA events, reported as "
    "manual time), so its numbers are not affected.";

class Console final : public benchmark::ConsoleReporter {
 public:
  Console(OutputOptions o, Unsupported mode) : benchmark::ConsoleReporter(o), mode_(mode) {}

  bool ReportContext(const Context& context) override {
    std::ostream& err = GetErrorStream();
    std::ostringstream buf;
    SetErrorStream(&buf);
    const bool ok = benchmark::ConsoleReporter::ReportContext(context);
    SetErrorStream(&err);
    std::string s = buf.str();
    const auto at = s.find(kDebugWarning);
    if (at != std::string::npos) s.replace(at, std::string(kDebugWarning).size(), kDebugNote);
    progress::Hold hold;
    err << s;
    err.flush();
    return ok;
  }

  void ReportRuns(const std::vector<Run>& runs) override {
    std::vector<Run> shown;
    for (const auto& r : runs) {
      const Registered* reg = find_registered(r.run_name.function_name);
      const bool unsupported = run_flagged(r, 0) && reg && reg->disposition == Disposition::Unsupported;
      if (!unsupported || mode_ == Unsupported::Show) {
        shown.push_back(r);
      } else if (mode_ == Unsupported::Summary) {
        auto it = std::find_if(reasons_.begin(), reasons_.end(),
                               [&](const auto& p) { return p.first == reg->reason; });
        if (it == reasons_.end())
          reasons_.emplace_back(reg->reason, 1);
        else
          ++it->second;
      }
    }
    if (shown.empty()) return;
    progress::Hold hold;
    benchmark::ConsoleReporter::ReportRuns(shown);
    GetOutputStream().flush();
  }

  void Finalize() override {
    if (!reasons_.empty()) {
      std::stable_sort(reasons_.begin(), reasons_.end(),
                       [](const auto& a, const auto& b) { return a.second > b.second; });
      std::ostream& out = GetOutputStream();
      progress::Hold hold;
      for (const auto& [reason, n] : reasons_)
        out << n << (n == 1 ? " entry" : " entries")
            << " unsupported: " << (reason.rfind("unsupported: ", 0) == 0 ? reason.substr(13) : reason)
            << "\n";
      out << "(--show-unsupported lists each entry; the JSON keeps them all)\n";
      out.flush();
    }
    benchmark::ConsoleReporter::Finalize();
  }

 private:
  Unsupported mode_;
  std::vector<std::pair<std::string, int>> reasons_;  // in the order first seen, counted
};

}  // namespace

std::string without_nonfinite(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  std::size_t pos = 0;
  while (pos < json.size()) {
    std::size_t eol = json.find('\n', pos);
    if (eol == std::string::npos) eol = json.size();
    std::string line = json.substr(pos, eol - pos);
    // A value is the text after the line's last "\": " up to an optional comma.
    const auto sep = line.rfind("\": ");
    if (sep != std::string::npos) {
      const std::size_t v = sep + 3;
      std::size_t e = line.size();
      if (e > v && line[e - 1] == ',') --e;
      const std::string value = line.substr(v, e - v);
      if (value == "NaN" || value == "-NaN" || value == "Infinity" || value == "-Infinity")
        line = line.substr(0, v) + "null" + line.substr(e);
    }
    out += line;
    if (eol < json.size()) out += '\n';
    pos = eol + 1;
  }
  return out;
}

std::unique_ptr<benchmark::BenchmarkReporter> make_display_reporter(const std::string& format,
                                                                    const ConsoleSettings& console) {
  if (format == "json") return std::make_unique<JsonReporter>();
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  if (format == "csv") return std::make_unique<benchmark::CSVReporter>();
#pragma GCC diagnostic pop
  int o = benchmark::ConsoleReporter::OO_None;
  if (console.color) o |= benchmark::ConsoleReporter::OO_Color;
  if (console.tabular) o |= benchmark::ConsoleReporter::OO_Tabular;
  return std::make_unique<Console>(benchmark::ConsoleReporter::OutputOptions(o), console.unsupported);
}

std::unique_ptr<benchmark::BenchmarkReporter> make_file_reporter(const std::string& format) {
  if (format == "json") return std::make_unique<JsonReporter>();
  ConsoleSettings plain;  // a file gets no colours and every entry
  plain.unsupported = Unsupported::Show;
  return make_display_reporter(format, plain);
}

std::string Outcomes::text() const {
  std::string s = std::to_string(passed) + " passed, " + std::to_string(unsupported) + " unsupported, " +
                  std::to_string(incorrect) + " incorrect, " + std::to_string(out_of_memory) +
                  " out of memory, " + std::to_string(failed) + " failed";
  return s;
}

Outcomes outcomes() {
  Outcomes t;
  for (const auto& r : registered()) switch (r.disposition) {
      case Disposition::Passed: ++t.passed; break;
      case Disposition::Unsupported: ++t.unsupported; break;
      case Disposition::Incorrect: ++t.incorrect; break;
      case Disposition::OutOfMemory: ++t.out_of_memory; break;
      case Disposition::Failed: ++t.failed; break;
      case Disposition::NotRun: ++t.not_run; break;
    }
  return t;
}

}  // namespace pb
