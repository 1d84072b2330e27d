// Enum name tables: every value's name parses back to it, a name not in the table (or spelt in
// another case) is refused, a value missing from the table gets the fallback, and a table that
// lists a value or a name twice fails its static check.
#include "common/enum_names.h"

#include <gtest/gtest.h>

#include <string>

namespace gpumeter {
namespace {

enum class Fruit { kApple, kPear, kQuince, kUnlisted };

constexpr EnumName<Fruit> kFruitNames[] = {
    {Fruit::kApple, "apple"}, {Fruit::kPear, "pear"}, {Fruit::kQuince, "quince"}};
static_assert(DistinctEnumNames(kFruitNames));
static_assert(EnumFromString(kFruitNames, "pear") == Fruit::kPear, "usable at compile time");

constexpr EnumName<Fruit> kValueTwice[] = {{Fruit::kApple, "apple"}, {Fruit::kApple, "malus"}};
constexpr EnumName<Fruit> kNameTwice[] = {{Fruit::kApple, "apple"}, {Fruit::kPear, "apple"}};
static_assert(!DistinctEnumNames(kValueTwice));
static_assert(!DistinctEnumNames(kNameTwice));

TEST(EnumNames, EveryNameRoundTrips) {
  for (const auto& e : kFruitNames) {
    const std::string name = EnumToString(kFruitNames, e.value, "?");
    EXPECT_EQ(name, e.name);
    const auto back = EnumFromString(kFruitNames, name);
    ASSERT_TRUE(back.has_value()) << name;
    EXPECT_EQ(*back, e.value) << name;
  }
}

TEST(EnumNames, UnknownNamesAreRefused) {
  EXPECT_FALSE(EnumFromString(kFruitNames, "banana").has_value());
  EXPECT_FALSE(EnumFromString(kFruitNames, "Apple").has_value()) << "names are exact";
  EXPECT_FALSE(EnumFromString(kFruitNames, "apple ").has_value());
  EXPECT_FALSE(EnumFromString(kFruitNames, "").has_value());
  EXPECT_FALSE(EnumFromString(kFruitNames, "?").has_value()) << "the fallback is no name";
}

TEST(EnumNames, AValueWithoutANameGetsTheFallback) {
  EXPECT_STREQ(EnumToString(kFruitNames, Fruit::kUnlisted, "unknown"), "unknown");
  EXPECT_STREQ(EnumToString(kFruitNames, static_cast<Fruit>(42), ""), "");
}

}  // namespace
}  // namespace gpumeter
