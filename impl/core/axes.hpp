#pragma once
// A family's problem axes declared once, as data: core turns the declaration
// into the --<family>-<axis> flags (help, validation, each value parsed
// once), the values each profile sweeps, the cross product (less the
// combinations the family refuses), the run-name arguments and the
// counters. A family writes no loops over its axes and no flag parsing, and
// reads each value back in the type its axis declares:
//
//   const AxisSet& axes() {
//     static const AxisSet a{"Scan", {
//         Axis::choice<Type>("type", {{"u32", Type::U32}, {"f32", Type::F32}}).help("element types")
//             .values({"u32"}, {"u32", "f32"}, {"u32", "f32"}),
//         Axis::count("elements", 1, 1 << 30).key("n").help("elements").counter()
//             .values({"1000"}, {"2^24"}, {"2^24", "2^28"})}};
//     return a;
//   }
//   for (const Point& p : axes().points(opt))
//     ... p.get<Type>("type"), p.get<std::int64_t>("elements"), axes().name(p, variant) ...
#include <any>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/job.hpp"
#include "core/options.hpp"
#include "core/run_name.hpp"

namespace pb {

class Point;
using NameArgs = std::vector<std::pair<std::string, std::string>>;

// One axis: its flag, its run-name key, its help, the values each profile
// sweeps and how a value is parsed, spelt, named and counted. Built with
// named setters from one of the typed constructors (of, count, integer,
// word, choice, shape); an axis's values are of one C++ type, the
// one Point::get reads them back as.
class Axis {
 public:
  template <class T>
  using Parse = std::function<T(const std::string& flag, const std::string& item)>;
  template <class T>
  using Format = std::function<std::string(const T&)>;

  // An axis of values of type T: `parse` makes one from an item as typed
  // (throwing UsageError naming `flag`), `format` spells it canonically (the
  // run name's spelling; two values that spell alike are one).
  template <class T>
  static Axis of(std::string name, Parse<T> parse, Format<T> format);
  // The common kinds. count: a std::int64_t in [lo, hi] written N or 2^K;
  // integer: a std::int64_t in [lo, hi]; word: one
  // of `allowed`, a std::string; choice: one of the words, read back as the
  // E it maps to; shape: a Shape3 written N (a cube) or MxNxK, each in
  // [1, max], named and counted as M, N and K.
  static Axis count(std::string name, std::int64_t lo, std::int64_t hi);
  static Axis integer(std::string name, std::int64_t lo, std::int64_t hi);
  static Axis word(std::string name, std::vector<std::string> allowed);
  template <class E>
  static Axis choice(std::string name, std::vector<std::pair<std::string, E>> words);
  static Axis shape(std::string name, std::int64_t max);

  // The run-name key (and counter name) of a value; default the axis name.
  Axis& key(std::string k);
  // What a value is; the flag's help adds the defaults.
  Axis& help(std::string h);
  // The values each profile sweeps when the flag is not given, as typed:
  // parsed like the flag's, so a wrong default fails at start-up.
  Axis& values(std::vector<std::string> smoke, std::vector<std::string> normal,
               std::vector<std::string> full);
  // The same, as values of the axis's type (ones a flag cannot spell, such
  // as a named configuration); the help lists their canonical spellings.
  template <class T>
  Axis& typed_values(std::vector<T> smoke, std::vector<T> normal, std::vector<T> full);
  // An earlier spelling of the flag, still accepted (FamilyFlag::old_names).
  Axis& old(std::string flag);
  // A numeric axis (std::int64_t or double values) written as a counter
  // named `key`, a problem axis.
  Axis& counter();
  // Counters named `keys` from a value of type T (a shape's M, N and K).
  template <class T>
  Axis& counters(std::vector<std::string> keys, std::function<std::vector<double>(const T&)> of);
  // The run-name arguments of a value where they are not key:<spelling>
  // (a grid "1000x1500" as M:1000/N:1500; none at all for a default type).
  template <class T>
  Axis& name_args(std::function<NameArgs(const T&)> of);
  // A label of a value: a run-name argument `key` of its own, placed where
  // AxisSet's name order lists `key` (k-means' cfg:<configuration>).
  template <class T>
  Axis& label(std::string key, std::function<std::string(const T&)> of);
  // A value that stands for another given the rest of the point (sort's
  // length "all" for the point's element count); the point holds the
  // resolved value, and points that resolve alike are one.
  template <class T>
  Axis& resolve(std::function<T(const T& value, const Point& raw)> of);

  const std::string& name() const { return name_; }

 private:
  friend class AxisSet;
  friend class Point;
  struct Label {
    std::string key;
    std::function<std::string(const std::any&)> of;
  };
  std::any parse(const std::string& flag, const std::string& item) const { return parse_(flag, item); }
  std::string format(const std::any& v) const { return format_(v); }

