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

}  // namespace pb
