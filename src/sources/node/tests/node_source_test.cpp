// The agent's Node object from a fake API server (cpp-httplib on loopback): an RBAC denial is a
// reason that names what is missing, a good reply gives the facts, a reply for another node or
// with a duplicate label is refused keeping the last good facts; and from a file.
#include "sources/node/node_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <deque>
#include <fstream>
#include <thread>

#include "support/temp_dir.h"

namespace gpumeter::kube_api {
namespace {

using ::testing::HasSubstr;

std::string Node(const std::string& name, const std::string& labels) {
  return R"({"kind":"Node","apiVersion":"v1","metadata":{"name":")" + name + R"(","labels":{)" +
         labels + R"(}},"spec":{"providerID":"aws:///us-east-1a/i-0abc"}})";
}

// Replies to GET /api/v1/nodes/node-a from a script, the last reply repeated.
class FakeNodeApi {
 public:
  FakeNodeApi() {
    server_.Get("/api/v1/nodes/node-a", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lock(mu_);
      ++gets_;
      const auto [status, body] = replies_.size() > 1 ? Pop() : replies_.front();
      res.status = status;
      res.set_content(body, "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 2000 && !server_.is_running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeNodeApi() {
    server_.stop();
    thread_.join();
  }
  void Add(int status, std::string body) {
    std::lock_guard lock(mu_);
    replies_.emplace_back(status, std::move(body));
  }
  int gets() {
    std::lock_guard lock(mu_);
    return gets_;
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  std::pair<int, std::string> Pop() {
    auto r = replies_.front();
    replies_.pop_front();
    return r;
  }
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::deque<std::pair<int, std::string>> replies_;
  int gets_ = 0;
};

template <typename F>
bool Eventually(F f) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < end && !f())
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return f();
}

class NodeSourceTest : public ::testing::Test {
 protected:
  NodeSourceOptions Options(const std::string& url) {
    std::ofstream(dir_.path() / "token") << "tok\n";
    NodeSourceOptions o;
    o.config.server = url;
    o.config.token_file = (dir_.path() / "token").string();
    o.config.source = "test";
    o.node_name = "node-a";
    o.period = std::chrono::milliseconds(30);
    return o;
  }
  testing::TempDir dir_{"gpumeter-nodesource"};
};

TEST_F(NodeSourceTest, ADenialNamesTheRbacThenTheFactsArrive) {
  FakeNodeApi api;
  api.Add(403, R"({"kind":"Status","status":"Failure","reason":"Forbidden","code":403})");
  api.Add(200, Node("node-a", R"("node.kubernetes.io/instance-type":"p5.48xlarge")"));
  ApiServerNodeSource src(Options(api.url()));
  src.Start();
  ASSERT_TRUE(Eventually([&] { return src.Status().failures >= 1; }));
  EXPECT_THAT(src.Status().last_error, HasSubstr("needs `get` on nodes"));
  ASSERT_TRUE(Eventually([&] { return src.Current() != nullptr; }));
  EXPECT_EQ(src.Current()->instance_type, "p5.48xlarge");
  EXPECT_EQ(src.Current()->cloud, "aws");
  EXPECT_TRUE(src.Status().up);
  EXPECT_EQ(src.Status().name, "node");
}

TEST_F(NodeSourceTest, AnotherNodesReplyOrADuplicateLabelKeepsTheLastGoodFacts) {
  FakeNodeApi api;
  api.Add(200, Node("node-a", R"("node.kubernetes.io/instance-type":"p5.48xlarge")"));
  api.Add(200, Node("node-b", R"("node.kubernetes.io/instance-type":"g6.xlarge")"));
  api.Add(200, Node("node-a", R"("x":"1","x":"2")"));
  ApiServerNodeSource src(Options(api.url()));
  src.Start();
  ASSERT_TRUE(Eventually([&] { return api.gets() >= 4; }));
  src.Stop();
  ASSERT_NE(src.Current(), nullptr);
  EXPECT_EQ(src.Current()->instance_type, "p5.48xlarge");
  EXPECT_FALSE(src.Status().up);
  EXPECT_THAT(src.Status().last_error, HasSubstr("duplicate key 'x'"));
}

TEST_F(NodeSourceTest, FromAFileReadAgainWhenItChanges) {
  const auto path = dir_.path() / "node.json";
  NodeFileSource src(path, "node-a");
  src.Poll(std::chrono::steady_clock::now());
  EXPECT_EQ(src.Current(), nullptr);
  EXPECT_FALSE(src.Status().up);
  std::ofstream(path) << Node("node-a", R"("nvidia.com/gpu.replicas":"4")");
  src.Poll(std::chrono::steady_clock::now());
  ASSERT_NE(src.Current(), nullptr);
  EXPECT_EQ(src.Current()->gpu_labels.at("nvidia.com/gpu.replicas"), "4");
  std::ofstream(path) << "{\"kind\":\"Node\"";  // cut short: kept, and said
  src.Poll(std::chrono::steady_clock::now());
  EXPECT_EQ(src.Current()->gpu_labels.at("nvidia.com/gpu.replicas"), "4");
  EXPECT_THAT(src.Status().last_error, HasSubstr("not valid JSON"));
  std::ofstream(path) << Node("node-b", R"("nvidia.com/gpu.replicas":"8")");  // another node's
  src.Poll(std::chrono::steady_clock::now());
  EXPECT_EQ(src.Current()->gpu_labels.at("nvidia.com/gpu.replicas"), "4");
  EXPECT_THAT(src.Status().last_error, HasSubstr("the file is node 'node-b', not 'node-a'"));
}

}  // namespace
}  // namespace gpumeter::kube_api
