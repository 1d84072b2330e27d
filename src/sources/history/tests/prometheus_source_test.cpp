// Bad replies from Prometheus: each a clear error naming the server, never a partial report.
#include "sources/history/prometheus_source.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <string>

#include "support/loopback_server.h"

namespace gpumeter::history {
namespace {

// A Prometheus on loopback that answers every query with one fixed reply.
class FixedReply {
 public:
  FixedReply(int status, std::string body)
      : server_([=](httplib::Server& s) {
          s.Get("/api/v1/query", [=](const httplib::Request& req, httplib::Response& res) {
            // A Prometheus without the hourly rules: no evaluations recorded.
            if (req.get_param_value("query").find(kRecordedMarker) != std::string::npos) {
              res.set_content(R"({"status":"success","data":{"resultType":"matrix","result":[]}})",
                              "application/json");
              return;
            }
            res.status = status;
            res.set_content(body, "application/json");
          });
        }) {}
  std::string url() const { return server_.url(); }

 private:
  testing::LoopbackServer server_;
};

TEST(PrometheusSource, BadRepliesAreClearErrors) {
  struct Case {
    int status;
    std::string body, want;
  };
  const Case cases[] = {
      {200, "<html>not json</html>", "HTTP 200"},
      {400, R"({"status":"error","errorType":"bad_data","error":"parse error at char 3"})",
       "parse error at char 3"},
      {200,
       R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"many"]}]}})",
       "is not a number"},
      {200, R"({"status":"success","data":{"resultType":"vector","result":[]}})",
       "no gpumeter_unit_info"},
      {200,
       R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"node":"n1",)"
       R"("unit":"GPU-a","sharing_mode":"vgpu"},"value":[1,"1"]}]}})",
       "gpumeter_unit_info{node=\"n1\", unit=\"GPU-a\"} has sharing_mode \"vgpu\", not exclusive"},
  };
  for (const auto& c : cases) {
    FixedReply prometheus(c.status, c.body);
    PrometheusAccess access;
    access.url = prometheus.url();
    auto api = PrometheusApi::Open(access);
    ASSERT_TRUE(api) << api.error().message;
    const auto r = UsageFromPrometheus(*api, 1'796'083'200, 1'796'083'200 + 3600, {});
    ASSERT_FALSE(r) << c.body;
    EXPECT_NE(r.error().message.find(prometheus.url()), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(c.want), std::string::npos)
        << c.body << " → " << r.error().message;
  }
}

// A Prometheus whose replies depend on the metric asked for: two units on one node, one read
// as longer than the window (increase() extrapolated), one that appeared in it.
class TwoUnits {
 public:
  TwoUnits()
      : server_([](httplib::Server& s) {
          s.Get("/api/v1/query", [](const httplib::Request& req, httplib::Response& res) {
            const std::string q = req.get_param_value("query");
            auto has = [&](const char* m) { return q.find(m) != std::string::npos; };
            auto unit = [](const char* u, const char* extra, const char* v) {
              return std::string(R"({"metric":{"node":"n1","unit":")") + u + "\"" + extra +
                     R"(},"value":[1005,")" + v + "\"]}";
            };
            const char* owner =
                R"(,"namespace":"ml","pod":"p","container":"c","owner_kind":"container")";
            std::string result;
            if (q.rfind("(resets(", 0) == 0 || has(kRecordedMarker)) {
              result = "";
            } else if (has("gpumeter_unit_info")) {
              result =
                  unit("GPU-a", R"(,"gpu_uuid":"GPU-a","model":"H100","sharing_mode":"mps")", "1") +
                  "," + unit("GPU-b", R"(,"gpu_uuid":"GPU-b","model":"H100")", "1");
            } else if (has("gpumeter_unit_seconds_total")) {
              result = unit("GPU-a", "", "5.625") + "," + unit("GPU-b", "", "4");
            } else if (has("gpumeter_energy_joules_total") && !has("unit_energy")) {
              result = unit("GPU-a", owner, "1125") + "," + unit("GPU-b", owner, "800");
            } else if (has("gpumeter_unit_energy_joules_total")) {
              result = unit("GPU-a", "", "2250") + "," + unit("GPU-b", "", "1600");
            } else if (has("gpumeter_requested_share_seconds_total")) {
              result = unit("GPU-a", owner, "5.625") + "," + unit("GPU-b", owner, "4");
            } else if (has("gpumeter_memory_busy_seconds_total")) {
              result = unit("GPU-a", owner, "2.25");  // GPU-b: an agent before memory traffic
            } else if (has("gpumeter_compute_unknown_seconds_total")) {
              result = unit("GPU-a", owner, "1.125");  // GPU-b has none: never unknown
            } else if (has("gpumeter_compute_seconds_total")) {
              result = unit("GPU-a", owner, "2.8125") + "," + unit("GPU-b", owner, "1");
            }
            res.set_content(R"({"status":"success","data":{"resultType":")" +
                                std::string(has(kRecordedMarker) ? "matrix" : "vector") +
                                R"(","result":[)" + result + "]}}",
                            "application/json");
          });
        }) {}
  std::string url() const { return server_.url(); }

 private:
  testing::LoopbackServer server_;
};

