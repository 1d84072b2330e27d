// What Load refuses before building a document, so that no YAML input hangs or exhausts memory:
// aliases (a "billion laughs"), deep nesting, oversize text. Each refusal names the document and,
// where there is one, the place.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "common/yaml/reader.h"
#include "support/yaml_bombs.h"

namespace gpumeter::yaml {
namespace {

using ::testing::HasSubstr;

const char* const kAliasRefused = "YAML aliases are not accepted (*a); write the value out";

TEST(YamlLimits, ABillionLaughsIsRefusedAtItsFirstAlias) {
  const auto r = Load(testing::BillionLaughs(), "lol.yaml");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidInput);
  EXPECT_EQ(r.error().message, std::string("lol.yaml: line 2, column 8: ") + kAliasRefused);
  const auto parsed = Parse<int>(testing::BillionLaughs(), "lol.yaml", [](const Field&) {
    ADD_FAILURE() << "a refused document reaches no reader";
    return 0;
  });
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message, r.error().message);
}

TEST(YamlLimits, EveryAliasIsRefusedAnAnchorAloneIsNot) {
  const auto merged = Load(testing::kMergedAlias, "p.yaml");
  ASSERT_FALSE(merged);
  EXPECT_EQ(merged.error().message,
            "p.yaml: line 3, column 7: YAML aliases are not accepted (*base); write the value out");
  const auto one = Load("a: &a 1\nb: *a\n", "p.yaml");
  ASSERT_FALSE(one) << "even one alias of a scalar";
  EXPECT_EQ(one.error().message, std::string("p.yaml: line 2, column 4: ") + kAliasRefused);
  const auto as_key = Load("a: &a k\n*a : 1\n", "p.yaml");
  ASSERT_FALSE(as_key);
  EXPECT_THAT(as_key.error().message, HasSubstr("p.yaml: line 2, column 1: YAML aliases"));
  const auto anchored = Load("a: &a {x: 1}\nb: 2\n", "p.yaml");
  ASSERT_TRUE(anchored) << anchored.error().message;
  EXPECT_EQ(anchored->Child("a").Child("x").UInt(), 1u) << "an anchor nothing refers to is read";
}

TEST(YamlLimits, NestingDeeperThanTheLimitIsRefused) {
  const auto at_limit = Load(testing::NestedLists(kMaxDepth), "f.yaml");
  ASSERT_TRUE(at_limit) << at_limit.error().message;
  const auto over = Load(testing::NestedLists(kMaxDepth + 1), "f.yaml");
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, ErrorCode::kInvalidInput);
  EXPECT_EQ(over.error().message,
            "f.yaml: line 1, column 65: nested deeper than 64 levels (refused)");
  const auto far = Load(testing::NestedLists(100000), "f.yaml");
  ASSERT_FALSE(far) << "refused before any parser recurses 100,000 levels deep";
  EXPECT_EQ(far.error().message, over.error().message);
  // The same in block style: mapping k starts on line k.
  std::string block;
  for (size_t i = 0; i <= kMaxDepth; ++i) block += std::string(2 * i, ' ') + "k:\n";
  const auto blocks = Load(block, "f.yaml");
  ASSERT_FALSE(blocks);
  EXPECT_THAT(blocks.error().message, HasSubstr("f.yaml: line 65, "));
  EXPECT_THAT(blocks.error().message, HasSubstr(": nested deeper than 64 levels (refused)"));
}

TEST(YamlLimits, AnOversizeDocumentIsRefusedUnread) {
  const std::string text = "a: " + std::string(kMaxDocumentBytes - 2, 'x');
  const auto r = Load(text, "big.yaml");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidInput);
  EXPECT_EQ(r.error().message,
            "big.yaml: 16777217 bytes, more than the 16 MiB a YAML document may have (refused)");
}

// The limits come before, not instead of, the checks every document had.
TEST(YamlLimits, WithinTheLimitsDocumentsAreReadAndCheckedAsBefore) {
  const auto dup = Load("gpus:\n  - index: 0\n    index: 1\n", "s.yaml", KeyWord::kField);
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().message,
            "s.yaml: gpus[0]: duplicate field 'index' (line 3, first at line 2)");
  const auto deep_dup = Load("[[[[[[[[{a: 1, a: 2}]]]]]]]]", "f.yaml");
  ASSERT_FALSE(deep_dup);
  EXPECT_THAT(deep_dup.error().message, HasSubstr("duplicate key 'a'"));
  const auto ok =
      Load("currency: EUR\nnodes:\n  p5: {price_per_hour: 55.04, gpus: 8}\nlist: [1, [2, [3]]]\n",
           "p.yaml");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->Child("nodes").Child("p5").Child("gpus").UInt(), 8u);
  EXPECT_EQ(ok->Child("list").At(1).At(1).At(0).UInt(), 3u);
}

}  // namespace
}  // namespace gpumeter::yaml
