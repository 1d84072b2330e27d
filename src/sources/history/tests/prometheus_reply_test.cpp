// The Prometheus reply parser on hostile and broken replies: each refused with the field and a
// short, printable quote of what was there; never an exception, never a partial result.
#include "sources/history/prometheus_reply.h"

#include <gtest/gtest.h>

#include <string>

namespace gpumeter::history {
namespace {

constexpr const char* kWhat = "prometheus http://p:9090, query up";

std::string Vector(const std::string& result) {
  return R"({"status":"success","data":{"resultType":"vector","result":)" + result + "}}";
}

TEST(PrometheusReply, AGoodReplyGivesLabelsAndValues) {
  const auto r = ParseVectorReply(
      Vector(R"([{"metric":{"node":"n1","unit":"GPU-0"},"value":[1796083200.5,"12.25"]},)"
             R"({"metric":{},"value":[1796083200,"0"]}])"),
      200, kWhat);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].labels.at("node"), "n1");
  EXPECT_EQ((*r)[0].labels.at("unit"), "GPU-0");
  EXPECT_DOUBLE_EQ((*r)[0].value, 12.25);
  EXPECT_DOUBLE_EQ((*r)[1].value, 0.0);
}

TEST(PrometheusReply, WrongShapesAreRefusedWithTheField) {
  struct Case {
    std::string body, want;
  };
  const Case cases[] = {
      {R"({"status":"success","data":{"resultType":"vector","result":"oops"}})",
       "data.result: expected an array, found \"oops\""},
      {R"({"status":"success","data":{"resultType":"matrix","result":[]}})",
       "data.resultType: expected \"vector\""},
      {R"({"status":"success","data":[1,2]})", "data: missing or not an object"},
      {R"({"status":"success"})", "data: missing or not an object"},
      {Vector(R"([1])"), "data.result[0]: expected an object, found 1"},
      {Vector(R"([{"value":[1,"2"]}])"), "data.result[0].metric: missing"},
      {Vector(R"([{"metric":{"a":7},"value":[1,"2"]}])"),
       "data.result[0].metric.a: expected a string"},
      {Vector(R"([{"metric":{},"value":"2"}])"),
       "data.result[0].value: expected [time, \"value\"]"},
      {Vector(R"([{"metric":{},"value":[1,2]}])"), "data.result[0].value[1]: expected a string"},
      {Vector(R"([{"metric":{},"value":[1,"+Inf"]}])"), "'+Inf' is not a finite number >= 0"},
      {Vector(R"([{"metric":{},"value":[1,"NaN"]}])"), "'NaN' is not a finite number >= 0"},
      {Vector(R"([{"metric":{},"value":[1,"-3"]}])"), "'-3' is not a finite number >= 0"},
      {Vector(R"([{"metric":{},"value":[1,"12abc"]}])"), "'12abc' is not a number"},
      {"[]", "HTTP 200: '[]'"},
      {"<html>\x01\n</html>", "HTTP 200, reply is not JSON: '<html>\\x01\\x0a</html>'"},
  };
  for (const auto& c : cases) {
    const auto r = ParseVectorReply(c.body, 200, kWhat);
    ASSERT_FALSE(r) << c.body;
    EXPECT_EQ(r.error().message.rfind(kWhat, 0), 0u) << r.error().message;
    EXPECT_NE(r.error().message.find(c.want), std::string::npos)
        << c.body << "\n → " << r.error().message;
  }
}

TEST(PrometheusReply, ErrorRepliesGiveTheServersReason) {
  const auto r = ParseVectorReply(
      R"({"status":"error","errorType":"bad_data","error":"parse error at char 3"})", 400, kWhat);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("HTTP 400: bad_data: parse error at char 3"), std::string::npos)
      << r.error().message;
  const auto html = ParseVectorReply(std::string(5000, 'x'), 502, kWhat);
  ASSERT_FALSE(html);
  EXPECT_LT(html.error().message.size(), 300u) << "at most 200 characters of the body are quoted";
}

TEST(PrometheusReply, DeepNestingAndOversizeAreRefusedBeforeParsing) {
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  const auto r = ParseVectorReply(deep, 200, kWhat);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("nested deeper than 16"), std::string::npos)
      << r.error().message;
  // Brackets inside strings are not nesting.
  const auto in_string = ParseVectorReply(
      Vector(R"([{"metric":{"a":"[[[[[[[[[[[[[[[[[[[[[[[[[[["},"value":[1,"1"]}])"), 200, kWhat);
  EXPECT_TRUE(in_string) << in_string.error().message;
  ReplyLimits small;
  small.max_bytes = 64;
  const auto big = ParseVectorReply(Vector("[]") + std::string(100, ' '), 200, kWhat, small);
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().message.find("over the cap of 64"), std::string::npos);
  small = {};
  small.max_series = 1;
  const auto many =
      ParseVectorReply(Vector(R"([{"metric":{},"value":[1,"1"]},{"metric":{},"value":[1,"1"]}])"),
                       200, kWhat, small);
  ASSERT_FALSE(many);
  EXPECT_NE(many.error().message.find("2 series, over the cap of 1"), std::string::npos);
}

}  // namespace
}  // namespace gpumeter::history
