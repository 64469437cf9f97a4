#include <gtest/gtest.h>

#include <any>
#include <cctype>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "benchmarks/families.hpp"
#include "core/axes.hpp"
#include "core/options.hpp"
#include "core/status.hpp"

using namespace pb;

namespace {
Options parse(std::vector<std::string> args, std::vector<std::string>* left = nullptr,
              const std::vector<FlagSection>& sections = family_flags()) {
  args.insert(args.begin(), "bench");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = int(args.size());
  Options o = parse_options(argc, argv.data(), sections);
  if (left) left->assign(argv.begin() + 1, argv.begin() + argc);
  return o;
}

// The canonical spellings of an axis flag's parsed values.
std::vector<std::string> texts(const Options& o, const std::string& flag) {
  std::vector<std::string> out;
  for (const auto& v : *o.value<std::vector<AxisValue>>(flag)) out.push_back(v.text);
  return out;
}
}  // namespace

TEST(Options, SizesAcceptSquareAndTriples) {
  auto s = parse_sizes("1000x1500x777,4096", "--gemm-shapes");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].m, 1000);
  EXPECT_EQ(s[0].n, 1500);
  EXPECT_EQ(s[0].k, 777);
  EXPECT_EQ(s[1].str(), "4096x4096x4096");
}

TEST(Options, SizesRejectNonsense) {
  for (const char* bad :
       {"", "0", "-5", "10x20", "12xab", "1x2x3x4", "1,,2", "99999999999", "4096x0x1", "3.5"})
    EXPECT_THROW(parse_sizes(bad, "--gemm-shapes"), UsageError) << bad;
}

TEST(Options, ListsAreValidated) {
  EXPECT_EQ(parse_int_list("--threads", "1,2,16", 1, 64), (std::vector<int>{1, 2, 16}));
  EXPECT_THROW(parse_int_list("--threads", "0", 1, 64), UsageError);
  EXPECT_THROW(parse_int_list("--threads", "4,x", 1, 64), UsageError);
  EXPECT_THROW(parse_word_list("--op", "AB,XY", {"AB", "AtB"}), UsageError);
}

TEST(Options, ParbenchFlagsAreConsumedAndBenchmarkFlagsKept) {
  std::vector<std::string> left;
  auto o =
      parse({"--profile=smoke", "--benchmark_filter=GEMM", "--gemm-shapes=8x9x10", "--threads=1,3",
             "--gemm-type=f64", "--gemm-op=AtB", "--flush-l2", "--gpu-idle-start", "--seed=5", "--block=16"},
            &left);
  EXPECT_EQ(o.profile, Profile::Smoke);
  ASSERT_TRUE(o.given("--gemm-shapes"));
  EXPECT_EQ(texts(o, "--gemm-shapes"), std::vector<std::string>{"8x9x10"});
  const auto& shapes = *o.value<std::vector<AxisValue>>("--gemm-shapes");
  EXPECT_EQ(std::any_cast<Shape3>(shapes.at(0).value).k, 10) << "parsed once, kept typed";
  EXPECT_EQ(*o.threads, (std::vector<int>{1, 3}));
  EXPECT_EQ(texts(o, "--gemm-type"), std::vector<std::string>{"f64"});
  EXPECT_EQ(texts(o, "--gemm-op"), std::vector<std::string>{"AtB"});
  EXPECT_TRUE(o.notes.empty());
  EXPECT_EQ(*o.blocks, std::vector<int>{16});
  EXPECT_TRUE(o.flush_l2);
  EXPECT_TRUE(o.gpu_idle_start);
  EXPECT_FALSE(parse({}).gpu_idle_start);
  EXPECT_EQ(o.seed, 5u);
  EXPECT_EQ(left, std::vector<std::string>{"--benchmark_filter=GEMM"});
}

TEST(Options, ThreadsCoresIsTheHostsCoreCount) {
  EXPECT_EQ(*parse({"--threads=cores"}).threads, std::vector<int>{core_count()});
  EXPECT_EQ(*parse({"--threads=1,cores"}).threads, (std::vector<int>{1, core_count()}));
  EXPECT_EQ(default_thread_axis().back(), core_count());
  EXPECT_THROW(parse({"--threads=core"}), UsageError);
}

