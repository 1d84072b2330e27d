// The one HTTP client against real servers on loopback: a well-behaved one (httplib), one that
// trickles bytes, and the failure modes every caller relies on it for.
#include "common/http/client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <thread>

#include "support/loopback_server.h"
#include "support/trickle_server.h"

namespace gpumeter::http {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Clock = std::chrono::steady_clock;

Limits L(std::chrono::milliseconds deadline, size_t max_bytes = 16u << 20,
         std::chrono::milliseconds read = {}) {
  return {.connect_timeout = std::chrono::milliseconds(500),
          .read_timeout = read,
          .deadline = deadline,
          .max_bytes = max_bytes};
}

Endpoint E(const std::function<void(Endpoint&)>& set) {
  Endpoint e;
  set(e);
  return e;
}

Client Open(const std::string& url, Limits limits = {}, Endpoint e = {}) {
  e.what = e.what.empty() ? "--source" : e.what;
  e.url = url;
  auto c = Client::Open(e, limits);
  EXPECT_TRUE(c.has_value()) << (c ? "" : c.error().message);
  return std::move(*c);
}

TEST(HttpClient, RefusesUrlsItCannotUseAndNamesThem) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"ftp://x", "not an http(s)://host:port URL"},
      {"http://", "not an http(s)://host:port URL"},
      {"localhost:9090", "not an http(s)://host:port URL"},
      {"http://u:secret@h:1", "credentials in the URL are refused"},
      {"http://h:1/a b", "spaces, a query or a fragment"},
      {"http://h:1/x?q=1", "spaces, a query or a fragment"},
  };
  for (const auto& [url, why] : cases) {
    auto c = Client::Open(E([&](Endpoint& e) {
                            e.what = "--dcgm-metrics";
                            e.url = url;
                          }),
                          {});
    ASSERT_FALSE(c) << url;
    EXPECT_EQ(c.error().code, ErrorCode::kInvalidInput);
    EXPECT_THAT(c.error().message, HasSubstr("--dcgm-metrics")) << url;
    EXPECT_THAT(c.error().message, HasSubstr(why)) << url;
    EXPECT_THAT(c.error().message, Not(HasSubstr("secret")));
  }
  auto header = Client::Open(E([](Endpoint& e) {
                               e.what = "p";
                               e.url = "http://h:1";
                               e.headers = {{"X-T", "a\nb"}};
                             }),
                             {});
  ASSERT_FALSE(header);
  EXPECT_THAT(header.error().message, HasSubstr("header X-T is not printable"));
}

TEST(HttpClient, SendsAuthHeadersAndParamsUnderTheUrlsPath) {
  testing::LoopbackServer server([](httplib::Server& s) {
    s.Get("/prefix/api/v1/query", [](const httplib::Request& q, httplib::Response& r) {
      r.set_content(q.get_header_value("Authorization") + "|" +
                        q.get_header_value("X-Scope-OrgID") + "|" + q.get_param_value("query") +
                        "|" + q.get_header_value("Accept-Encoding"),
                    "text/plain");
    });
  });
  auto c = Open(server.url() + "/prefix/", {}, E([](Endpoint& e) {
                  e.bearer_token = "tok";
                  e.headers = {{"X-Scope-OrgID", "team-a"}};
                }));
  auto r = c.GetOk("/api/v1/query", {{"query", "sum(x{a=\"b c\"})"}});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, "Bearer tok|team-a|sum(x{a=\"b c\"})|identity");
  auto basic = Open(server.url() + "/prefix", {}, E([](Endpoint& e) {
                      e.user = "u";
                      e.password = "p";
                    }));
  auto b = basic.GetOk("/api/v1/query", {{"query", "q"}});
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(b->substr(0, b->find('|')), "Basic dTpw");  // base64("u:p")
}

