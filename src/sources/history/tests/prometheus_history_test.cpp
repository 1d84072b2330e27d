// Rightsizing's reads from Prometheus: a pod whose workload changed under the same name is grouped
// with the workload it had last, whatever order Prometheus lists its series in.
#include "sources/history/prometheus_history.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <string>
#include <vector>

#include "support/loopback_server.h"

namespace gpumeter::history {
namespace {

std::string Sample(const std::string& pod, const std::string& kind, const std::string& name,
                   const std::string& value) {
  return R"({"metric":{"namespace":"ml","pod":")" + pod + R"(","workload_kind":")" + kind +
         R"(","workload":")" + name + R"("},"value":[90000,")" + value + "\"]}";
}

// Replies per query: the recorded hours (valued the last time seen), the raw series present in
// the horizon, and their timestamps (LastSeen's subquery). Every other query: nothing.
class Workloads {
 public:
  Workloads()
      : server_([this](httplib::Server& s) {
          s.Get("/api/v1/query", [this](const httplib::Request& req, httplib::Response& res) {
            const std::string q = req.get_param_value("query");
            auto has = [&](const char* m) { return q.find(m) != std::string::npos; };
            std::vector<std::string> result;
            if (has("gpumeter:pod_workload_info:max1h")) {
              // Listed newest first: taking the last one listed would pick the old workload.
              result = {Sample("old-0", "Deployment", "old", "7000"),
                        Sample("old-0", "Pod", "old-0", "3600")};
            } else if (has("max_over_time(timestamp(gpumeter_pod_workload_info")) {
              // Over the range, at steps: the Deployment's series, born after the last step,
              // is not in it.
              queries_.push_back(q);
              result = {Sample("both-0", "Pod", "both-0", "89990")};
            } else if (has("timestamp(gpumeter_pod_workload_info")) {
              // At the instant: both, each with its latest sample.
              queries_.push_back(q);
              result = {Sample("both-0", "Deployment", "both", "89995"),
                        Sample("both-0", "Pod", "both-0", "89990")};
            } else if (has("last_over_time(gpumeter_pod_workload_info")) {
              result = {Sample("both-0", "Pod", "both-0", "1"),
                        Sample("both-0", "Deployment", "both", "1"),
                        Sample("new-0", "Job", "new", "1")};
            }
            std::string body;
            for (const auto& r : result) body += (body.empty() ? "" : ",") + r;
            res.set_content(
                R"({"status":"success","data":{"resultType":"vector","result":[)" + body + "]}}",
                "application/json");
          });
        }) {}
  std::string url() const { return server_.url(); }
  std::vector<std::string> queries_;  // the LastSeen subqueries received

