// The code fingerprints and library versions of the JSON entries
// (core/code.hpp, core/libraries.hpp): every benchmark of every family has a
// fingerprint, instances of different code have different ones, and each
// registry names the file of every variant it calls.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/families.hpp"
#include "core/code.hpp"
#include "core/libraries.hpp"
#include "core/registrar.hpp"
#include "gemm/registry.hpp"
#include "kmeans/registry.hpp"
#include "mlp/registry.hpp"
#include "sor/registry.hpp"
#include "sort/registry.hpp"

using namespace pb;

namespace {

bool is_hex16(const std::string& s) {
  return s.size() == 16 && std::all_of(s.begin(), s.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
         });
}

// Every instance of every family, registered as bench registers them (the
// smoke profile; once per process), without the test suites' own instances.
std::vector<Registered> family_instances() {
  static const bool once = [] {
    Options opt;
    opt.profile = Profile::Smoke;
    for (const auto& f : families()) f.register_instances(opt);
    return true;
  }();
  (void)once;
  std::vector<Registered> out;
  for (const auto& r : registered())
    for (const auto& f : families())
      if (r.name.rfind(std::string(f.name) + "/", 0) == 0) out.push_back(r);
  return out;
}

std::string variant_of(const std::string& name) {  // "GEMM/OMP/op:AB/..." -> "GEMM/OMP"
  const auto second = name.find('/', name.find('/') + 1);
  return name.substr(0, second);
}

int index_of(const std::string& source) {
  const auto& objects = code_objects();
  for (std::size_t i = 0; i < objects.size(); ++i)
    if (source == objects[i].source) return int(i);
  return -1;
}

// The sources whose functions `source`'s object calls directly.
std::set<std::string> direct_calls(const std::string& source) {
  std::set<std::string> out;
  const int i = index_of(source);
  if (i < 0) return out;
  const char* p = code_objects()[std::size_t(i)].calls;
  while (*p) {
    char* end = nullptr;
    const long c = std::strtol(p, &end, 10);
    if (end == p) break;
    out.insert(code_objects()[std::size_t(c)].source);
    p = end;
  }
  return out;
}

bool is_registry(const std::string& source) {
  return source.size() > 13 && source.compare(source.size() - 13, 13, "/registry.cpp") == 0;
}

// (variant name, code) of each line of a registry.
using Lines = std::vector<std::pair<std::string, Code>>;
template <class EntryT>
void add_lines(Lines& out, const std::vector<EntryT>& list) {
  for (const auto& e : list) out.emplace_back(e.name, e.code);
}

// A registry names, as some line's code, the file of every variant of its
// family that it calls, and each line's (first) source is one it calls: a line
// copied for a new variant that keeps the old line's file fails here.
void expect_registry_names_its_files(const std::string& registry, const Lines& lines) {
  ASSERT_GE(index_of(registry), 0) << registry << " is not in the code table";
  const std::string family_dir = registry.substr(0, registry.rfind('/') + 1);
  const std::set<std::string> called = direct_calls(registry);
  std::set<std::string> named;
  for (const auto& [name, code] : lines) {
    ASSERT_FALSE(code.empty()) << registry << ": " << name << " names no code";
    named.insert(code.sources.front());
    EXPECT_EQ(called.count(code.sources.front()), 1u)
        << registry << ": " << name << " names " << code.sources.front()
        << ", which the registry does not call";
  }
  for (const auto& c : called) {
    if (is_registry(c) || c.rfind(family_dir, 0) != 0) continue;  // another registry; core
    EXPECT_EQ(named.count(c), 1u) << registry << " calls " << c << " but no line names it as its code";
  }
}

}  // namespace

TEST(CodeTable, ListsTheLibrariesObjects) {
  const auto& objects = code_objects();
  ASSERT_FALSE(objects.empty()) << "no code table linked (parbench_code_table)";
  std::set<std::string> sources;
  for (const auto& o : objects) {
    const std::string s = o.source;
    EXPECT_TRUE(s.rfind("impl/", 0) == 0 || s.rfind("fixtures/", 0) == 0) << s;
    EXPECT_TRUE(is_hex16(o.hash)) << s << ": " << o.hash;
    EXPECT_TRUE(sources.insert(s).second) << s << " twice";
    for (const auto& c : direct_calls(s)) EXPECT_NE(c, s);
  }
  for (const char* s : {"impl/gemm/cpu/naive.cpp", "impl/gemm/registry.cpp", "impl/core/registrar.cpp"})
    EXPECT_EQ(sources.count(s), 1u) << s;
  // The build-info stamp changes with every revision; it is not code of a variant.
  for (const auto& s : sources) EXPECT_EQ(s.find("build_info"), std::string::npos) << s;
}

