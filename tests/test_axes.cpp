// Axes declared as data (core/axes.hpp): the generated flags and their help,
// the profiles' values, the cross product in declaration order, run names
// and counters, a refused combination, and every bad input one UsageError
// line before anything runs; each list parsed once, and its values read back
// in the type their axis declares.
#include <gtest/gtest.h>

#include <stdexcept>

#include "core/axes.hpp"
#include "core/options.hpp"
#include "core/status.hpp"

using namespace pb;

namespace {

int parses = 0;  // calls of the counting parser below

enum class Kind { A, B, C };

AxisSet make_axes() {
  return AxisSet{
      "Fam",
      {Axis::choice<Kind>("kind", {{"a", Kind::A}, {"b", Kind::B}, {"c", Kind::C}})
           .help("kinds")
           .values({"a"}, {"a", "b"}, {"a", "b", "c"}),
       Axis::of<std::int64_t>(
           "size",
           [](const std::string& flag, const std::string& item) {
             ++parses;
             return parse_counts(flag, item, 1 << 20).at(0);
           },
           [](const std::int64_t& v) { return std::to_string(v); })
           .key("n")
           .help("sizes")
           .counter()
           .values({"4"}, {"8", "2^4"}, {"2^10"})},
      [](const Point& p) {
        return p.get<Kind>("kind") == Kind::C && p.get<std::int64_t>("size") < 8 ? "c needs 8 or more" : "";
      }};
}

// The options a command line of these flags gives, through parse_options
// with the set's generated flags (which parses each list there).
Options with(const AxisSet& a, std::initializer_list<std::pair<const std::string, std::string>> flags,
             Profile prof = Profile::Default) {
  std::vector<std::string> args{"bench"};
  for (const auto& f : flags) args.push_back(f.first + "=" + f.second);
  std::vector<char*> argv;
  for (auto& x : args) argv.push_back(&x[0]);
  int argc = int(argv.size());
  Options o = parse_options(argc, argv.data(), {a.flags()});
  o.profile = prof;
  return o;
}

std::vector<std::string> names(const AxisSet& a, const Options& o) {
  std::vector<std::string> out;
  for (const auto& p : a.points(o)) out.push_back(a.name(p, "V").format());
  return out;
}

TEST(Axes, FlagsAndHelpComeFromTheDeclaration) {
  const AxisSet a = make_axes();
  const FlagSection s = a.flags();
  EXPECT_EQ(s.title, "Fam");
  ASSERT_EQ(s.flags.size(), 2u);
  EXPECT_EQ(s.flags[0].name, "--fam-kind");
  EXPECT_EQ(s.flags[1].name, "--fam-size");
  EXPECT_EQ(s.flags[1].help, "sizes (default 8,2^4; smoke 4; full 2^10)");
}

TEST(Axes, CrossProductInDeclarationOrderPerProfile) {
  const AxisSet a = make_axes();
  EXPECT_EQ(names(a, with(a, {})), (std::vector<std::string>{"Fam/V/kind:a/n:8", "Fam/V/kind:a/n:16",
                                                             "Fam/V/kind:b/n:8", "Fam/V/kind:b/n:16"}));
  EXPECT_EQ(names(a, with(a, {}, Profile::Smoke)), (std::vector<std::string>{"Fam/V/kind:a/n:4"}));
  // Full: c at 1024 is allowed.
  EXPECT_EQ(names(a, with(a, {}, Profile::Full)).size(), 3u);
  const auto p = a.points(with(a, {{"--fam-size", "2^5"}, {"--fam-kind", "b"}}));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(a.counters(p[0]), (Counters{{"n", 32.0}}));
}

TEST(Axes, RefusedCombinations) {
  const AxisSet a = make_axes();
  // A given c whose only size is 4: an error, the refusal its line.
  try {
    a.points(with(a, {{"--fam-kind", "c"}, {"--fam-size", "4"}}));
    FAIL() << "a refused combination of given values ran";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "Fam: kind:c n:4: c needs 8 or more");
  }
  // Smoke's size 4 (a default) with a given c: c is held by refused combinations alone.
  try {
    a.points(with(a, {{"--fam-kind", "c"}}, Profile::Smoke));
    FAIL() << "a given value with no allowed combination ran";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "Fam: kind:c n:4: c needs 8 or more");
  }
  // Kinds a and c with sizes 4 and 8: (c, 4) left out; each given value runs somewhere.
  EXPECT_EQ(names(a, with(a, {{"--fam-kind", "a,c"}, {"--fam-size", "4,8"}})),
            (std::vector<std::string>{"Fam/V/kind:a/n:4", "Fam/V/kind:a/n:8", "Fam/V/kind:c/n:8"}));
  // Defaults alone: a refused default combination is left out quietly.
  const AxisSet all_refused{"Fam",
                            {Axis::word("kind", {"a"}).help("kinds").values({"a"}, {"a"}, {"a"})},
                            [](const Point&) { return "never"; }};
  try {
    all_refused.points(with(all_refused, {}));
    FAIL() << "an empty cross product ran";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "no combination of the Fam axes is left (Fam: kind:a: never)");
  }
}

