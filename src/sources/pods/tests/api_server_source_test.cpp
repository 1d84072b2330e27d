// The API-server pod source against a fake API server (cpp-httplib, plain HTTP on loopback) that
// replays recorded responses: a PodList, watch streams with ADDED, BOOKMARK, ERROR 410 and a
// malformed event; and an outage.
#include "sources/pods/api_server_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/temp_dir.h"
#include "support/trickle_server.h"

namespace gpumeter::kube_api {
namespace {

using ::testing::HasSubstr;

std::string Pod(const std::string& name, const std::string& uid) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ns","uid":")" + uid +
         R"("},"spec":{"nodeName":"node-a","containers":[{"name":"c"}]},"status":{"phase":"Running"}})";
}
std::string List(const std::string& rv, const std::vector<std::string>& pods) {
  std::string items;
  for (const auto& p : pods) items += (items.empty() ? "" : ",") + p;
  return R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":")" + rv +
         R"("},"items":[)" + items + "]}";
}
std::string Event(const std::string& type, const std::string& object) {
  return R"({"type":")" + type + R"(","object":)" + object + "}\n";
}
const std::string kBookmark =
    Event("BOOKMARK", R"({"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"20"}})");
const std::string kGone = Event(
    "ERROR",
    R"j({"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 20 (30)","reason":"Expired","code":410})j");