TEST(CodeTable, ClosureFollowsCallsButNotRegistries) {
  // MLP's OMP step: the host step and the GEMM variant it names, not the
  // GEMM registry (and so not the other GEMM variants).
  const mlp::Entry* omp = find_entry(mlp::registry(), "OMP");
  ASSERT_NE(omp, nullptr);
  std::set<std::string> reached;
  for (int i : code_closure(omp->code)) reached.insert(code_objects()[std::size_t(i)].source);
  for (const char* s : {"impl/mlp/cpu/host.cpp", "impl/mlp/cpu/host_step.cpp", "impl/gemm/cpu/omp.cpp"})
    EXPECT_EQ(reached.count(s), 1u) << s;
  for (const char* s : {"impl/gemm/registry.cpp", "impl/gemm/cpu/naive.cpp", "impl/mlp/registry.cpp"})
    EXPECT_EQ(reached.count(s), 0u) << s;
  EXPECT_TRUE(code_closure(Code("impl/no/such/file.cpp")).empty());
  EXPECT_EQ(code_fingerprint(Code("impl/no/such/file.cpp")), "");
  EXPECT_EQ(code_fingerprint(Code("impl/gemm/cpu/omp.cpp").plus("impl/no/such/file.cpp")), "");
  EXPECT_TRUE(is_hex16(code_fingerprint(omp->code)));
}

TEST(CodeFingerprint, EveryFamilyInstanceHasOne) {
  const auto instances = family_instances();
  ASSERT_GT(instances.size(), 50u);
  std::set<std::string> families_seen;
  for (const auto& r : instances) {
    EXPECT_TRUE(is_hex16(r.code_fingerprint)) << r.name << " has no code fingerprint: code names "
                                              << (r.code.empty() ? "nothing" : r.code.sources.front());
    if (!r.library.empty()) {
      EXPECT_NE(r.library_version, "") << r.name << " calls " << r.library;
    }
    families_seen.insert(r.name.substr(0, r.name.find('/')));
  }
  EXPECT_EQ(families_seen.size(), families().size());
}

TEST(CodeFingerprint, DifferentCodeDifferentFingerprints) {
  std::map<std::vector<int>, std::string> by_code;   // the objects reached -> fingerprint
  std::map<std::string, std::vector<int>> by_print;  // fingerprint -> the objects reached
  std::map<std::string, std::string> of_variant;
  for (const auto& r : family_instances()) {
    const auto reached = code_closure(r.code);
    auto known = by_code.emplace(reached, r.code_fingerprint);
    EXPECT_EQ(known.first->second, r.code_fingerprint) << r.name << ": one code, two fingerprints";
    auto seen = by_print.emplace(r.code_fingerprint, reached);
    EXPECT_EQ(seen.first->second, reached) << r.name << ": two codes, one fingerprint " << r.code_fingerprint;
    of_variant[variant_of(r.name)] = r.code_fingerprint;
  }
  EXPECT_GE(by_code.size(), 10u);
  // Variants in different files; and one file's two variants.
  EXPECT_NE(of_variant["GEMM/Naive"], of_variant["GEMM/OMP"]);
  EXPECT_NE(of_variant["GEMM/OMP"], of_variant["MLP/OMP"]);
  EXPECT_EQ(of_variant["KMeans/OMP.Atomic"], of_variant["KMeans/OMP.Reduce"]);
  // A Ceiling's GEMM runs the GEMM variant's code.
  EXPECT_EQ(of_variant["Ceiling/OpenBLAS.DGEMM"], of_variant["GEMM/OpenBLAS"]);
}

TEST(CodeFingerprint, RegistriesNameTheirVariantsFiles) {
  Lines gemm_lines, kmeans_lines, sort_lines, sor_lines, mlp_lines;
  add_lines(gemm_lines, gemm::registry<float>());
  add_lines(gemm_lines, gemm::registry<double>());
  add_lines(gemm_lines, gemm::tensor_registry());
  add_lines(kmeans_lines, kmeans::registry());
  add_lines(sort_lines, sort::registry());
  add_lines(sor_lines, sor::registry());
  add_lines(mlp_lines, mlp::registry());
  expect_registry_names_its_files("impl/gemm/registry.cpp", gemm_lines);
  expect_registry_names_its_files("impl/kmeans/registry.cpp", kmeans_lines);
  expect_registry_names_its_files("impl/sort/registry.cpp", sort_lines);
  expect_registry_names_its_files("impl/sor/registry.cpp", sor_lines);
  expect_registry_names_its_files("impl/mlp/registry.cpp", mlp_lines);
}

TEST(LibraryVersion, NamesTheLoadedLibrary) {
  EXPECT_EQ(library_version("openblas").rfind("OpenBLAS", 0), 0u) << library_version("openblas");
  EXPECT_EQ(library_version("no-such-library"), "");
#ifdef PARBENCH_WITH_CUDA
  for (const char* lib : {"cublas", "cub", "thrust"}) {
    const std::string v = library_version(lib);
    EXPECT_NE(v.find('.'), std::string::npos) << lib << ": " << v;
    EXPECT_NE(v, "unknown") << lib;
  }
#endif
}
