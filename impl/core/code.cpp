#include "core/code.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace pb {
namespace {

std::vector<CodeObject>& table() {
  static std::vector<CodeObject> objects;
  return objects;
}

// A registry lists every variant of its family: an object that reaches it
// would reach them all.
bool is_registry(const std::string& source) {
  const std::string name = "/registry.cpp";
  return source.size() >= name.size() && source.compare(source.size() - name.size(), name.size(), name) == 0;
}

std::vector<int> calls_of(const CodeObject& o) {
  std::vector<int> out;
  const char* p = o.calls;
  char* end = nullptr;
  for (long v = std::strtol(p, &end, 10); end != p; v = std::strtol(p, &end, 10)) {
    out.push_back(int(v));
    p = end;
  }
  return out;
}

}  // namespace

Code Code::plus(const Code& more) const {
  Code out = *this;
  out.sources.insert(out.sources.end(), more.sources.begin(), more.sources.end());
  return out;
}

CodeTable::CodeTable(const CodeObject* objects, std::size_t count) {
  table().assign(objects, objects + count);
}

const std::vector<CodeObject>& code_objects() { return table(); }

std::vector<int> code_closure(const Code& code) {
  const auto& objects = table();
  std::map<std::string, int> index;
  for (std::size_t i = 0; i < objects.size(); ++i) index[objects[i].source] = int(i);
  std::vector<bool> seen(objects.size(), false);
  std::vector<int> todo;
  for (const auto& s : code.sources) {
    auto it = index.find(s);
    if (it == index.end()) return {};
    if (!seen[std::size_t(it->second)]) todo.push_back(it->second);
    seen[std::size_t(it->second)] = true;
  }
  for (std::size_t next = 0; next < todo.size(); ++next)
    for (int c : calls_of(objects[std::size_t(todo[next])])) {
      if (c < 0 || std::size_t(c) >= objects.size() || seen[std::size_t(c)] ||
          is_registry(objects[std::size_t(c)].source))
        continue;
      seen[std::size_t(c)] = true;
      todo.push_back(c);
    }
  std::sort(todo.begin(), todo.end());
  return todo;
}

std::string code_fingerprint(const Code& code) {
  const std::vector<int> reached = code_closure(code);
  if (reached.empty()) return {};
  std::uint64_t h = 14695981039346656037ull;
  auto add = [&h](const char* s) {
    for (; *s; ++s) h = (h ^ static_cast<unsigned char>(*s)) * 1099511628211ull;
    h = (h ^ 0xffu) * 1099511628211ull;  // a separator no path or hex digit holds
  };
  for (int i : reached) {
    add(table()[std::size_t(i)].source);
    add(table()[std::size_t(i)].hash);
  }
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

}  // namespace pb
