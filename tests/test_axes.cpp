// Axes declared as data (core/axes.hpp): the generated flags and their help,
// the profiles' values, the cross product in declaration order, run names
// and counters, a refused combination, and every bad input one UsageError
// line before anything runs; each list parsed once.
#include <gtest/gtest.h>

#include "core/axes.hpp"
#include "core/options.hpp"
#include "core/status.hpp"

using namespace pb;

namespace {

int parses = 0;  // calls of the counting parser below

AxisSet make_axes() {
  return AxisSet{
      "Fam",
      {{"kind", "kind", "kinds", {"a"}, {"a", "b"}, {"a", "b", "c"}, words({"a", "b", "c"})},
       {"size",
        "n",
        "sizes",
        {"4"},
        {"8", "2^4"},
        {"2^10"},
        [](const std::string& flag, const std::string& item) {
          ++parses;
          return counts(1, 1 << 20)(flag, item);
        },
        true}},
      [](const Point& p) { return p["kind"] == "c" && p.integer("size") < 8 ? "c needs 8 or more" : ""; }};
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
                            {{"kind", "kind", "kinds", {"a"}, {"a"}, {"a"}, words({"a"})}},
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
  const AxisSet a{"Fam",
                  {{"grids",
                    "grid",
                    "grids",
                    {"3x4"},
                    {"3x4"},
                    {"3x4"},
                    words({"3x4", "5x6"}),
                    false,
                    dims_as({"M", "N"})}}};
  EXPECT_EQ(names(a, with(a, {{"--fam-grids", "5x6,3x4"}})),
            (std::vector<std::string>{"Fam/V/M:5/N:6", "Fam/V/M:3/N:4"}));
}

TEST(Axes, ResolvedValuesNameOrderAndDuplicates) {
  // "all" stands for the point's size; a size given twice over ("all" and
  // its number) is one point; run names put the length first.
  const AxisSet a{"Fam",
                  {{"size", "n", "sizes", {"8"}, {"8"}, {"8"}, counts(1, 64), true},
                   {"len",
                    "len",
                    "lengths",
                    {"all", "8"},
                    {"all", "8"},
                    {"all", "8"},
                    [](const std::string& flag, const std::string& item) {
                      return item == "all" ? item : counts(1, 64)(flag, item);
                    },
                    true,
                    {},
                    [](const std::string& v, const Point& raw) { return v == "all" ? raw["size"] : v; }}},
                  {},
                  {"len", "size"}};
  EXPECT_EQ(names(a, with(a, {})), (std::vector<std::string>{"Fam/V/len:8/n:8"}));
  EXPECT_EQ(names(a, with(a, {{"--fam-size", "4,8"}})),
            (std::vector<std::string>{"Fam/V/len:4/n:4", "Fam/V/len:8/n:4", "Fam/V/len:8/n:8"}));
  // A given "all" runs (as the size) and is no error.
  EXPECT_EQ(names(a, with(a, {{"--fam-len", "all"}, {"--fam-size", "2"}})),
            (std::vector<std::string>{"Fam/V/len:2/n:2"}));
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
