#pragma once
#include <string>
#include <vector>

namespace pb {
// "a,b,,c" -> {"a", "b", "", "c"}: empty fields are kept so callers can reject them.
inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string::size_type start = 0;
  for (;;) {
    auto pos = s.find(sep, start);
    out.push_back(s.substr(start, pos - start));
    if (pos == std::string::npos) return out;
    start = pos + 1;
  }
}
}  // namespace pb