TEST(Axes, BadValuesAreOneUsageErrorLine) {
  const AxisSet a = make_axes();
  const struct {
    const char* flag;
    const char* value;
    const char* message;
  } cases[] = {
      {"--fam-size", "", "--fam-size: empty list"},
      {"--fam-size", "8,,16", "--fam-size: an empty item in '8,,16'"},
      {"--fam-size", "0", "--fam-size: 0 is out of range [1, 1048576]"},
      {"--fam-size", "ab", "--fam-size: 'ab' is not an integer"},
      {"--fam-kind", "d", "--fam-kind: unknown value 'd' (allowed: a, b, c)"},
  };
  for (const auto& c : cases) {
    try {
      a.points(with(a, {{c.flag, c.value}}));
      ADD_FAILURE() << c.flag << "=" << c.value << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), c.message);
    }
  }
}

TEST(Axes, AValueMayNameSeveralRunNameArguments) {
  const AxisSet a{
      "Fam",
      {Axis::shape("shapes", 100).key("shape").help("shapes").values({"3x4x5"}, {"3x4x5"}, {"3x4x5"})}};
  EXPECT_EQ(names(a, with(a, {{"--fam-shapes", "5x6x7,3x4x5,2"}})),
            (std::vector<std::string>{"Fam/V/M:5/N:6/K:7", "Fam/V/M:3/N:4/K:5", "Fam/V/M:2/N:2/K:2"}));
  const auto p = a.points(with(a, {}));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(a.counters(p[0]), (Counters{{"M", 3.0}, {"N", 4.0}, {"K", 5.0}}));
}

TEST(Axes, ValuesAreReadBackInTheirDeclaredType) {
  const AxisSet a = make_axes();
  const auto p = a.points(with(a, {{"--fam-size", "2^5"}, {"--fam-kind", "b"}}));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].get<Kind>("kind"), Kind::B);
  EXPECT_EQ(p[0].get<std::int64_t>("size"), 32);
  EXPECT_EQ(p[0].text("size"), "32") << "the canonical spelling, not 2^5";
  EXPECT_EQ(p[0].text("kind"), "b");
  EXPECT_THROW(p[0].get<int>("size"), std::logic_error) << "read as another type than declared";
  EXPECT_THROW(p[0].get<std::int64_t>("weight"), std::logic_error) << "no such axis";
  const AxisSet s{"Fam", {Axis::shape("shapes", 100).help("shapes").values({"7"}, {"7"}, {"7"})}};
  const Shape3 cube = s.points(with(s, {})).at(0).get<Shape3>("shapes");
  EXPECT_EQ(cube.m, 7);
  EXPECT_EQ(cube.n, 7);
  EXPECT_EQ(cube.k, 7);
}

// A value that is a named configuration: typed defaults (a flag cannot
// spell a name), listed in the help by their spelling, with a label that
// the name order places before the other axes.
struct Config {
  std::string name;
  std::int64_t n;
};