// Serves scripted list bodies and watch streams; records every request.
class FakeApiServer {
 public:
  struct Watch {
    std::string lines;
    bool hold = true;  // keep the stream open after the lines (as a quiet watch does)
    std::chrono::milliseconds delay{0};  // before the lines
    int status = 200;                    // else an error reply with a Status body
  };
  FakeApiServer() {
    server_.Get("/api/v1/pods", [this](const httplib::Request& req, httplib::Response& res) {
      std::unique_lock lock(mu_);
      requests_.push_back(req.path + "?" + Query(req) +
                          " auth=" + req.get_header_value("Authorization"));
      if (req.get_param_value("watch") != "true") {
        const std::string body = lists_.size() > 1 ? Pop(lists_) : lists_.front();
        if (body.starts_with("{\"kind\":\"Status\""))
          res.status = 403;  // a Status body is an RBAC denial
        res.set_content(body, "application/json");
        return;
      }
      Watch w = watches_.empty() ? Watch{"", true, {}, 200} : Pop(watches_);
      if (w.status != 200) {
        res.status = w.status;
        res.set_content(R"({"kind":"Status","status":"Failure","reason":"Forbidden","code":)" +
                            std::to_string(w.status) + "}",
                        "application/json");
        return;
      }
      res.set_chunked_content_provider(
          "application/json", [this, w](size_t, httplib::DataSink& sink) {
            std::this_thread::sleep_for(w.delay);
            if (!w.lines.empty()) sink.write(w.lines.data(), w.lines.size());
            while (w.hold && !stopping_ && sink.is_writable())
              std::this_thread::sleep_for(std::chrono::milliseconds(10));
            sink.done();
            return true;
          });
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 2000 && !server_.is_running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeApiServer() {
    stopping_ = true;
    server_.stop();
    thread_.join();
  }
  void AddList(std::string body) {
    std::lock_guard lock(mu_);
    lists_.push_back(std::move(body));
  }
  void AddWatch(Watch w) {
    std::lock_guard lock(mu_);
    watches_.push_back(std::move(w));
  }
  std::vector<std::string> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  template <typename T>
  static T Pop(std::deque<T>& q) {
    T v = std::move(q.front());
    q.pop_front();
    return v;
  }
  static std::string Query(const httplib::Request& req) {
    std::string q;
    for (const auto& [k, v] : req.params) q += (q.empty() ? "" : "&") + k + "=" + v;
    return q;
  }
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::deque<std::string> lists_;
  std::deque<Watch> watches_;
  std::vector<std::string> requests_;
};

template <typename F>
bool Eventually(F f, std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return f();
}

class ApiServer : public ::testing::Test {
 protected:
  ApiServerOptions Options(const std::string& url) {
    std::ofstream(dir_.path() / "token") << "tok-1\n";
    ApiServerOptions o;
    o.config.server = url;
    o.config.token_file = (dir_.path() / "token").string();
    o.config.source = "test";
    o.node_name = "node-a";
    o.initial_backoff = std::chrono::milliseconds(20);
    o.max_backoff = std::chrono::milliseconds(40);
    return o;
  }
  testing::TempDir dir_{"gpumeter-apiserver"};
};

TEST_F(ApiServer, ListsThenAppliesWatchEventsAndBookmarks) {
  FakeApiServer api;
  api.AddList(List("10", {Pod("a", "u-a")}));
  api.AddWatch({Event("ADDED", Pod("b", "u-b")) + kBookmark, true, {}, 200});
  ApiServerPodSource src(Options(api.url()));
  src.Start();
  ASSERT_TRUE(Eventually([&] {
    auto c = src.Current();
    return c && c->size() == 2;
  }));
  EXPECT_TRUE(Eventually([&] { return src.Current()->resource_version() == "20"; }))
      << "bookmark is the resume point";
  EXPECT_NE(src.Current()->ByName("ns", "b"), nullptr);
  EXPECT_TRUE(src.Status().up);
  const auto reqs = api.requests();
  ASSERT_GE(reqs.size(), 2u);
  EXPECT_THAT(reqs[0], HasSubstr("fieldSelector=spec.nodeName=node-a"));
  EXPECT_THAT(reqs[0], HasSubstr("auth=Bearer tok-1"));
  EXPECT_THAT(reqs[1], HasSubstr("watch=true"));
  EXPECT_THAT(reqs[1], HasSubstr("resourceVersion=10"));
  EXPECT_THAT(reqs[1], HasSubstr("allowWatchBookmarks=true"));
  EXPECT_EQ(src.lists(), 1u);
  const auto t = std::chrono::steady_clock::now();
  src.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t, std::chrono::seconds(2))
      << "Stop ends a quiet watch";
}

TEST_F(ApiServer, Gone410RelistsAndTheNewTokenIsUsed) {
  FakeApiServer api;
  api.AddList(List("10", {Pod("a", "u-a")}));
  api.AddList(List("30", {Pod("a", "u-a"), Pod("c", "u-c")}));
  api.AddWatch({kBookmark + kGone, false, std::chrono::milliseconds(300), 200});
  ApiServerPodSource src(Options(api.url()));
  std::ofstream(dir_.path() / "token") << "tok-1\n";
  src.Start();
  ASSERT_TRUE(Eventually([&] { return src.lists() >= 1; }));
  {
    // Rotated as the kubelet does it, atomically (a projected volume swaps a symlink): a
    // truncate-and-write could be read empty between the two, a failure this test did not mean.
    std::ofstream(dir_.path() / "token.new") << "tok-2\n";
  }
  std::filesystem::rename(dir_.path() / "token.new", dir_.path() / "token");
  ASSERT_TRUE(Eventually([&] {
    auto c = src.Current();
    return c && c->ByName("ns", "c") != nullptr;
  }));
  EXPECT_EQ(src.lists(), 2u);
  EXPECT_EQ(src.Current()->resource_version(), "30");
  EXPECT_THAT(api.requests().back(), HasSubstr("auth=Bearer tok-2"))
      << "the token file is re-read per connection";
  EXPECT_TRUE(src.Status().up);
  EXPECT_EQ(src.Status().failures, 0u) << "a 410 is routine, not a failure";
  src.Stop();
}

TEST_F(ApiServer, AMalformedEventKeepsTheLastGoodPodsAndRelists) {
  FakeApiServer api;
  api.AddList(List("10", {Pod("a", "u-a")}));
  api.AddList(List("40", {Pod("a", "u-a"), Pod("d", "u-d")}));
  api.AddWatch({"{\"type\":\"ADDED\",\"object\":{\"metadata\":\n", false, {}, 200});
  ApiServerPodSource src(Options(api.url()));
  src.Start();
  ASSERT_TRUE(Eventually([&] { return src.Status().failures >= 1; }));
  EXPECT_THAT(src.Status().last_error, HasSubstr("watch event"));
  ASSERT_NE(src.Current(), nullptr);
  EXPECT_NE(src.Current()->ByName("ns", "a"), nullptr) << "last good pods kept";
  ASSERT_TRUE(Eventually([&] {
    auto c = src.Current();
    return c && c->ByName("ns", "d") != nullptr;
  })) << "relisted";
  EXPECT_TRUE(Eventually([&] { return src.Status().up; }));
  src.Stop();
}

TEST_F(ApiServer, AnErrorReplyToTheWatchIsAnHttpErrorNotAnEvent) {
  FakeApiServer api;
  api.AddList(List("10", {Pod("a", "u-a")}));
  api.AddWatch({"", false, {}, 403});
  ApiServerPodSource src(Options(api.url()));
  src.Start();
  ASSERT_TRUE(Eventually([&] { return src.Status().failures >= 1; }));
  EXPECT_THAT(src.Status().last_error, HasSubstr("watch pods: HTTP 403"));
  EXPECT_NE(src.Current()->ByName("ns", "a"), nullptr) << "last good pods kept";
  src.Stop();
}

TEST_F(ApiServer, AnOutageIsReportedAndSurvived) {
  // Nothing listens on port 1 of loopback: connections are refused.
  auto o = Options("http://127.0.0.1:1");
  ApiServerPodSource src(o);
  src.Start();
  ASSERT_TRUE(Eventually([&] { return src.Status().failures >= 2; })) << "retries with backoff";
  EXPECT_FALSE(src.Status().up);
  EXPECT_THAT(src.Status().last_error, HasSubstr("list pods"));
  EXPECT_EQ(src.Current(), nullptr);
  src.Stop();
  // A 403 (RBAC) is an error that names the status.
  FakeApiServer api;
  api.AddList("{\"kind\":\"Status\",\"code\":403}");
  ApiServerPodSource denied(Options(api.url()));
  denied.Start();
  ASSERT_TRUE(Eventually([&] { return denied.Status().failures >= 1; }));
  EXPECT_THAT(denied.Status().last_error, HasSubstr("list pods: HTTP 403"));
  denied.Stop();
}

TEST_F(ApiServer, AListOverTheCapOrPastTheDeadlineAndAnEndlessEventAreRefused) {
  FakeApiServer big;
  big.AddList(R"({"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[)" +
              std::string(4096, ' ') + "]}");
  auto o = Options(big.url());
  o.list_limits.max_bytes = 1024;
  ApiServerPodSource capped(o);
  capped.Start();
  ASSERT_TRUE(Eventually([&] { return capped.Status().failures >= 1; }));
  EXPECT_THAT(capped.Status().last_error, HasSubstr("list pods: reply larger than 1024 bytes"));
  capped.Stop();

  testing::TrickleServer trickle;  // headers never complete; no read waits 100 ms
  o = Options(trickle.url());
  o.list_limits.deadline = std::chrono::milliseconds(500);
  ApiServerPodSource slow(o);
  slow.Start();
  ASSERT_TRUE(Eventually([&] { return slow.Status().failures >= 1; }));
  EXPECT_THAT(slow.Status().last_error, HasSubstr("list pods: no complete reply within 500 ms"));
  slow.Stop();

  // The same over https, trickled in the TLS handshake, which httplib runs under the mutex that
  // stop() takes: the request's socket is shut down at the deadline.
  testing::TrickleServer handshake(testing::TrickleServer::TlsHandshake());
  o = Options(handshake.url("https"));
  o.config.insecure_skip_tls_verify = true;
  o.list_limits.deadline = std::chrono::milliseconds(500);
  ApiServerPodSource shaking(o);
  shaking.Start();
  ASSERT_TRUE(Eventually([&] { return shaking.Status().failures >= 1; }));
  EXPECT_THAT(shaking.Status().last_error, HasSubstr("list pods: no complete reply within 500 ms"));
  shaking.Stop();

  FakeApiServer endless;  // a watch event whose line never ends
  endless.AddList(R"({"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[]})");
  endless.AddWatch({R"({"type":"ADDED","object":{"kind":"Pod")" + std::string(4096, ' ')});
  o = Options(endless.url());
  o.list_limits.max_bytes = 1024;
  ApiServerPodSource watcher(o);
  watcher.Start();
  ASSERT_TRUE(Eventually([&] { return watcher.Status().failures >= 1; }));
  EXPECT_THAT(watcher.Status().last_error,
              HasSubstr("watch pods: an event larger than 1024 bytes (refused)"));
  watcher.Stop();
}

TEST_F(ApiServer, AWatchTheServerDoesNotEndIsCutATimeoutAndADeadlineLater) {
  const auto watches = [](FakeApiServer& api) {
    int n = 0;
    for (const auto& r : api.requests()) n += r.find("watch=true") != std::string::npos;
    return n;
  };
  FakeApiServer quiet;  // holds every watch open, past timeoutSeconds
  quiet.AddList(List("10", {Pod("a", "u-a")}));
  auto o = Options(quiet.url());
  o.watch_timeout = std::chrono::seconds(1);
  o.list_limits.deadline = std::chrono::milliseconds(300);
  ApiServerPodSource src(o);
  src.Start();
  // A quiet watch cut at 1.3 s is watched again from where it was: no failure, no new list.
  ASSERT_TRUE(Eventually([&] { return watches(quiet) >= 2; }, std::chrono::seconds(10)));
  EXPECT_EQ(src.Status().failures, 0u);
  EXPECT_EQ(quiet.requests().size() - static_cast<std::size_t>(watches(quiet)), 1u);
  src.Stop();

  FakeApiServer partial;  // an event that never ends, its stream held open
  partial.AddList(List("10", {}));
  partial.AddWatch({R"({"type":"ADDED","object":{"kind":"Pod")", true, {}, 200});
  auto po = Options(partial.url());
  po.watch_timeout = std::chrono::seconds(1);
  po.list_limits.deadline = std::chrono::milliseconds(300);
  ApiServerPodSource cut(po);
  cut.Start();
  ASSERT_TRUE(Eventually([&] { return cut.Status().failures >= 1; }, std::chrono::seconds(10)));
  EXPECT_THAT(cut.Status().last_error,
              HasSubstr("watch pods: an event not complete within 1300 ms"));
  cut.Stop();
}

}  // namespace
}  // namespace gpumeter::kube_api