TEST(Options, UnknownFlagsAndValuesAreUsageErrors) {
  EXPECT_THROW(parse({"--profile=huge"}), UsageError);
  EXPECT_THROW(parse({"--precision=f16"}), UsageError);
  EXPECT_THROW(parse({"--frobnicate"}), UsageError);
  EXPECT_THROW(parse({"--sizes"}), UsageError);
  EXPECT_THROW(parse({"--gemm-shapes"}), UsageError);
  EXPECT_THROW(parse({"--sort-key=u64"}), UsageError);
}

// Core knows no family flag: without the families' sections they are unknown.
TEST(Options, FamilyFlagsComeFromTheFamilies) {
  for (const char* a : {"--gemm-shapes=64", "--kmeans-dist=blobs", "--sort-key=u32", "--sizes=64"}) {
    try {
      parse({a}, nullptr, {});
      ADD_FAILURE() << a << " parsed without the family sections";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("unknown argument"), std::string::npos) << e.what();
    }
  }
  std::set<std::string> spellings;  // every current and old spelling names one flag
  for (const auto& fam : families()) {
    if (!fam.flags) continue;
    std::string prefix = "--";
    for (const char* c = fam.name; *c; ++c) prefix += char(std::tolower(static_cast<unsigned char>(*c)));
    prefix += "-";
    for (const auto& f : fam.flags().flags) {
      // One scheme: every family flag is --<family>-<axis>.
      EXPECT_EQ(f.name.rfind(prefix, 0), 0u) << f.name << " in family " << fam.name;
      EXPECT_TRUE(spellings.insert(f.name).second) << f.name;
      for (const auto& old : f.old_names) EXPECT_TRUE(spellings.insert(old).second) << old;
    }
  }
  EXPECT_GE(spellings.size(), 18u + 8u);  // today's 18 flags and their 8 old spellings
}

// The old spellings still work for one release, with a note, and a bad value
// names the flag as the user typed it.
TEST(Options, OldSpellingsAreDeprecatedNotGone) {
  const std::vector<std::pair<std::string, std::string>> renamed = {
      {"--sizes=8x9x10", "--gemm-shapes"},   {"--op=AtB", "--gemm-op"},
      {"--dist=blobs", "--kmeans-dist"},     {"--elements=2^10", "--sort-elements"},
      {"--length=all", "--sort-length"},     {"--key=f32", "--sort-key"},
      {"--payload=pairs", "--sort-payload"}, {"--order=desc", "--sort-order"}};
  for (const auto& [arg, now] : renamed) {
    auto o = parse({arg});
    ASSERT_TRUE(o.given(now)) << arg;
    ASSERT_EQ(o.notes.size(), 1u) << arg;
    const auto old = arg.substr(0, arg.find('='));
    EXPECT_EQ(o.notes[0], old + " is deprecated and goes in the next release: use " + now);
  }
  try {
    parse({"--sizes=0"});
    ADD_FAILURE() << "--sizes=0 parsed";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--sizes: 0 is out of range", 0), 0u) << e.what();
  }
}

TEST(Options, SectionRulesAcrossFlags) {
  EXPECT_THROW(parse({"--kmeans-loops=3", "--kmeans-exit=5,0.1,0.1"}), UsageError);
  EXPECT_NO_THROW(parse({"--kmeans-loops=3"}));
  EXPECT_THROW(parse({"--kmeans-exit=10,2,0.01"}), UsageError);    // fraction above 1
  EXPECT_THROW(parse({"--kmeans-shapes=100x4x200"}), UsageError);  // K > N
}

