// Strict JSON: a key twice in one object, nesting past the bound and what is not JSON are
// refused, each saying so and naming the document; the same key in two objects is not a
// duplicate.
#include "common/json/strict_parse.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace gpumeter::json_strict {
namespace {

TEST(StrictParse, DuplicatesDepthAndSyntaxAreRefusedNamingTheDocument) {
  const std::pair<std::string, std::string> cases[] = {
      {R"({"a":1,"a":2})", "pods file: duplicate key 'a'"},
      {R"({"items":[{"metadata":{"uid":"u","uid":"v"}}]})", "pods file: duplicate key 'uid'"},
      {R"({"x":{"k":"1"},"y":{"k":"2","k":"3"}})", "pods file: duplicate key 'k'"},
      {std::string(10, '[') + std::string(10, ']'), "pods file: nested deeper than 8 levels"},
      {"{not json", "pods file: not valid JSON: parse error at line 1, column 3"},
  };
  for (const auto& [text, want] : cases) {
    const auto r = Parse(text, "pods file", 8);
    ASSERT_FALSE(r) << text;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidInput);
    EXPECT_EQ(r.error().message.substr(0, want.size()), want) << r.error().message;
  }
}

TEST(StrictParse, TheSameKeyInTwoObjectsIsNotADuplicate) {
  const auto r =
      Parse(R"({"a":{"name":"x"},"b":[{"name":"y"},{"name":"z"}],"name":"n"})", "doc", 8);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ((*r)["b"][1]["name"], "z");
  EXPECT_TRUE(Parse(std::string(8, '[') + std::string(8, ']'), "doc", 8)) << "at the bound";
}

}  // namespace
}  // namespace gpumeter::json_strict
