#include "common/json/key_case.h"

#include <gtest/gtest.h>

namespace gpumeter::json_case {
namespace {

using nlohmann::json;

TEST(KeyCase, WordsJoinAndSplit) {
  EXPECT_EQ(CamelCase("gpu_uuid"), "gpuUuid");
  EXPECT_EQ(CamelCase("last_success_age_seconds"), "lastSuccessAgeSeconds");
  EXPECT_EQ(CamelCase("node"), "node");
  EXPECT_EQ(CamelCase("already_camelCase"), "alreadyCamelCase");
  EXPECT_EQ(CamelCase("_private"), "_private") << "a leading '_' is not a word break";
  EXPECT_EQ(CamelCase("trailing_"), "trailing_");
  EXPECT_EQ(SnakeCase("gpuUuid"), "gpu_uuid");
  EXPECT_EQ(SnakeCase("lastSuccessAgeSeconds"), "last_success_age_seconds");
  EXPECT_EQ(SnakeCase("node"), "node");
  for (const char* k : {"memory_busy_bound_ratio", "waste_gpu_hours", "replicas_held", "pid"})
    EXPECT_EQ(SnakeCase(CamelCase(k)), k) << "round trip";
}

// Nested objects and arrays are respelled; a data-keyed object (a pod's labels) is not, in either
// direction; scalars and nulls pass through.
TEST(KeyCase, DocumentsAtAnyDepthExceptDataKeyedObjects) {
  const json v1 = json::parse(R"({
    "node": "n", "pod_labels": [{"namespace": "ml", "labels": {"team_name": "vision", "app": "x"}}],
    "units": [{"gpu_uuid": "GPU-1", "memory_total_bytes": null,
               "holders": [{"replicas_held": 2, "share": 0.5}]}]})");
  const auto v2 = ToCamelCase(v1, {"labels"});
  ASSERT_TRUE(v2) << v2.error().message;
  EXPECT_EQ(*v2, json::parse(R"({
    "node": "n", "podLabels": [{"namespace": "ml", "labels": {"team_name": "vision", "app": "x"}}],
    "units": [{"gpuUuid": "GPU-1", "memoryTotalBytes": null,
               "holders": [{"replicasHeld": 2, "share": 0.5}]}]})"));
  const auto back = ToSnakeCase(*v2, {"labels"});
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, v1);
  const auto without = ToCamelCase(v1);
  ASSERT_TRUE(without);
  EXPECT_TRUE((*without)["podLabels"][0]["labels"].contains("teamName"))
      << "without the exemption the labels would be respelled: the exemption is what keeps them";
}

TEST(KeyCase, DeepNestingIsAnErrorNotAStackOverflow) {
  std::string deep(1000, '[');
  deep += std::string(1000, ']');
  const auto r = ToSnakeCase(json::parse(deep));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("nested deeper than 64"), std::string::npos);
  std::string ok(60, '[');
  ok += std::string(60, ']');
  EXPECT_TRUE(ToCamelCase(json::parse(ok)));
}

TEST(KeyCase, KeysThatWouldMeetAreRefusedByName) {
  const auto both =
      ToCamelCase(json::parse(R"({"ok": 1, "inner": {"gpu_uuid": 1, "gpuUuid": 2}})"));
  ASSERT_FALSE(both);
  EXPECT_NE(both.error().message.find("'gpuUuid' and 'gpu_uuid' would both be 'gpuUuid'"),
            std::string::npos)
      << both.error().message;
  EXPECT_FALSE(ToSnakeCase(json::parse(R"({"aB": 1, "a_b": 2})")));
}

}  // namespace
}  // namespace gpumeter::json_case