// A family flag is parsed once, by parse_options; the family reads the value
// its parse returned, under the flag's current name whatever was typed.
TEST(Options, FamilyFlagsAreParsedOnceAndKeptTyped) {
  int calls = 0;
  FlagSection s{"Fam",
                {{"--fam-n",
                  "N",
                  "a count",
                  [&](const std::string& flag, const std::string& v) {
                    ++calls;
                    return std::any(parse_int(flag, v, 1, 100));
                  },
                  {"--fam-count"}}},
                {}};
  const Options o = parse({"--fam-count=42"}, nullptr, {s});
  EXPECT_EQ(calls, 1);
  ASSERT_NE(o.value<std::int64_t>("--fam-n"), nullptr);
  EXPECT_EQ(*o.value<std::int64_t>("--fam-n"), 42);
  EXPECT_EQ(calls, 1);
  EXPECT_THROW(o.value<int>("--fam-n"), std::logic_error);  // read as the wrong type
  EXPECT_EQ(parse({}, nullptr, {s}).value<std::int64_t>("--fam-n"), nullptr);
  EXPECT_THROW(parse({"--fam-n=0"}, nullptr, {s}), UsageError);
}

TEST(Options, HelpListsEveryFamilyFlagWithItsOldName) {
  std::string text;  // whitespace runs as one space: the help is wrapped
  for (char c : usage(family_flags()))
    if (!(c == ' ' || c == '\n') || text.empty() || text.back() != ' ') text += (c == '\n' ? ' ' : c);
  for (const auto& sec : family_flags())
    for (const auto& f : sec.flags) {
      EXPECT_NE(text.find(" " + f.name + "=" + f.metavar + " "), std::string::npos) << f.name;
      for (const auto& old : f.old_names) EXPECT_NE(text.find("formerly " + old), std::string::npos) << old;
    }
  EXPECT_EQ(usage().find("--gemm-shapes"), std::string::npos);
}

TEST(Options, DefaultThreadAxisEndsAtCoreCount) {
  auto t = default_thread_axis();
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(t.front(), 1);
  EXPECT_EQ(t.back(), core_count());
}

TEST(Options, NumbersAndDimsParseOrSayWhy) {
  EXPECT_DOUBLE_EQ(parse_number("--x", "1.5"), 1.5);
  EXPECT_DOUBLE_EQ(parse_number("--x", "-2e-3"), -2e-3);
  for (const char* bad : {"", "1.5x", "inf", "nan", "1e999", "abc"}) {
    try {
      parse_number("--x", bad);
      ADD_FAILURE() << "'" << bad << "' parsed";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--x: '" + std::string(bad) + "' is not a finite number"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(parse_dims("--g", "1000x1500", 2, 1, 4096, "MxN"), (std::vector<std::int64_t>{1000, 1500}));
  EXPECT_EQ(parse_dims("--g", "7x8x9", 3, 1, 9, "NxDxK"), (std::vector<std::int64_t>{7, 8, 9}));
  try {
    parse_dims("--g", "1000", 2, 1, 4096, "MxN");
    ADD_FAILURE() << "one number parsed as MxN";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--g: '1000' is not MxN");
  }
  EXPECT_THROW(parse_dims("--g", "10x5000", 2, 1, 4096, "MxN"), UsageError);  // out of range
  EXPECT_THROW(parse_dims("--g", "10xab", 2, 1, 4096, "MxN"), UsageError);
}

TEST(Options, ToolFlagsAndHelp) {
  std::string v = "unchanged";
  EXPECT_TRUE(flag_value("--out=dir/x", "--out", v));
  EXPECT_EQ(v, "dir/x");
  EXPECT_TRUE(flag_value("--out=", "--out", v));
  EXPECT_EQ(v, "");
  v = "unchanged";
  EXPECT_FALSE(flag_value("--output=x", "--out", v));  // another flag with the same start
  EXPECT_FALSE(flag_value("--out", "--out", v));       // no value
  EXPECT_EQ(v, "unchanged");
  char prog[] = "tool", help[] = "--help", h[] = "-h", other[] = "--out=x";
  char* one[] = {prog, help};
  char* short_form[] = {prog, h};
  char* two[] = {prog, other, help};
  char* none[] = {prog, other};
  EXPECT_TRUE(help_asked(2, one));
  EXPECT_TRUE(help_asked(2, short_form));
  EXPECT_FALSE(help_asked(3, two));  // help only as the only argument
  EXPECT_FALSE(help_asked(2, none));
}
