// Range replies (resultType "matrix"), the segments a window is read in, and the per-step growth
// of a counter from a range query: pure functions, on good and broken input.
#include <gtest/gtest.h>

#include <string>

#include "sources/history/prometheus_history.h"
#include "sources/history/prometheus_matrix_reader.h"
#include "sources/history/prometheus_reply.h"
#include "sources/history/recorded_coverage.h"

namespace gpumeter::history {
namespace {

constexpr const char* kWhat = "prometheus http://p:9090, range query up";

std::string Matrix(const std::string& result) {
  return R"({"status":"success","data":{"resultType":"matrix","result":)" + result + "}}";
}

TEST(PrometheusMatrix, AGoodReplyGivesEachSeriesPoints) {
  const auto r = ParseMatrixReply(
      Matrix(R"([{"metric":{"node":"n1"},"values":[[1796083200,"1"],[1796083260.5,"2.5"]]}])"), 200,
      kWhat);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].labels.at("node"), "n1");
  ASSERT_EQ((*r)[0].points.size(), 2u);
  EXPECT_EQ((*r)[0].points[0].first, 1'796'083'200'000);
  EXPECT_EQ((*r)[0].points[1].first, 1'796'083'260'500);
  EXPECT_DOUBLE_EQ((*r)[0].points[1].second, 2.5);
}

TEST(PrometheusMatrix, BrokenRepliesAreRefusedWithTheField) {
  struct Case {
    std::string body, want;
  };
  const Case cases[] = {
      {R"({"status":"success","data":{"resultType":"vector","result":[]}})",
       "data.resultType: expected \"matrix\""},
      {Matrix(R"([{"metric":{},"values":"x"}])"), "data.result[0].values: missing or not an array"},
      {Matrix(R"([{"metric":{},"values":[[2,"1"],[1,"2"]]}])"),
       "data.result[0].values[1][0]: times must increase"},
      {Matrix(R"([{"metric":{},"values":[[1,"+Inf"]]}])"), "not a finite number"},
      {Matrix(R"([{"metric":{},"values":[["1","1"]]}])"), "expected a time in seconds"},
      {Matrix(R"([{"metric":{},"values":[[1e300,"1"]]}])"), "out of range"},
      {Matrix(R"([{"metric":{},"values":[[1,"1",3]]}])"), "expected [time, \"value\"]"},
  };
  for (const auto& c : cases) {
    const auto r = ParseMatrixReply(c.body, 200, kWhat);
    ASSERT_FALSE(r) << c.body;
    EXPECT_NE(r.error().message.find(c.want), std::string::npos)
        << c.body << " → " << r.error().message;
  }
}

TEST(PrometheusMatrix, PointsPerSeriesAreCapped) {
  std::string values;
  for (int i = 0; i < 5; ++i)
    values += (i ? "," : "") + std::string("[") + std::to_string(i + 1) + ",\"1\"]";
  ReplyLimits limits;
  limits.max_points = 4;
  const auto r =
      ParseMatrixReply(Matrix(R"([{"metric":{},"values":[)" + values + "]}]"), 200, kWhat, limits);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("5 points, over the cap of 4"), std::string::npos)
      << r.error().message;
}

// The fast path reads a good reply as the document path does, whatever the order of its keys and
// whatever it carries besides (warnings, stats, a series' native histograms): same labels, same
// points.
TEST(PrometheusMatrix, TheFastPathReadsAGoodReplyAsTheDocumentDoes) {
  const std::string bodies[] = {
      Matrix(R"([{"metric":{"node":"n1","unit":"U"},"values":[[60,"1"],[120.25,"2.5e3"]]},)"
             R"({"metric":{},"values":[]}])"),
      R"({"warnings":["partial"],"data":{"result":[{"values":[[1,"0"]],"histograms":[[1,{"count":"1","buckets":[[0,"1","2","3"]]}]],"metric":{"a":"b"}}],"stats":{"timings":{"x":1.5,"y":null,"z":true}},"resultType":"matrix"},"status":"success"})",
  };
  for (const auto& body : bodies) {
    const auto fast = ReadGoodMatrix(body, {});
    ASSERT_TRUE(fast) << body;
    const auto doc = ParseMatrixDocument(body, 200, kWhat);
    ASSERT_TRUE(doc) << doc.error().message;
    ASSERT_EQ(fast->size(), doc->size());
    for (size_t i = 0; i < fast->size(); ++i) {
      EXPECT_EQ((*fast)[i].labels, (*doc)[i].labels);
      EXPECT_EQ((*fast)[i].points, (*doc)[i].points);
    }
  }
}

