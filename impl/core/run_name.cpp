#include "core/run_name.hpp"

#include "core/status.hpp"
#include "core/strings.hpp"

namespace pb {
bool valid_token(const std::string& s) { return !s.empty() && s.find_first_of("/: ") == std::string::npos; }

std::string RunName::format() const {
  std::string out = family + "/" + variant;
  for (const auto& [k, v] : args) out += "/" + k + ":" + v;
  return out;
}

const std::string* RunName::get(const std::string& key) const {
  for (const auto& kv : args)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

RunName parse_run_name(const std::string& name) {
  auto parts = split(name, '/');
  if (parts.size() < 2 || !valid_token(parts[0]) || !valid_token(parts[1]))
    throw UsageError("run name '" + name + "' is not Family/Variant[/key:value...]");
  RunName r;
  r.family = parts[0];
  r.variant = parts[1];
  // An aggregate suffix rides on the last component: ".../N:64/manual_time_median".
  auto& last = parts.back();
  for (const char* agg : {"mean", "median", "stddev", "cv"}) {
    std::string suffix = std::string("_") + agg;
    if (parts.size() > 2 && last.size() > suffix.size() &&
        last.compare(last.size() - suffix.size(), suffix.size(), suffix) == 0) {
      r.aggregate = agg;
      last.erase(last.size() - suffix.size());
      break;
    }
  }
  for (std::size_t i = 2; i < parts.size(); ++i) {
    const auto& p = parts[i];
    if (i + 1 == parts.size() && (p == "manual_time" || p == "real_time")) {
      r.time_kind = p;
      continue;
    }
    auto colon = p.find(':');
    if (colon == std::string::npos)
      throw UsageError("run name '" + name + "': component '" + p + "' is not key:value");
    auto key = p.substr(0, colon), value = p.substr(colon + 1);
    if (!valid_token(key) || !valid_token(value))
      throw UsageError("run name '" + name + "': bad component '" + p + "'");
    r.args.emplace_back(key, value);
  }
  return r;
}

}  // namespace pb
