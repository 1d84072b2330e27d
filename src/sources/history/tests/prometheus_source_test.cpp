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

}  // namespace
}  // namespace gpumeter::history