// Whatever the fast path does not take is the document path's: the same error, naming the field,
// or (duplicate keys, which a document keeps the last of) the same series.
TEST(PrometheusMatrix, WhatTheFastPathRefusesTheDocumentAnswers) {
  ReplyLimits limits;
  limits.max_series = 2;
  limits.max_points = 2;
  const std::string refused[] = {
      R"({"status":"error","errorType":"timeout","error":"query timed out"})",
      R"({"status":"success","data":{"resultType":"vector","result":[]}})",
      R"({"status":"success","data":{"result":[]}})",
      R"({"data":{"resultType":"matrix","result":[]}})",
      Matrix(R"([{"metric":{},"values":[[1,"1"],[2,"1"],[3,"1"]]}])"),
      Matrix(R"([{"metric":{}},{"metric":{},"values":[]}])"),
      Matrix(R"([{"metric":{},"values":[]},{"metric":{},"values":[]},{"metric":{},"values":[]}])"),
      Matrix(R"([{"metric":{"a":1},"values":[]}])"),
      Matrix(R"([{"metric":{},"values":[[1,"NaN"]]}])"),
      Matrix(R"([{"metric":{},"values":[[1,"-1"]]}])"),
      Matrix(R"([{"metric":{},"values":[[-1,"1"]]}])"),
      Matrix(R"([{"metric":{},"values":[[1,"1"],[1,"1"]]}])"),
      Matrix(R"([{"metric":{},"values":[[1]]}])"),
      Matrix(R"([{"metric":{},"values":[{"t":1}]}])"),
      Matrix(R"([[]])"),
      R"({"status":"success","data":{"resultType":"matrix","result":[]}} trailing)",
      R"([{"status":"success"}])",
      R"("success")",
      // Nested past the limit (16) under a key no one reads.
      R"({"status":"success","data":{"resultType":"matrix","result":[],"x":)" +
          std::string(16, '[') + "1" + std::string(16, ']') + "}}",
  };
  for (const auto& body : refused) {
    EXPECT_FALSE(ReadGoodMatrix(body, limits)) << body;
    const auto r = ParseMatrixReply(body, 200, kWhat, limits);
    const auto doc = ParseMatrixDocument(body, 200, kWhat, limits);
    ASSERT_EQ(r.has_value(), doc.has_value()) << body;
    if (!r) {
      EXPECT_EQ(r.error().message, doc.error().message);
    }
  }
  const std::string duplicates[] = {
      Matrix(R"([{"metric":{"a":"1","a":"2"},"values":[[1,"1"]]}])"),
      Matrix(R"([{"metric":{},"values":[[1,"1"]],"values":[[2,"2"]]}])"),
      R"({"status":"success","status":"success","data":{"resultType":"matrix","result":[]}})",
  };
  for (const auto& body : duplicates) {
    EXPECT_FALSE(ReadGoodMatrix(body, limits)) << body;
    const auto r = ParseMatrixReply(body, 200, kWhat, limits);
    const auto doc = ParseMatrixDocument(body, 200, kWhat, limits);
    ASSERT_TRUE(r && doc) << body;
    ASSERT_EQ(r->size(), doc->size());
    for (size_t i = 0; i < r->size(); ++i) EXPECT_EQ((*r)[i].points, (*doc)[i].points);
  }
}

TEST(RecordedCoverage, NoEvaluationsIsOneRawSegment) {
  const auto s = PlanSegments(1000, 90000, {});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].from, 1000);
  EXPECT_EQ(s[0].to, 90000);
  EXPECT_FALSE(s[0].recorded);
}

TEST(RecordedCoverage, WholeHoursAreRecordedAndTheEndsRaw) {
  // Evaluations at a phase of 17 min: 00:17, 01:17, … The window is 00:00 .. 05:00.
  std::vector<int64_t> evals;
  for (int h = 0; h < 6; ++h) evals.push_back(h * 3600 + 1020);
  const auto s = PlanSegments(0, 5 * 3600, evals);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].from, 0);  // 00:00 .. 00:17 raw: the 00:17 evaluation's hour began before
  EXPECT_EQ(s[0].to, 1020);
  EXPECT_FALSE(s[0].recorded);
  EXPECT_EQ(s[1].from, 1020);  // 00:17 .. 04:17 from the evaluations at 01:17 .. 04:17
  EXPECT_EQ(s[1].to, 4 * 3600 + 1020);
  EXPECT_TRUE(s[1].recorded);
  EXPECT_EQ(s[2].from, 4 * 3600 + 1020);
  EXPECT_EQ(s[2].to, 5 * 3600);
  EXPECT_FALSE(s[2].recorded);
}