 private:
  testing::LoopbackServer server_;
};

TEST(PrometheusHistory, APodWhoseWorkloadChangedHasTheLatest) {
  Workloads prometheus;
  PrometheusAccess access;
  access.url = prometheus.url();
  auto api = PrometheusApi::Open(access);
  ASSERT_TRUE(api) << api.error().message;
  PrometheusHistory history(std::move(*api), {}, 90000, 7 * 86400);
  const auto w = history.HistoryPodWorkloads();
  ASSERT_TRUE(w) << w.error().message;
  ASSERT_EQ(w->size(), 3u);
  // Recorded only: the one seen later in its hours.
  EXPECT_EQ(w->at({"ml", "old-0"}).kind, "Deployment");
  EXPECT_EQ(w->at({"ml", "old-0"}).name, "old");
  // Two raw series: the one scraped last, timed for this pod alone, over the range and at the
  // instant (the Deployment's series began after the range's last step).
  EXPECT_EQ(w->at({"ml", "both-0"}).kind, "Deployment");
  EXPECT_EQ(w->at({"ml", "both-0"}).name, "both");
  EXPECT_EQ(w->at({"ml", "new-0"}).name, "new");
  ASSERT_EQ(prometheus.queries_.size(), 2u);
  for (const auto& q : prometheus.queries_)
    EXPECT_NE(q.find(R"(pod=~"both-0")"), std::string::npos) << q;
  // A minute's steps at most over the 2-day horizon (172 s would skip what lived between two).
  EXPECT_NE(prometheus.queries_[0].find("[172800s:60s]"), std::string::npos)
      << prometheus.queries_[0];
}

// Every read of the workloads, the LastSeen subquery included, fails clearly on a bad reply: the
// server named, the cause quoted, no partial map.
TEST(PrometheusHistory, BadRepliesToTheWorkloadReadsAreClearErrors) {
  struct Case {
    const char* broken;  // the query that gets the bad reply
    std::string body, want;
  };
  const Case cases[] = {
      {"gpumeter:pod_workload_info:max1h", "<html>proxy error</html>", "HTTP 200"},
      {"last_over_time(gpumeter_pod_workload_info",
       R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"many"]}]}})",
       "is not a number"},
      {"timestamp(gpumeter_pod_workload_info",
       R"({"status":"error","errorType":"bad_data","error":"too many points in subquery"})",
       "too many points in subquery"},
  };
  for (const auto& c : cases) {
    testing::LoopbackServer server([&c](httplib::Server& s) {
      s.Get("/api/v1/query", [&c](const httplib::Request& req, httplib::Response& res) {
        const std::string q = req.get_param_value("query");
        if (q.find(c.broken) != std::string::npos) {
          res.set_content(c.body, "application/json");
          return;
        }
        // Two workloads of one pod, so that the subquery is asked.
        const bool raw = q.find("last_over_time(") != std::string::npos;
        res.set_content(
            std::string(R"({"status":"success","data":{"resultType":"vector","result":[)") +
                (raw ? Sample("p-0", "Pod", "p-0", "1") + "," + Sample("p-0", "Job", "j", "1")
                     : "") +
                "]}}",
            "application/json");
      });
    });
    PrometheusAccess access;
    access.url = server.url();
    auto api = PrometheusApi::Open(access);
    ASSERT_TRUE(api) << api.error().message;
    PrometheusHistory history(std::move(*api), {}, 90000, 86400);
    const auto w = history.HistoryPodWorkloads();
    ASSERT_FALSE(w) << c.broken;
    EXPECT_NE(w.error().message.find(server.url()), std::string::npos) << w.error().message;
    EXPECT_NE(w.error().message.find(c.want), std::string::npos)
        << c.broken << " → " << w.error().message;
  }
}

// A matrix series of `metric` labels `labels` (JSON object members) with values at 600, 660, …
std::string Series(const std::string& labels, const std::vector<double>& values,
                   size_t first = 600) {
  std::string points;
  for (size_t i = 0; i < values.size(); ++i)
    points += (i ? "," : "") + std::string("[") + std::to_string(first + 60 * i) + ",\"" +
              std::to_string(values[i]) + "\"]";
  return R"({"metric":{)" + labels + R"(},"values":[)" + points + "]}";
}