TEST(PrometheusSource, NoUnitOutlastsTheWindowAndItsOwnersStillAddUpToIt) {
  TwoUnits prometheus;
  PrometheusAccess access;
  access.url = prometheus.url();
  auto api = PrometheusApi::Open(access);
  ASSERT_TRUE(api) << api.error().message;
  const auto r = UsageFromPrometheus(*api, 1000, 1005, {});
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->units.size(), 2u);
  const auto& a = r->units[0];
  const auto& b = r->units[1];
  ASSERT_EQ(a.unit.uuid, "GPU-a");
  EXPECT_EQ(a.unit.mode, domain::SharingMode::kMps);
  // 5.625 s read in a 5 s window: every counter of the unit and its owner × 5 / 5.625.
  EXPECT_DOUBLE_EQ(a.seconds, 5.0);
  EXPECT_DOUBLE_EQ(a.energy_joules, 2000.0);
  ASSERT_EQ(a.owners.size(), 1u);
  EXPECT_DOUBLE_EQ(a.owners[0].requested_share_seconds, 5.0);
  EXPECT_DOUBLE_EQ(a.owners[0].compute_seconds, 2.5);
  EXPECT_DOUBLE_EQ(a.owners[0].energy_joules, 1000.0);
  EXPECT_DOUBLE_EQ(a.owners[0].compute_unknown_seconds, 1.0) << "capped with the rest";
  EXPECT_DOUBLE_EQ(a.owners[0].memory_busy_seconds, 2.0) << "memory traffic too";
  EXPECT_EQ(a.owners[0].memory_busy_unknown_seconds, 0.0);
  // 4 s: the unit came or went in the window; nothing to correct.
  ASSERT_EQ(b.unit.uuid, "GPU-b");
  EXPECT_FALSE(b.unit.mode.has_value());  // no sharing_mode label: unknown, not "exclusive"
  EXPECT_DOUBLE_EQ(b.seconds, 4.0);
  EXPECT_DOUBLE_EQ(b.energy_joules, 1600.0);
  // No memory-traffic series (an agent before it): the container's traffic is unknown for the
  // unit's time, which unattributed holds, never 0 measured.
  ASSERT_EQ(b.owners.size(), 2u);
  EXPECT_EQ(b.owners[0].owner.kind, domain::OwnerKind::kContainer);
  EXPECT_DOUBLE_EQ(b.owners[0].requested_share_seconds, 4.0);
  EXPECT_DOUBLE_EQ(b.owners[0].compute_seconds, 1.0);
  EXPECT_EQ(b.owners[0].compute_unknown_seconds, 0.0);
  EXPECT_DOUBLE_EQ(b.owners[0].memory_busy_unknown_seconds, 4.0);
  EXPECT_EQ(b.owners[0].memory_busy_seconds, 0.0);
  EXPECT_EQ(b.owners[1].owner.kind, domain::OwnerKind::kUnattributed);
  EXPECT_DOUBLE_EQ(b.owners[1].memory_busy_seconds, 4.0);
}

}  // namespace
}  // namespace gpumeter::history
