#pragma once
// A family's problem axes declared once, as data: core turns the declaration
// into the --<family>-<axis> flags (help, validation, each value parsed
// once), the values each profile sweeps, the cross product (less the
// combinations the family refuses), the run-name arguments and the
// counters. A family writes no loops over its axes and no flag parsing.
//
//   const AxisSet& axes() {
//     static const AxisSet a{"Scan", {
//         {"type", "type", "element types", {"u32"}, {"u32", "f32"}, {"u32", "f32"}, words({"u32", "f32"})},
//         {"elements", "n", "elements", {"1000"}, {"2^24"}, {"2^24", "2^28"}, counts(1, 1 << 30), true}}};
//     return a;
//   }
//   for (const Point& p : axes().points(opt)) ... axes().name(p, variant) ...
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/job.hpp"
#include "core/options.hpp"
#include "core/run_name.hpp"

namespace pb {

// One item of an axis's list, as typed, to its canonical spelling (the run
// name's); throws UsageError naming `flag` where it does not parse.
using AxisParser = std::function<std::string(const std::string& flag, const std::string& item)>;

// The common parsers: one of `allowed`; a count in [lo, hi] written N or
// 2^K (canonical: decimal); an integer in [lo, hi].
AxisParser words(std::vector<std::string> allowed);
AxisParser counts(std::int64_t lo, std::int64_t hi);
AxisParser integers(std::int64_t lo, std::int64_t hi);

// Axis::name_args for a value of parts joined by 'x' ("1000x1500"): one
// run-name argument per part, keyed in order (M, N).
using NameArgs = std::function<std::vector<std::pair<std::string, std::string>>(const std::string& value)>;
NameArgs dims_as(std::vector<std::string> keys);

struct Axis {
  std::string name;  // the flag --<family>-<name>
  std::string key;   // the run-name key (a counter's name too)
  std::string help;  // what a value is; the flag's help adds the defaults
  // The values each profile sweeps when the flag is not given (as typed:
  // parsed like the flag's, so a wrong default fails at start-up).
  std::vector<std::string> smoke, normal, full;
  AxisParser parse;
  bool counter = false;  // a number: written as a counter named `key` (a problem axis)
  // The run-name arguments of a value where it names more than one (a grid
  // "1000x1500" as M:1000/N:1500); unset: key:value.
  NameArgs name_args = {};
  // A value that stands for another given the rest of the point (sort's
  // length "all" for the point's element count); the point holds the
  // resolved value, and points that resolve alike are one. Unset: as parsed.
  std::function<std::string(const std::string& value, const class Point& raw)> resolve = {};
  // Earlier spellings of the flag, still accepted (FamilyFlag::old_names).
  std::vector<std::string> old_names = {};
};

// One combination of the axes: each axis's canonical value.
class Point {
 public:
  // The value of axis `name` (its declared name); std::logic_error if the
  // family declares no such axis.
  const std::string& operator[](const std::string& name) const;
  std::int64_t integer(const std::string& name) const;
  double number(const std::string& name) const;
  // (axis name, value) in declaration order.
  std::vector<std::pair<std::string, std::string>> values;
};

class AxisSet {
 public:
  // `refuse` gives why a combination (its values resolved) is not a problem
  // the family runs, or "" where it is. Refused combinations are left out; a
  // value given on the command line that only refused combinations hold is
  // a usage error. `name_order` lists the axes in run-name order where it
  // differs from the declaration's (the cross product's, outermost first).
  using Refuse = std::function<std::string(const Point&)>;
  AxisSet(std::string family, std::vector<Axis> axes, Refuse refuse = {},
          std::vector<std::string> name_order = {});

  // --<family>-<axis> for every axis (family in lower case), with help that
  // names the defaults; each parses its list once, for parse_options to keep.
  FlagSection flags() const;
  // The flag of axis `name`.
  std::string flag(const std::string& name) const;
  // The cross product for `opt` (flags given, else the profile's values), in
  // declaration order (the first axis outermost), less refused combinations.
  // UsageError: an empty list, a value that does not parse, a given value
  // that only refused combinations hold, or nothing left.
  std::vector<Point> points(const Options& opt) const;
  // Family/variant/key:value... in declaration order.
  RunName name(const Point& p, const std::string& variant) const;
  // The counter axes' values, for RegisterOptions::axes.
  Counters counters(const Point& p) const;
  // Declares the counter axes as problem counters (once per run).
  void declare_counters() const;

 private:
  std::vector<std::string> values(const Axis& a, const Options& opt, bool& given) const;
  std::vector<std::string> parse_list(const Axis& a, const std::string& flag, const std::string& text) const;

  std::string family_;
  std::vector<Axis> axes_;
  Refuse refuse_;
  std::vector<const Axis*> named_;  // the axes in run-name order
};

}  // namespace pb