// Minutes from the raw counters, series by series: series of one unit and owner that differ in a
// label gpumeter does not key on (a relabelling's, another scrape target's) add up per minute; a
// series born inside the read grew by its first value in the minute before it; a unit with no
// owner's usage still has its minutes (as a store has a row for each minute it wrote).
TEST(PrometheusHistory, MinutesAddTheSeriesOfOneOwnerAndKeepUnitsWithoutOwners) {
  const std::string owner =
      R"("node":"n","unit":"U","namespace":"ml","pod":"p-0","container":"c","owner_kind":"container")";
  testing::LoopbackServer server([&](httplib::Server& s) {
    s.Get("/api/v1/query_range", [&](const httplib::Request& req, httplib::Response& res) {
      const std::string q = req.get_param_value("query");
      auto has = [&](const char* m) { return q.find(m) != std::string::npos; };
      std::vector<std::string> result;
      if (has("gpumeter_compute_seconds_total"))
        result = {Series(owner + R"(,"instance":"a:9402","endpoint":"x")", {10, 20, 30, 40}),
                  Series(owner + R"(,"instance":"a:9402","endpoint":"y")", {1, 2, 3, 4}),
                  Series(owner + R"(,"instance":"b:9402")", {5, 6, 7}, 660)};
      else if (has("gpumeter_unit_seconds_total"))
        result = {Series(R"("node":"n","unit":"U")", {0, 60, 120, 180}),
                  Series(R"("node":"n","unit":"V")", {0, 60, 120, 180})};
      std::string body;
      for (const auto& r : result) body += (body.empty() ? "" : ",") + r;
      res.set_content(
          R"({"status":"success","data":{"resultType":"matrix","result":[)" + body + "]}}",
          "application/json");
    });
    s.Get("/api/v1/query", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"status":"success","data":{"resultType":"vector","result":[]}})",
                      "application/json");
    });
  });
  PrometheusAccess access;
  access.url = server.url();
  auto api = PrometheusApi::Open(access);
  ASSERT_TRUE(api) << api.error().message;
  PrometheusHistory history(std::move(*api), {}, 780, 86400);
  const auto rows = history.HistoryMinutes(600, 780);
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 3u);
  const double want[] = {10 + 1 + 5, 10 + 1 + 1, 10 + 1 + 1};
  int i = 0;
  for (const auto& [t, units] : *rows) {
    EXPECT_EQ(t, 600 + 60 * i);
    ASSERT_EQ(units.size(), 2u) << t;
    EXPECT_EQ(units[0].unit.uuid, "U");
    EXPECT_EQ(units[1].unit.uuid, "V");
    EXPECT_DOUBLE_EQ(units[0].seconds, 60);
    EXPECT_DOUBLE_EQ(units[1].seconds, 60);
    ASSERT_EQ(units[0].owners.size(), 1u) << t;
    EXPECT_EQ(units[0].owners[0].owner.pod, "p-0");
    EXPECT_DOUBLE_EQ(units[0].owners[0].compute_seconds, want[i]) << t;
    // No gpumeter_memory_busy_seconds_total (an agent before memory traffic): unknown, not 0.
    EXPECT_DOUBLE_EQ(units[0].owners[0].memory_busy_unknown_seconds, 60) << t;
    EXPECT_EQ(units[0].owners[0].memory_busy_seconds, 0.0) << t;
    EXPECT_TRUE(units[1].owners.empty()) << t;
    ++i;
  }
}

// With the agent's memory-traffic counters, a minute's traffic is their growth, and known; a
// minute in which some went unmeasured carries that too.
TEST(PrometheusHistory, MemoryTrafficIsReadWhereTheAgentExportsIt) {
  const std::string owner =
      R"("node":"n","unit":"U","namespace":"ml","pod":"p-0","container":"c","owner_kind":"container")";
  testing::LoopbackServer server([&](httplib::Server& s) {
    s.Get("/api/v1/query_range", [&](const httplib::Request& req, httplib::Response& res) {
      const std::string q = req.get_param_value("query");
      auto has = [&](const char* m) { return q.find(m) != std::string::npos; };
      std::vector<std::string> result;
      if (has("gpumeter_compute_seconds_total"))
        result = {Series(owner, {10, 20, 30, 40})};
      else if (has("gpumeter_memory_busy_unknown_seconds_total"))
        result = {Series(owner, {0, 0, 0, 30})};
      else if (has("gpumeter_memory_busy_seconds_total"))
        result = {Series(owner, {0, 45, 90, 100})};
      else if (has("gpumeter_unit_seconds_total"))
        result = {Series(R"("node":"n","unit":"U")", {0, 60, 120, 180})};
      std::string body;
      for (const auto& r : result) body += (body.empty() ? "" : ",") + r;
      res.set_content(
          R"({"status":"success","data":{"resultType":"matrix","result":[)" + body + "]}}",
          "application/json");
    });
    s.Get("/api/v1/query", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"status":"success","data":{"resultType":"vector","result":[]}})",
                      "application/json");
    });
  });
  PrometheusAccess access;
  access.url = server.url();
  auto api = PrometheusApi::Open(access);
  ASSERT_TRUE(api) << api.error().message;
  PrometheusHistory history(std::move(*api), {}, 780, 86400);
  const auto rows = history.HistoryMinutes(600, 780);
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 3u);
  const double traffic[] = {45, 45, 10}, unknown[] = {0, 0, 30};
  int i = 0;
  for (const auto& [t, units] : *rows) {
    ASSERT_EQ(units.size(), 1u) << t;
    ASSERT_EQ(units[0].owners.size(), 1u) << t;
    EXPECT_DOUBLE_EQ(units[0].owners[0].memory_busy_seconds, traffic[i]) << t;
    EXPECT_DOUBLE_EQ(units[0].owners[0].memory_busy_unknown_seconds, unknown[i]) << t;
    ++i;
  }
}

}  // namespace
}  // namespace gpumeter::history
