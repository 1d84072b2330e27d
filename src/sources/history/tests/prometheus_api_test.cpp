// Reaching a Prometheus behind auth: the stub below answers only when the request carries what the
// flags configured (bearer token, basic auth, X-Scope-OrgID), as Mimir or an auth proxy would.
// Secrets come from files, are checked at Open and never appear in errors.
#include "sources/history/prometheus_api.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/loopback_server.h"
#include "support/trickle_server.h"

namespace gpumeter::history {
namespace {

namespace fs = std::filesystem;

constexpr const char* kVector =
    R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"node":"n"},"value":[1,"7"]}]}})";
constexpr const char* kMatrix =
    R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[60,"1"],[120,"2"]]}]}})";

// Answers 401 unless Authorization is `auth` and X-Scope-OrgID is `tenant` ("" = must be absent).
class GuardedPrometheus {
 public:
  GuardedPrometheus(std::string auth, std::string tenant)
      : server_([=](httplib::Server& s) {
          auto check = [=](const httplib::Request& req, httplib::Response& res) {
            const bool ok = req.get_header_value("Authorization") == auth &&
                            req.get_header_value("X-Scope-OrgID") == tenant &&
                            req.has_header("X-Scope-OrgID") == !tenant.empty();
            if (!ok) res.status = 401;
            return ok;
          };
          s.Get("/prefix/api/v1/query", [=](const httplib::Request& req, httplib::Response& res) {
            if (check(req, res)) res.set_content(kVector, "application/json");
          });
          s.Get("/prefix/api/v1/query_range",
                [=](const httplib::Request& req, httplib::Response& res) {
                  const bool params = req.get_param_value("start") == "60" &&
                                      req.get_param_value("end") == "120" &&
                                      req.get_param_value("step") == "60";
                  if (check(req, res) && params) res.set_content(kMatrix, "application/json");
                  if (!params) res.status = 400;
                });
        }) {}
  std::string url() const { return server_.url() + "/prefix/"; }

 private:
  testing::LoopbackServer server_;
};

class PrometheusApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("gpumeter-promapi-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string File(const std::string& name, const std::string& content) {
    const auto p = dir_ / name;
    std::ofstream(p) << content;
    return p.string();
  }
  fs::path dir_;
};

TEST_F(PrometheusApiTest, BearerTokenAndTenantAreSent) {
  GuardedPrometheus p("Bearer s3cret-token", "team-a");
  PrometheusAccess a;
  a.url = p.url();
  a.token_file = File("token", "  s3cret-token\n");  // a mounted Secret ends with a newline
  a.tenant = "team-a";
  auto api = PrometheusApi::Open(a);
  ASSERT_TRUE(api) << api.error().message;
  auto v = api->Query("up", 100);
  ASSERT_TRUE(v) << v.error().message;
  ASSERT_EQ(v->size(), 1u);
  EXPECT_DOUBLE_EQ((*v)[0].value, 7);
  auto m = api->QueryRange("up", 60, 120, 60);
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_EQ(m->size(), 1u);
  EXPECT_EQ((*m)[0].points.size(), 2u);
}

TEST_F(PrometheusApiTest, BasicAuthIsSent) {
  // base64 of "fin:ops-pass", as RFC 7617 sends it.
  GuardedPrometheus p("Basic ZmluOm9wcy1wYXNz", "");
  PrometheusAccess a;
  a.url = p.url();
  a.user = "fin";
  a.password_file = File("password", "ops-pass\n");
  auto api = PrometheusApi::Open(a);
  ASSERT_TRUE(api) << api.error().message;
  auto v = api->Query("up", 100);
  ASSERT_TRUE(v) << v.error().message;
}

TEST_F(PrometheusApiTest, MissingOrWrongCredentialsAreSaidWithoutTheSecret) {
  GuardedPrometheus p("Bearer right", "");
  PrometheusAccess a;
  a.url = p.url();
  auto none = PrometheusApi::Open(a);
  ASSERT_TRUE(none);
  auto r = none->Query("up", 100);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("HTTP 401 (needs credentials"), std::string::npos)
      << r.error().message;
  a.token_file = File("token", "wrong-secret");
  auto wrong = PrometheusApi::Open(a);
  ASSERT_TRUE(wrong);
  r = wrong->Query("up", 100);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("the credentials were refused"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(r.error().message.find("wrong-secret"), std::string::npos) << r.error().message;
}

