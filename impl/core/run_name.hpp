#pragma once
// The one run-name grammar:  Family/Variant/key:value/key:value...
// Google Benchmark may append "/manual_time" or "/real_time" and, for
// aggregates, "_mean", "_median", "_stddev", "_cv". format() writes names;
// parse() reads them back (the Python twin is plots/pbjson.py).
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pb {

struct RunName {
  std::string family;
  std::string variant;
  std::vector<std::pair<std::string, std::string>> args;  // in order
  std::string time_kind;                                  // "manual_time", "real_time" or empty
  std::string aggregate;                                  // "mean", "median", "stddev", "cv" or empty

  std::string format() const;  // without time_kind/aggregate
  const std::string* get(const std::string& key) const;
};

// Throws UsageError on a name outside the grammar.
RunName parse_run_name(const std::string& name);

// Keys and values may not contain the separators '/' and ':'.
bool valid_token(const std::string& s);

}  // namespace pb
