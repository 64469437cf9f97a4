// A registry line with named fields (core/family.hpp, Entry::Line): the
// defaults of what a line leaves out, each setter's field, and a line
// without a factory or a code refused at start-up.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "core/family.hpp"

using namespace pb;

namespace {

struct Thing {
  int made_with = 0;
};
struct Marks {
  bool special = false;
};
using TestEntry = Entry<Thing, Marks>;

std::unique_ptr<Thing> make_thing(int v) {
  auto t = std::make_unique<Thing>();
  t->made_with = v;
  return t;
}

}  // namespace

TEST(EntryLine, DefaultsAreACpuVariantWithNoKnobNoCapNoLibrary) {
  const TestEntry e =
      TestEntry::Line("Plain").code("impl/x/plain.cpp").factory([](const Knobs&) { return make_thing(0); });
  EXPECT_STREQ(e.name, "Plain");
  EXPECT_EQ(e.backend, Backend::Cpu);
  EXPECT_EQ(e.knob, Knob::None);
  EXPECT_TRUE(e.blocks.empty());
  EXPECT_EQ(e.cap.log2(Profile::Default), WorkCap::kNone);
  EXPECT_EQ(e.role, Role::Variant);
  EXPECT_EQ(e.code.sources, std::vector<std::string>{"impl/x/plain.cpp"});
  EXPECT_STREQ(e.library, "");
  EXPECT_FALSE(e.traits.special);
}

TEST(EntryLine, EachSetterSetsItsField) {
  constexpr WorkCap cap{10, 20, 30};
  const std::vector<TestEntry> list = {
      TestEntry::Line("Base")
          .role(Role::Baseline)
          .threads()
          .cap(cap)
          .code("impl/x/base.cpp")
          .factory([](const Knobs& k) { return make_thing(k.threads); }),
      TestEntry::Line("Gpu")
          .cuda()
          .blocks({16, 32})
          .code(Code("impl/x/gpu.cu").plus("impl/x/lib.cu"))
          .library("cub")
          .traits(Marks{true})
          .factory([](const Knobs& k) { return make_thing(k.block); }),
      TestEntry::Line("Team")
          .on(Backend::MpiCuda)
          .knob(Knob::Gpus)
          .code("impl/x/team.cu")
          .factory([](const Knobs& k) { return make_thing(k.gpus); }),
  };
  EXPECT_EQ(list[0].role, Role::Baseline);
  EXPECT_EQ(list[0].knob, Knob::Threads);
  EXPECT_EQ(list[0].cap.log2(Profile::Smoke), 10);
  EXPECT_EQ(list[0].cap.log2(Profile::Full), 30);
  EXPECT_EQ(list[0].make(Knobs{7, 0})->made_with, 7);
  EXPECT_EQ(list[1].backend, Backend::Cuda);
  EXPECT_EQ(list[1].knob, Knob::Block);
  EXPECT_EQ(list[1].blocks, (std::vector<int>{16, 32}));
  EXPECT_EQ(list[1].code.sources.size(), 2u);
  EXPECT_STREQ(list[1].library, "cub");
  EXPECT_TRUE(list[1].traits.special);
  EXPECT_EQ(list[1].make(Knobs{1, 32})->made_with, 32);
  EXPECT_EQ(list[2].backend, Backend::MpiCuda);
  EXPECT_EQ(list[2].knob, Knob::Gpus);
  EXPECT_EQ(list[2].role, Role::Variant);
}

TEST(EntryLine, ALineWithoutFactoryOrCodeIsRefused) {
  EXPECT_THROW((void)TestEntry(TestEntry::Line("NoFactory").code("impl/x/a.cpp")), std::logic_error);
  EXPECT_THROW((void)TestEntry(TestEntry::Line("NoCode").factory([](const Knobs&) { return make_thing(0); })),
               std::logic_error);
}
