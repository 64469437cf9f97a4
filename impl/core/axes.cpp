#include "core/axes.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "core/meta.hpp"
#include "core/status.hpp"
#include "core/strings.hpp"

namespace pb {

AxisParser words(std::vector<std::string> allowed) {
  return [allowed](const std::string& flag, const std::string& item) {
    return parse_word_list(flag, item, allowed).at(0);
  };
}

AxisParser counts(std::int64_t lo, std::int64_t hi) {
  return [lo, hi](const std::string& flag, const std::string& item) {
    const std::int64_t v = parse_counts(flag, item, hi).at(0);
    if (v < lo)
      throw UsageError(flag + ": " + item + " is out of range [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "]");
    return std::to_string(v);
  };
}

AxisParser integers(std::int64_t lo, std::int64_t hi) {
  return [lo, hi](const std::string& flag, const std::string& item) {
    return std::to_string(parse_int(flag, item, lo, hi));
  };
}

NameArgs dims_as(std::vector<std::string> keys) {
  return [keys](const std::string& value) {
    const auto parts = split(value, 'x');
    if (parts.size() != keys.size())
      throw std::logic_error("'" + value + "' has not " + std::to_string(keys.size()) + " parts");
    std::vector<std::pair<std::string, std::string>> out;
    for (std::size_t i = 0; i < keys.size(); ++i) out.emplace_back(keys[i], parts[i]);
    return out;
  };
}

const std::string& Point::operator[](const std::string& name) const {
  for (const auto& [axis, value] : values)
    if (axis == name) return value;
  throw std::logic_error("no axis named " + name);
}

std::int64_t Point::integer(const std::string& name) const { return std::stoll((*this)[name]); }
double Point::number(const std::string& name) const { return std::stod((*this)[name]); }

AxisSet::AxisSet(std::string family, std::vector<Axis> axes, Refuse refuse,
                 std::vector<std::string> name_order)
    : family_(std::move(family)), axes_(std::move(axes)), refuse_(std::move(refuse)) {
  for (const auto& a : axes_)
    if (a.smoke.empty() || a.normal.empty() || a.full.empty() || !a.parse || !valid_token(a.key))
      throw std::logic_error(family_ + " axis " + a.name +
                             ": a parser, a run-name key and values for every profile");
  if (name_order.empty())
    for (const auto& a : axes_) name_order.push_back(a.name);
  for (const auto& n : name_order) {
    const auto it = std::find_if(axes_.begin(), axes_.end(), [&](const Axis& a) { return a.name == n; });
    if (it == axes_.end()) throw std::logic_error(family_ + ": no axis " + n + " to name");
    named_.push_back(&*it);
  }
  if (named_.size() != axes_.size())
    throw std::logic_error(family_ + ": the name order must list every axis once");
}

std::string AxisSet::flag(const std::string& name) const {
  std::string f = "--" + family_ + "-" + name;
  std::transform(f.begin(), f.end(), f.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return f;
}

std::vector<std::string> AxisSet::parse_list(const Axis& a, const std::string& flag,
                                             const std::string& text) const {
  if (text.empty()) throw UsageError(flag + ": empty list");
  std::vector<std::string> out;
  for (const auto& item : split(text, ',')) {
    if (item.empty()) throw UsageError(flag + ": an empty item in '" + text + "'");
    const std::string v = a.parse(flag, item);
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

namespace {
std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}
}  // namespace

FlagSection AxisSet::flags() const {
  FlagSection section;
  section.title = family_;
  for (const auto& a : axes_) {
    std::string help = a.help + " (default " + joined(a.normal) + "; smoke " + joined(a.smoke) + "; full " +
                       joined(a.full) + ")";
    const Axis* axis = &a;
    section.flags.push_back({flag(a.name), "LIST", help,
                             [this, axis](const std::string& f, const std::string& v) {
                               return std::any(parse_list(*axis, f, v));
                             },
                             a.old_names});
  }
  return section;
}

std::vector<std::string> AxisSet::values(const Axis& a, const Options& opt, bool& given) const {
  const std::string f = flag(a.name);
  // A given list was parsed once, by parse_options (flags()).
  if (const auto* list = opt.value<std::vector<std::string>>(f)) {
    given = true;
    return *list;
  }
  if (opt.flag(f)) throw std::logic_error(f + " was given but not parsed: options come from parse_options");
  given = false;
  const auto& defaults = opt.profile == Profile::Smoke  ? a.smoke
                         : opt.profile == Profile::Full ? a.full
                                                        : a.normal;
  std::vector<std::string> out;
  for (const auto& item : defaults) out.push_back(a.parse("the default of " + f, item));
  return out;
}

std::vector<Point> AxisSet::points(const Options& opt) const {
  std::vector<std::vector<std::string>> lists;
  std::vector<bool> given(axes_.size(), false);
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    bool g = false;
    lists.push_back(values(axes_[i], opt, g));
    given[i] = g;
  }
  // Each point with the raw point it came from (the values as listed).
  std::vector<Point> out, out_raw;
  std::vector<std::pair<Point, std::string>> refused;  // raw point, the line saying why
  std::vector<std::size_t> at(axes_.size(), 0);
  for (bool more = !axes_.empty(); more;) {
    Point raw;
    for (std::size_t i = 0; i < axes_.size(); ++i) raw.values.emplace_back(axes_[i].name, lists[i][at[i]]);
    Point p = raw;
    for (std::size_t i = 0; i < axes_.size(); ++i)
      if (axes_[i].resolve) p.values[i].second = axes_[i].resolve(raw.values[i].second, raw);
    const std::string why = refuse_ ? refuse_(p) : "";
    if (!why.empty()) {
      std::string combo;
      for (const auto& [k, v] : name(p, "").args) combo += (combo.empty() ? "" : " ") + k + ":" + v;
      refused.emplace_back(std::move(raw), family_ + ": " + combo + ": " + why);
    } else if (std::none_of(out.begin(), out.end(), [&](const Point& q) { return q.values == p.values; })) {
      out.push_back(std::move(p));
      out_raw.push_back(std::move(raw));
    }
    // The last axis turns fastest.
    more = false;
    for (std::size_t i = axes_.size(); i-- > 0;) {
      if (++at[i] < lists[i].size()) {
        more = true;
        break;
      }
      at[i] = 0;
    }
  }
  // A value given on the command line that no allowed combination holds was
  // asked for in vain: the first refusal that holds it says why.
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    if (!given[i]) continue;
    for (const auto& v : lists[i]) {
      const std::string& axis = axes_[i].name;
      const bool kept =
          std::any_of(out_raw.begin(), out_raw.end(), [&](const Point& p) { return p[axis] == v; });
      if (kept) continue;
      for (const auto& [p, line] : refused)
        if (p[axis] == v) throw UsageError(line);
    }
  }
  if (out.empty() && !refused.empty())
    throw UsageError("no combination of the " + family_ + " axes is left (" + refused.front().second + ")");
  return out;
}

RunName AxisSet::name(const Point& p, const std::string& variant) const {
  RunName n{family_, variant, {}};
  for (const Axis* a : named_) {
    if (a->name_args)
      for (auto& arg : a->name_args(p[a->name])) n.args.push_back(std::move(arg));
    else
      n.args.emplace_back(a->key, p[a->name]);
  }
  return n;
}

Counters AxisSet::counters(const Point& p) const {
  Counters out;
  for (const auto& a : axes_)
    if (a.counter) out.emplace_back(a.key, p.number(a.name));
  return out;
}

void AxisSet::declare_counters() const {
  for (const auto& a : axes_)
    if (a.counter) declare_counter(a.key, CounterKind::Problem);
}

}  // namespace pb