TEST(HttpClient, AStatusIsAReplyAndGetOkQuotesTheBody) {
  testing::LoopbackServer server([](httplib::Server& s) {
    s.Get("/metrics", [](const httplib::Request&, httplib::Response& r) {
      r.status = 503;
      r.set_content("down\n\x1b[31mred", "text/plain");
    });
  });
  auto c = Open(server.url(), {}, E([](Endpoint& e) { e.default_path = "/metrics"; }));
  auto reply = c.Get("");
  ASSERT_TRUE(reply) << reply.error().message;
  EXPECT_EQ(reply->status, 503);
  auto ok = c.GetOk("");
  ASSERT_FALSE(ok);
  EXPECT_THAT(ok.error().message,
              HasSubstr("--source " + server.url() + "/metrics: HTTP 503: down"));
  EXPECT_THAT(ok.error().message, HasSubstr("\\x0a\\x1b[31mred"));  // escaped, not raw
}

TEST(HttpClient, FollowsNoRedirect) {
  std::atomic<int> followed{0};
  testing::LoopbackServer server([&](httplib::Server& s) {
    s.Get("/a", [](const httplib::Request&, httplib::Response& r) { r.set_redirect("/b"); });
    s.Get("/b", [&](const httplib::Request&, httplib::Response& r) {
      ++followed;
      r.set_content("b", "text/plain");
    });
  });
  auto r = Open(server.url()).Get("/a");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, 302);
  EXPECT_EQ(followed.load(), 0);
}

TEST(HttpClient, RefusesABodyOverTheCapAsItArrives) {
  testing::LoopbackServer server([](httplib::Server& s) {
    s.Get("/big", [](const httplib::Request&, httplib::Response& r) {
      r.set_content(std::string(4096, 'x'), "application/json");
    });
  });
  auto c = Open(server.url(), L(std::chrono::seconds(10), 1024),
                E([](Endpoint& e) { e.cap_hint = "--max-mb"; }));
  auto r = c.Get("/big");
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message,
              HasSubstr("/big: reply larger than 1024 bytes (refused; raise it with --max-mb)"));
}

// Gzip only when asked for, and the cap counts what it unpacks to: 4 MiB of zeros compress to a
// few KiB, so a cap on the wire's bytes would let it through.
TEST(HttpClient, GzipOnlyWhenAskedAndCappedAfterDecompression) {
  testing::LoopbackServer server([](httplib::Server& s) {
    s.Get("/bomb", [](const httplib::Request&, httplib::Response& r) {
      r.set_content(std::string(4u << 20, '0'), "text/plain");  // httplib gzips if asked
    });
    s.Get("/small", [](const httplib::Request& q, httplib::Response& r) {
      r.set_header("X-Asked", q.get_header_value("Accept-Encoding"));
      r.set_content(std::string(200000, 'a'), "text/plain");
    });
    s.Get("/forced", [](const httplib::Request&, httplib::Response& r) {
      r.set_header("Content-Encoding", "gzip");
      r.set_content(std::string("\x1f\x8b\x08\x00", 4), "text/plain");
    });
  });
  auto gz = Open(server.url(), L(std::chrono::seconds(10), 1u << 20),
                 E([](Endpoint& e) { e.accept_gzip = true; }));
  auto bomb = gz.Get("/bomb");
  ASSERT_FALSE(bomb);
  EXPECT_THAT(bomb.error().message, HasSubstr("reply larger than 1048576 bytes"));
  auto small = gz.Get("/small");
  ASSERT_TRUE(small) << small.error().message;
  EXPECT_EQ(small->body, std::string(200000, 'a'));  // unpacked
  auto plain = Open(server.url(), L(std::chrono::seconds(10), 1u << 20));
  auto forced = plain.Get("/forced");
  ASSERT_FALSE(forced);
  EXPECT_THAT(forced.error().message,
              HasSubstr("compressed (Content-Encoding: gzip) though it was not asked for"));
  auto identity = plain.Get("/small");
  ASSERT_TRUE(identity) << identity.error().message;
  EXPECT_EQ(identity->body.size(), 200000u);
}