TEST(RecordedCoverage, AMissedEvaluationIsReadRaw) {
  // 01:00, 02:00, (03:00 missed: Prometheus was restarting), 04:00, 05:00.
  const auto s = PlanSegments(0, 5 * 3600, {3600, 7200, 14400, 18000});
  ASSERT_EQ(s.size(), 3u);
  EXPECT_TRUE(s[0].recorded);
  EXPECT_EQ(s[0].from, 0);
  EXPECT_EQ(s[0].to, 7200);
  EXPECT_FALSE(s[1].recorded);  // 02:00 .. 03:00
  EXPECT_EQ(s[1].from, 7200);
  EXPECT_EQ(s[1].to, 10800);
  EXPECT_TRUE(s[2].recorded);  // the hours ending 04:00 and 05:00
  EXPECT_EQ(s[2].from, 10800);
  EXPECT_EQ(s[2].to, 18000);
}

TEST(RecordedCoverage, RulesDeployedMidWindowCoverOnlyTheirPart) {
  const auto s = PlanSegments(0, 10 * 3600, {8 * 3600, 9 * 3600, 10 * 3600});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_FALSE(s[0].recorded);
  EXPECT_EQ(s[0].to, 7 * 3600);
  EXPECT_TRUE(s[1].recorded);
  EXPECT_EQ(s[1].from, 7 * 3600);
  EXPECT_EQ(s[1].to, 10 * 3600);
  EXPECT_NE(DescribeSegments(s).find("recorded hourly series for 3 h"), std::string::npos)
      << DescribeSegments(s);
}

TEST(RecordedCoverage, OnlyTheLongestRunsAreUsedAndSegmentsNeverOverlap) {
  // Every other hour evaluated: runs of one hour each, more than the cap.
  std::vector<int64_t> evals;
  for (int h = 1; h <= 40; h += 2) evals.push_back(h * 3600);
  const auto s = PlanSegments(0, 40 * 3600, evals, 3);
  int recorded = 0;
  int64_t at = 0;
  for (const auto& seg : s) {
    EXPECT_EQ(seg.from, at);
    EXPECT_LT(seg.from, seg.to);
    at = seg.to;
    recorded += seg.recorded;
  }
  EXPECT_EQ(at, 40 * 3600);
  EXPECT_EQ(recorded, 3);
}

std::vector<std::pair<int64_t, double>> Points(
    std::initializer_list<std::pair<int64_t, double>> p) {
  std::vector<std::pair<int64_t, double>> out;
  for (const auto& [t, v] : p) out.emplace_back(t * 1000, v);
  return out;
}

TEST(StepGrowth, DifferencesOfConsecutiveSteps) {
  const auto g = StepGrowth(Points({{0, 100}, {60, 130}, {120, 190}}), 0, 120, 60);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_DOUBLE_EQ(g.at(0), 30);
  EXPECT_DOUBLE_EQ(g.at(60), 60);
}

TEST(StepGrowth, ABornSeriesGrewByItsFirstValue) {
  const auto g = StepGrowth(Points({{120, 20}, {180, 50}}), 0, 180, 60);
  EXPECT_DOUBLE_EQ(g.at(60), 20);
  EXPECT_DOUBLE_EQ(g.at(120), 30);
}

TEST(StepGrowth, AResetCountsTheNewValue) {
  const auto g = StepGrowth(Points({{0, 500}, {60, 10}, {120, 40}}), 0, 120, 60);
  EXPECT_DOUBLE_EQ(g.at(0), 10);
  EXPECT_DOUBLE_EQ(g.at(60), 30);
}

TEST(StepGrowth, AGapIsSpreadOverItsSteps) {
  const auto g = StepGrowth(Points({{0, 0}, {240, 120}}), 0, 240, 60);
  ASSERT_EQ(g.size(), 4u);
  for (const int64_t t : {0, 60, 120, 180}) EXPECT_DOUBLE_EQ(g.at(t), 30) << t;
}

TEST(StepGrowth, PointsOutsideTheQueryAreIgnored) {
  // A hostile reply: a point far past the range would make a gap of billions of steps.
  const auto g = StepGrowth(Points({{0, 0}, {60, 30}, {99'999'999'999, 1e9}}), 0, 120, 60);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_DOUBLE_EQ(g.at(0), 30);
}

TEST(RecordedCoverage, TwoEvaluatorsAtOtherPhasesNeverGiveOverlappingOrShortSegments) {
  // One evaluator at :17, another at :43 (two rule files): runs overlap by 34 minutes.
  std::vector<int64_t> evals;
  for (int h = 1; h <= 6; ++h) evals.push_back(h * 3600 + 1020), evals.push_back(h * 3600 + 2580);
  const auto s = PlanSegments(0, 8 * 3600, evals);
  int64_t at = 0;
  for (const auto& seg : s) {
    EXPECT_EQ(seg.from, at);
    if (seg.recorded) {
      EXPECT_GE(seg.to - seg.from, 3600) << seg.from << ".." << seg.to;
    }
    at = seg.to;
  }
  EXPECT_EQ(at, 8 * 3600);
}

}  // namespace
}  // namespace gpumeter::history