  std::string name_, key_, help_;
  std::function<std::any(const std::string&, const std::string&)> parse_;
  std::function<std::string(const std::any&)> format_;
  std::vector<std::string> smoke_, normal_, full_;  // as typed
  std::vector<std::any> typed_smoke_, typed_normal_, typed_full_;
  bool typed_defaults_ = false;
  std::vector<std::string> old_names_;
  bool scalar_counter_ = false;  // counter(): the value itself, named key_
  std::vector<std::string> counter_keys_;
  std::function<std::vector<double>(const std::any&)> counters_;
  std::function<NameArgs(const std::any&)> name_args_;
  std::vector<Label> labels_;
  std::function<std::any(const std::any&, const Point&)> resolve_;
};

// One value of an axis: what its parser made and its canonical spelling.
struct AxisValue {
  std::any value;
  std::string text;
};

// One combination of the axes: each axis's value, parsed once.
class Point {
 public:
  // The value of axis `name` as its declared type; std::logic_error if the
  // family declares no such axis or reads it as another type.
  template <class T>
  const T& get(const std::string& name) const {
    if (const T* v = std::any_cast<T>(&find(name).value)) return *v;
    throw std::logic_error("axis " + name + " is read back as another type than it declares");
  }
  // The canonical spelling of axis `name`'s value (the run name's).
  const std::string& text(const std::string& name) const { return find(name).text; }
  // (axis name, value) in declaration order.
  std::vector<std::pair<std::string, AxisValue>> values;

 private:
  const AxisValue& find(const std::string& name) const;
};

class AxisSet {
 public:
  // `refuse` gives why a combination (its values resolved) is not a problem
  // the family runs, or "" where it is. Refused combinations are left out; a
  // value given on the command line that only refused combinations hold is
  // a usage error. `name_order` lists the axes (and labels, by key) in
  // run-name order where it differs from the declaration's (the cross
  // product's, outermost first); an axis's labels not listed come first.
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
  // Family/variant/key:value... in name order.
  RunName name(const Point& p, const std::string& variant) const;
  // The counter axes' values, for RegisterOptions::axes.
  Counters counters(const Point& p) const;
  // Declares the counter axes as problem counters (once per run).
  void declare_counters() const;

 private:
  std::vector<AxisValue> values(const Axis& a, const Options& opt, bool& given) const;
  std::vector<AxisValue> parse_list(const Axis& a, const std::string& flag, const std::string& text) const;

  std::string family_;
  std::vector<Axis> axes_;
  Refuse refuse_;
  // The run name's parts in order: an axis's value (label empty) or one of its labels.
  struct Part {
    const Axis* axis;
    const Axis::Label* label;
  };
  std::vector<Part> named_;
};

// Replaces counter `key` in `c` (a weak-scaling instance's grown size).
void set_counter(Counters& c, const std::string& key, double value);

// ---- templates ----

template <class T>
Axis Axis::of(std::string name, Parse<T> parse, Format<T> format) {
  Axis a;
  a.name_ = name;
  a.key_ = std::move(name);
  a.parse_ = [parse](const std::string& flag, const std::string& item) {
    return std::any(parse(flag, item));
  };
  a.format_ = [format](const std::any& v) { return format(std::any_cast<const T&>(v)); };
  return a;
}

template <class E>
Axis Axis::choice(std::string name, std::vector<std::pair<std::string, E>> words) {
  std::vector<std::string> allowed;
  for (const auto& w : words) allowed.push_back(w.first);
  return of<E>(
      std::move(name),
      [words, allowed](const std::string& flag, const std::string& item) {
        const std::string w = parse_word_list(flag, item, allowed).at(0);
        for (const auto& [text, e] : words)
          if (text == w) return e;
        throw std::logic_error(flag + ": " + w);
      },
      [words](const E& e) {
        for (const auto& [text, v] : words)
          if (v == e) return text;
        throw std::logic_error("a value with no word");
      });
}

template <class T>
Axis& Axis::typed_values(std::vector<T> smoke, std::vector<T> normal, std::vector<T> full) {
  auto wrap = [](const std::vector<T>& v) { return std::vector<std::any>(v.begin(), v.end()); };
  typed_smoke_ = wrap(smoke), typed_normal_ = wrap(normal), typed_full_ = wrap(full);
  typed_defaults_ = true;
  return *this;
}

template <class T>
Axis& Axis::counters(std::vector<std::string> keys, std::function<std::vector<double>(const T&)> of) {
  counter_keys_ = std::move(keys);
  counters_ = [of](const std::any& v) { return of(std::any_cast<const T&>(v)); };
  return *this;
}

template <class T>
Axis& Axis::name_args(std::function<NameArgs(const T&)> of) {
  name_args_ = [of](const std::any& v) { return of(std::any_cast<const T&>(v)); };
  return *this;
}

template <class T>
Axis& Axis::label(std::string key, std::function<std::string(const T&)> of) {
  labels_.push_back({std::move(key), [of](const std::any& v) { return of(std::any_cast<const T&>(v)); }});
  return *this;
}

template <class T>
Axis& Axis::resolve(std::function<T(const T& value, const Point& raw)> of) {
  resolve_ = [of](const std::any& v, const Point& raw) {
    return std::any(of(std::any_cast<const T&>(v), raw));
  };
  return *this;
}

}  // namespace pb
