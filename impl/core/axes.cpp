#include "core/axes.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "core/meta.hpp"
#include "core/status.hpp"
#include "core/strings.hpp"

namespace pb {

Axis Axis::count(std::string name, std::int64_t lo, std::int64_t hi) {
  return of<std::int64_t>(
      std::move(name),
      [lo, hi](const std::string& flag, const std::string& item) {
        const std::int64_t v = parse_counts(flag, item, hi).at(0);
        if (v < lo)
          throw UsageError(flag + ": " + item + " is out of range [" + std::to_string(lo) + ", " +
                           std::to_string(hi) + "]");
        return v;
      },
      [](const std::int64_t& v) { return std::to_string(v); });
}

Axis Axis::integer(std::string name, std::int64_t lo, std::int64_t hi) {
  return of<std::int64_t>(
      std::move(name),
      [lo, hi](const std::string& flag, const std::string& item) { return parse_int(flag, item, lo, hi); },
      [](const std::int64_t& v) { return std::to_string(v); });
}

Axis Axis::word(std::string name, std::vector<std::string> allowed) {
  return of<std::string>(
      std::move(name),
      [allowed](const std::string& flag, const std::string& item) {
        return parse_word_list(flag, item, allowed).at(0);
      },
      [](const std::string& v) { return v; });
}

Axis Axis::shape(std::string name, std::int64_t max) {
  Axis a = of<Shape3>(
      std::move(name),
      [max](const std::string& flag, const std::string& item) { return parse_sizes(item, flag, max).at(0); },
      [](const Shape3& s) { return s.str(); });
  a.name_args<Shape3>([](const Shape3& s) -> NameArgs {
    return {{"M", std::to_string(s.m)}, {"N", std::to_string(s.n)}, {"K", std::to_string(s.k)}};
  });
  a.counters<Shape3>({"M", "N", "K"}, [](const Shape3& s) {
    return std::vector<double>{double(s.m), double(s.n), double(s.k)};
  });
  return a;
}

Axis& Axis::key(std::string k) {
  key_ = std::move(k);
  return *this;
}
Axis& Axis::help(std::string h) {
  help_ = std::move(h);
  return *this;
}
Axis& Axis::values(std::vector<std::string> smoke, std::vector<std::string> normal,
                   std::vector<std::string> full) {
  smoke_ = std::move(smoke), normal_ = std::move(normal), full_ = std::move(full);
  typed_defaults_ = false;
  return *this;
}
Axis& Axis::old(std::string flag) {
  old_names_.push_back(std::move(flag));
  return *this;
}
Axis& Axis::counter() {
  scalar_counter_ = true;
  return *this;
}

const AxisValue& Point::find(const std::string& name) const {
  for (const auto& [axis, value] : values)
    if (axis == name) return value;
  throw std::logic_error("no axis named " + name);
}

void set_counter(Counters& c, const std::string& key, double value) {
  for (auto& [k, v] : c)
    if (k == key) {
      v = value;
      return;
    }
  throw std::logic_error("no counter " + key);
}

namespace {
double as_number(const std::any& v, const std::string& axis) {
  if (const auto* i = std::any_cast<std::int64_t>(&v)) return double(*i);
  if (const auto* d = std::any_cast<double>(&v)) return *d;
  throw std::logic_error("axis " + axis + " is a counter but its values are not numbers");
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}
}  // namespace

AxisSet::AxisSet(std::string family, std::vector<Axis> axes, Refuse refuse,
                 std::vector<std::string> name_order)
    : family_(std::move(family)), axes_(std::move(axes)), refuse_(std::move(refuse)) {
  for (const auto& a : axes_) {
    const bool defaults = a.typed_defaults_
                              ? !a.typed_smoke_.empty() && !a.typed_normal_.empty() && !a.typed_full_.empty()
                              : !a.smoke_.empty() && !a.normal_.empty() && !a.full_.empty();
    if (!defaults || !a.parse_ || !valid_token(a.key_))
      throw std::logic_error(family_ + " axis " + a.name_ +
                             ": a parser, a run-name key and values for every profile");
  }
  // Unlisted labels go first, then the listed order (default: the declaration's).
  std::vector<std::string> order = name_order;
  if (order.empty())
    for (const auto& a : axes_) order.push_back(a.name_);
  for (const auto& a : axes_)
    for (const auto& l : a.labels_)
      if (std::find(order.begin(), order.end(), l.key) == order.end()) named_.push_back({&a, &l});
  std::size_t axes_named = 0;
  for (const auto& n : order) {
    const Part* found = nullptr;
    Part part{nullptr, nullptr};
    for (const auto& a : axes_) {
      if (a.name_ == n) part = {&a, nullptr}, found = &part, ++axes_named;
      for (const auto& l : a.labels_)
        if (l.key == n) part = {&a, &l}, found = &part;
    }
    if (!found) throw std::logic_error(family_ + ": no axis or label " + n + " to name");
    named_.push_back(part);
  }
  if (axes_named != axes_.size())
    throw std::logic_error(family_ + ": the name order must list every axis once");
}

std::string AxisSet::flag(const std::string& name) const {
  std::string f = "--" + family_ + "-" + name;
  std::transform(f.begin(), f.end(), f.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return f;
}

std::vector<AxisValue> AxisSet::parse_list(const Axis& a, const std::string& flag,
                                           const std::string& text) const {
  if (text.empty()) throw UsageError(flag + ": empty list");
  std::vector<AxisValue> out;
  for (const auto& item : split(text, ',')) {
    if (item.empty()) throw UsageError(flag + ": an empty item in '" + text + "'");
    std::any v = a.parse(flag, item);
    std::string t = a.format(v);
    if (std::none_of(out.begin(), out.end(), [&](const AxisValue& x) { return x.text == t; }))
      out.push_back({std::move(v), std::move(t)});
  }
  return out;
}

FlagSection AxisSet::flags() const {
  FlagSection section;
  section.title = family_;
  for (const auto& a : axes_) {
    auto spelt = [&](const std::vector<std::string>& raw, const std::vector<std::any>& typed) {
      if (!a.typed_defaults_) return joined(raw);
      std::vector<std::string> s;
      for (const auto& v : typed) s.push_back(a.format(v));
      return joined(s);
    };
    std::string help = a.help_ + " (default " + spelt(a.normal_, a.typed_normal_) + "; smoke " +
                       spelt(a.smoke_, a.typed_smoke_) + "; full " + spelt(a.full_, a.typed_full_) + ")";
    const Axis* axis = &a;
    section.flags.push_back({flag(a.name_), "LIST", help,
                             [this, axis](const std::string& f, const std::string& v) {
                               return std::any(parse_list(*axis, f, v));
                             },
                             a.old_names_});
  }
  return section;
}

std::vector<AxisValue> AxisSet::values(const Axis& a, const Options& opt, bool& given) const {
  const std::string f = flag(a.name_);
  // A given list was parsed once, by parse_options (flags()).
  if (const auto* list = opt.value<std::vector<AxisValue>>(f)) {
    given = true;
    return *list;
  }
  given = false;
  std::vector<AxisValue> out;
  if (a.typed_defaults_) {
    const auto& defaults = opt.profile == Profile::Smoke  ? a.typed_smoke_
                           : opt.profile == Profile::Full ? a.typed_full_
                                                          : a.typed_normal_;
    for (const auto& v : defaults) out.push_back({v, a.format(v)});
    return out;
  }
  const auto& defaults = opt.profile == Profile::Smoke  ? a.smoke_
                         : opt.profile == Profile::Full ? a.full_
                                                        : a.normal_;
  for (const auto& item : defaults) {
    std::any v = a.parse("the default of " + f, item);
    std::string t = a.format(v);
    out.push_back({std::move(v), std::move(t)});
  }
  return out;
}

std::vector<Point> AxisSet::points(const Options& opt) const {
  std::vector<std::vector<AxisValue>> lists;
  std::vector<bool> given(axes_.size(), false);
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    bool g = false;
    lists.push_back(values(axes_[i], opt, g));
    given[i] = g;
  }
  auto same = [](const Point& p, const Point& q) {
    for (std::size_t i = 0; i < p.values.size(); ++i)
      if (p.values[i].second.text != q.values[i].second.text) return false;
    return true;
  };
  // Each point with the raw point it came from (the values as listed).
  std::vector<Point> out, out_raw;
  std::vector<std::pair<Point, std::string>> refused;  // raw point, the line saying why
  std::vector<std::size_t> at(axes_.size(), 0);
  for (bool more = !axes_.empty(); more;) {
    Point raw;
    for (std::size_t i = 0; i < axes_.size(); ++i) raw.values.emplace_back(axes_[i].name_, lists[i][at[i]]);
    Point p = raw;
    for (std::size_t i = 0; i < axes_.size(); ++i)
      if (axes_[i].resolve_) {
        AxisValue& v = p.values[i].second;
        v.value = axes_[i].resolve_(raw.values[i].second.value, raw);
        v.text = axes_[i].format(v.value);
      }
    const std::string why = refuse_ ? refuse_(p) : "";
    if (!why.empty()) {
      std::string combo;
      for (const auto& [k, v] : name(p, "").args) combo += (combo.empty() ? "" : " ") + k + ":" + v;
      refused.emplace_back(std::move(raw), family_ + ": " + combo + ": " + why);
    } else if (std::none_of(out.begin(), out.end(), [&](const Point& q) { return same(p, q); })) {
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
      const std::string& axis = axes_[i].name_;
      const bool kept =
          std::any_of(out_raw.begin(), out_raw.end(), [&](const Point& p) { return p.text(axis) == v.text; });
      if (kept) continue;
      for (const auto& [p, line] : refused)
        if (p.text(axis) == v.text) throw UsageError(line);
    }
  }
  if (out.empty() && !refused.empty())
    throw UsageError("no combination of the " + family_ + " axes is left (" + refused.front().second + ")");
  return out;
}

RunName AxisSet::name(const Point& p, const std::string& variant) const {
  RunName n{family_, variant, {}};
  for (const Part& part : named_) {
    const AxisValue& v = p.values.at(std::size_t(part.axis - axes_.data())).second;
    if (part.label)
      n.args.emplace_back(part.label->key, part.label->of(v.value));
    else if (part.axis->name_args_)
      for (auto& arg : part.axis->name_args_(v.value)) n.args.push_back(std::move(arg));
    else
      n.args.emplace_back(part.axis->key_, v.text);
  }
  return n;
}

Counters AxisSet::counters(const Point& p) const {
  Counters out;
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    const Axis& a = axes_[i];
    const std::any& v = p.values.at(i).second.value;
    if (a.scalar_counter_) out.emplace_back(a.key_, as_number(v, a.name_));
    if (a.counters_) {
      const auto values = a.counters_(v);
      for (std::size_t k = 0; k < a.counter_keys_.size(); ++k)
        out.emplace_back(a.counter_keys_[k], values.at(k));
    }
  }
  return out;
}

void AxisSet::declare_counters() const {
  for (const auto& a : axes_) {
    if (a.scalar_counter_) declare_counter(a.key_, CounterKind::Problem);
    for (const auto& k : a.counter_keys_) declare_counter(k, CounterKind::Problem);
  }
}

}  // namespace pb