// A server that sends a header byte every 100 ms never trips a per-read timeout; the overall
// deadline ends the request, over HTTP and in a TLS handshake.
TEST(HttpClient, TheDeadlineEndsATrickledReplyAndATrickledHandshake) {
  for (const bool tls : {false, true}) {
    testing::TrickleServer server(tls ? testing::TrickleServer::TlsHandshake()
                                      : testing::TrickleServer::kHttpHeaders);
    auto c = Open(server.url(tls ? "https" : "http"), L(std::chrono::milliseconds(700)));
    const auto t0 = Clock::now();
    auto r = c.Get("/metrics");
    const auto took = Clock::now() - t0;
    ASSERT_FALSE(r) << tls;
    EXPECT_THAT(r.error().message, HasSubstr("no complete reply within 700 ms")) << tls;
    EXPECT_LT(took, std::chrono::seconds(5)) << tls;
  }
}

TEST(HttpClient, UnreachableSaysWhatWasTried) {
  auto r = Open("http://127.0.0.1:1", L(std::chrono::seconds(2))).Get("/api/v1/units");
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message,
              HasSubstr("--source http://127.0.0.1:1/api/v1/units: unreachable (cannot connect"));
}

TEST(HttpClient, StreamsUntilTheCallerStopsAndCancelEndsItFromAnotherThread) {
  testing::TrickleServer slow("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n");
  auto c = Open(slow.url(), L(std::chrono::seconds(30), 1024, std::chrono::seconds(30)));
  int status = 0;
  std::string got;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    c.Cancel();
  });
  const auto t0 = Clock::now();
  auto end = c.Stream(
      "/watch", [&](int s) { return (status = s) == 200; },
      [&](const char* d, size_t n) {
        got.append(d, n);
        return true;
      });
  canceller.join();
  ASSERT_TRUE(end) << end.error().message;
  EXPECT_TRUE(end->stopped);
  EXPECT_FALSE(end->cut_at_deadline);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(got.substr(0, 1), "a");
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
  // Cancelled for good: later requests fail at once.
  auto again = c.Get("/x");
  ASSERT_FALSE(again);
  EXPECT_THAT(again.error().message, HasSubstr("cancelled"));
}

// Requests from several threads at once (rightsizing reads Prometheus so): each is its own
// connection, and Cancel ends all of them, not only the one that began last.
TEST(HttpClient, CancelEndsEveryRequestInFlightFromSeveralThreads) {
  std::atomic<bool> release{false};
  std::atomic<int> arrived{0};
  testing::LoopbackServer held([&](httplib::Server& s) {
    s.Get("/held", [&](const httplib::Request&, httplib::Response& res) {
      ++arrived;
      for (int i = 0; i < 300 && !release; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      res.set_content("late", "text/plain");
    });
  });
  auto c = Open(held.url(), L(std::chrono::seconds(30)));
  const auto t0 = Clock::now();
  std::vector<Expected<Reply>> got(3, tl::unexpected(Error{ErrorCode::kInternal, "not run"}));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i) threads.emplace_back([&, i] { got[i] = c.Get("/held"); });
  while (arrived < 3 && Clock::now() - t0 < std::chrono::seconds(5))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(arrived, 3);
  c.Cancel();
  for (auto& t : threads) t.join();
  const auto took = Clock::now() - t0;
  release = true;
  for (const auto& r : got) {
    ASSERT_FALSE(r);
    EXPECT_THAT(r.error().message, HasSubstr("cancelled"));
  }
  EXPECT_LT(took, std::chrono::seconds(5));
}

TEST(HttpClient, AStreamCutAtTheDeadlineSaysWhetherItsHeadersCame) {
  testing::TrickleServer headers_only;  // a header line that never ends
  auto c = Open(headers_only.url(), L(std::chrono::milliseconds(500)));
  auto end = c.Stream(
      "/watch", [](int) { return true; }, [](const char*, size_t) { return true; });
  ASSERT_TRUE(end) << end.error().message;
  EXPECT_TRUE(end->cut_at_deadline);
  EXPECT_EQ(end->status, 0);
}

TEST(HttpClient, FormatsDeadlines) {
  EXPECT_EQ(FormatDuration(std::chrono::milliseconds(3000)), "3 s");
  EXPECT_EQ(FormatDuration(std::chrono::milliseconds(800)), "800 ms");
}

}  // namespace
}  // namespace gpumeter::http
