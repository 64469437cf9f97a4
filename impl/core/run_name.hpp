#pragma once
// The one run-name grammar:  Family/Variant/key:value/key:value...
// Google Benchmark may append "/manual_time" or "/real_time" and, for
// aggregates, "_mean", "_median", "_stddev", "_cv". format() writes names;
// the tools read them with regress/load/results.py (parse_run_name), the one parser.
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pb {

struct RunName {
  std::string family;
  std::string variant;
  std::vector<std::pair<std::string, std::string>> args;  // in order

  std::string format() const;  // without time_kind/aggregate
  const std::string* get(const std::string& key) const;
};

// Keys and values may not contain the separators '/' and ':'.
bool valid_token(const std::string& s);

}  // namespace pb