TEST(Axes, TypedDefaultsAndALabelInTheNameOrder) {
  const AxisSet a{
      "Fam",
      {Axis::of<Config>(
           "sizes",
           [](const std::string& flag, const std::string& item) {
             return Config{"custom", parse_counts(flag, item, 1000).at(0)};
           },
           [](const Config& c) { return std::to_string(c.n); })
           .key("n")
           .help("sizes")
           .typed_values(std::vector<Config>{{"tiny", 2}}, std::vector<Config>{{"small", 10}, {"big", 100}},
                         std::vector<Config>{{"big", 100}})
           .label<Config>("cfg", [](const Config& c) { return c.name; })
           .counters<Config>({"n"}, [](const Config& c) { return std::vector<double>{double(c.n)}; }),
       Axis::word("mode", {"x", "y"}).help("modes").values({"x"}, {"x"}, {"x", "y"})},
      {},
      {"cfg", "mode", "sizes"}};
  EXPECT_EQ(a.flags().flags[0].help, "sizes (default 10,100; smoke 2; full 100)");
  EXPECT_EQ(names(a, with(a, {})),
            (std::vector<std::string>{"Fam/V/cfg:small/mode:x/n:10", "Fam/V/cfg:big/mode:x/n:100"}));
  EXPECT_EQ(names(a, with(a, {{"--fam-sizes", "7"}})),
            (std::vector<std::string>{"Fam/V/cfg:custom/mode:x/n:7"}));
  const auto p = a.points(with(a, {}));
  EXPECT_EQ(p[1].get<Config>("sizes").name, "big");
  EXPECT_EQ(p[1].get<std::string>("mode"), "x");
  EXPECT_EQ(a.counters(p[1]), (Counters{{"n", 100.0}}));
}

TEST(Axes, ResolvedValuesNameOrderAndDuplicates) {
  // "all" (0) stands for the point's size; a size given twice over ("all"
  // and its number) is one point; run names put the length first.
  const AxisSet a{"Fam",
                  {Axis::count("size", 1, 64).key("n").help("sizes").counter().values({"8"}, {"8"}, {"8"}),
                   Axis::of<std::int64_t>(
                       "len",
                       [](const std::string& flag, const std::string& item) {
                         return item == "all" ? std::int64_t(0) : parse_counts(flag, item, 64).at(0);
                       },
                       [](const std::int64_t& v) { return v == 0 ? std::string("all") : std::to_string(v); })
                       .help("lengths")
                       .counter()
                       .values({"all", "8"}, {"all", "8"}, {"all", "8"})
                       .resolve<std::int64_t>([](const std::int64_t& v, const Point& raw) {
                         return v == 0 ? raw.get<std::int64_t>("size") : v;
                       })},
                  {},
                  {"len", "size"}};
  EXPECT_EQ(names(a, with(a, {})), (std::vector<std::string>{"Fam/V/len:8/n:8"}));
  EXPECT_EQ(names(a, with(a, {{"--fam-size", "4,8"}})),
            (std::vector<std::string>{"Fam/V/len:4/n:4", "Fam/V/len:8/n:4", "Fam/V/len:8/n:8"}));
  // A given "all" runs (as the size) and is no error.
  EXPECT_EQ(names(a, with(a, {{"--fam-len", "all"}, {"--fam-size", "2"}})),
            (std::vector<std::string>{"Fam/V/len:2/n:2"}));
  const auto p = a.points(with(a, {{"--fam-len", "all"}, {"--fam-size", "2"}}));
  EXPECT_EQ(p.at(0).get<std::int64_t>("len"), 2);
  EXPECT_EQ(a.counters(p.at(0)), (Counters{{"n", 2.0}, {"len", 2.0}}));
}

TEST(Axes, EachListIsParsedOnce) {
  const AxisSet a = make_axes();
  parses = 0;
  const Options o = with(a, {{"--fam-size", "8,16,32"}});  // parse_options parses the list
  EXPECT_EQ(parses, 3);
  EXPECT_EQ(a.points(o).size(), 6u);
  EXPECT_EQ(a.points(o).size(), 6u);
  EXPECT_EQ(parses, 3);
}

}  // namespace