TEST_F(PrometheusApiTest, BadSecretFilesAndFlagsAreRefusedAtOpen) {
  struct Case {
    PrometheusAccess access;
    std::string want;
  };
  auto with = [&](auto set) {
    PrometheusAccess a;
    a.url = "http://127.0.0.1:9";
    set(a);
    return a;
  };
  const Case cases[] = {
      {with([&](auto& a) { a.token_file = (dir_ / "absent").string(); }),
       "--prometheus-token-file"},
      {with([&](auto& a) { a.token_file = File("empty", " \n"); }), "empty"},
      {with([&](auto& a) { a.token_file = File("two", "a\nb\n"); }), "more than one line"},
      {with([&](auto& a) { a.token_file = dir_.string(); }), "not a regular file"},
      {with([&](auto& a) {
         a.token_file = File("t", "x");
         a.user = "u";
         a.password_file = File("p", "y");
       }),
       "give one of them"},
      {with([&](auto& a) { a.user = "u"; }), "go together"},
      {with([&](auto& a) { a.tenant = "a\nb"; }), "--prometheus-tenant"},
      {with([&](auto& a) { a.url = "ftp://x"; }), "not an http(s)://host:port URL"},
      {with([&](auto& a) { a.url = "https://fin:s3cret@prom:9090/api"; }),
       "credentials in the URL are refused"},
  };
  for (const auto& c : cases) {
    auto api = PrometheusApi::Open(c.access);
    ASSERT_FALSE(api) << c.want;
    EXPECT_EQ(api.error().code, ErrorCode::kInvalidInput);
    EXPECT_NE(api.error().message.find(c.want), std::string::npos)
        << c.want << " → " << api.error().message;
    EXPECT_EQ(api.error().message.find("s3cret"), std::string::npos) << api.error().message;
  }
}

TEST_F(PrometheusApiTest, HeadersTrickledByteByByteAreCutAtTheDeadline) {
  testing::TrickleServer server;  // no read waits 100 ms: only the overall deadline ends it
  PrometheusAccess a;
  a.url = server.url();
  a.limits.deadline = std::chrono::milliseconds(1000);
  auto api = PrometheusApi::Open(a);
  ASSERT_TRUE(api) << api.error().message;
  const auto start = std::chrono::steady_clock::now();
  auto v = api->Query("up", 100);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(v);
  EXPECT_NE(v.error().message.find("no complete reply within 1 s"), std::string::npos)
      << v.error().message;
  EXPECT_LT(took, std::chrono::seconds(4));
}

// Compression costs Prometheus more CPU than a fast link saves (docs/fleet.md): asked for only
// with --prometheus-gzip. The stub says in its answer whether it was asked.
TEST_F(PrometheusApiTest, GzipIsAskedForOnlyWhenConfigured) {
  testing::LoopbackServer server([](httplib::Server& s) {
    s.Get("/api/v1/query", [](const httplib::Request& req, httplib::Response& res) {
      const bool gzip = req.get_header_value("Accept-Encoding").find("gzip") != std::string::npos;
      res.set_content(
          std::string(R"({"status":"success","data":{"resultType":"vector","result":)") +
              R"([{"metric":{},"value":[1,")" + (gzip ? "1" : "0") + R"("]}]}})",
          "application/json");
    });
  });
  for (const bool gzip : {false, true}) {
    PrometheusAccess a;
    a.url = server.url();
    a.gzip = gzip;
    auto api = PrometheusApi::Open(a);
    ASSERT_TRUE(api) << api.error().message;
    auto v = api->Query("up", 100);
    ASSERT_TRUE(v) << v.error().message;
    ASSERT_EQ(v->size(), 1u);
    EXPECT_EQ(v->front().value, gzip ? 1 : 0) << "gzip " << gzip;
  }
}

TEST(PromQuote, EscapesQuotesAndBackslashes) { EXPECT_EQ(PromQuote(R"(a"b\c)"), R"("a\"b\\c")"); }

}  // namespace
}  // namespace gpumeter::history
