// Recorded API-server JSON: a PodList, watch events with a BOOKMARK, an ERROR 410 and a malformed
// event; the last good pod set is kept on bad input.
#include "sources/pods/pods.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace gpumeter::k8s {
namespace {

using ::testing::HasSubstr;

std::string Data(const std::string& name) {
  std::ifstream in(std::string(GPUMETER_TEST_SOURCE_DIR) + "/src/sources/pods/tests/data/" + name);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

TEST(PodStore, ListKeepsWhatAttributionNeeds) {
  PodStore store;
  ASSERT_TRUE(store.ApplyList(Data("podlist.json")));
  EXPECT_EQ(store.size(), 3u);
  EXPECT_EQ(store.resource_version(), "81234");
  const auto* chat = store.ByName("llm", "chat-0");
  ASSERT_TRUE(chat);
  EXPECT_EQ(chat->uid, "dde1244b-5bb5-4297-b544-85f3bc0d80bf");
  EXPECT_EQ(chat->labels.at("team"), "llm");
  EXPECT_EQ(chat->qos, "Burstable");
  EXPECT_EQ(chat->node_name, "gpu-node-1");
  ASSERT_EQ(chat->containers.size(), 3u);
  EXPECT_EQ(chat->containers[0].name, "proxy");
  EXPECT_TRUE(chat->containers[0].init);
  const auto& vllm = chat->containers[1];
  EXPECT_EQ(vllm.name, "vllm");
  EXPECT_EQ(vllm.runtime, "containerd");
  EXPECT_EQ(vllm.container_id, "40c03570b6f4c30bc8d69923d37ee698f5cfcced92c7b7df1c47f6f7887378a9");
  EXPECT_EQ(vllm.requests.at("nvidia.com/gpu"), "1") << "limits count where there is no request";
  EXPECT_EQ(vllm.requests.at("cpu"), "4");
  EXPECT_FALSE(chat->containers[2].container_id) << "not created yet: unknown, not empty";
  EXPECT_FALSE(chat->Terminated());
  EXPECT_TRUE(store.ByName("batch", "batch-done")->Terminated());
}

TEST(PodStore, StaticPodsAreFoundByTheirCgroupHash) {
  PodStore store;
  ASSERT_TRUE(store.ApplyList(Data("podlist.json")));
  const auto* mirror = store.ByUid("b53dfa9e2dc9b890f7fadb2770857b03");
  ASSERT_TRUE(mirror);
  EXPECT_EQ(mirror->name, "kube-gpu-monitor-gpu-node-1");
  EXPECT_EQ(mirror->containers[0].runtime, "cri-o");
  EXPECT_EQ(store.ByUid("9f1c2b4e-0000-4000-8000-000000000001"), mirror)
      << "and by the mirror's own UID";
}

TEST(PodStore, WatchEventsBookmarkMalformedAnd410) {
  PodStore store;
  ASSERT_TRUE(store.ApplyList(Data("podlist.json")));
  const auto lines = Lines(Data("watch.jsonl"));
  ASSERT_EQ(lines.size(), 6u);

  auto e = store.ApplyWatchLine(lines[0]);
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(*e, PodStore::Event::kAdded);
  EXPECT_EQ(store.size(), 4u);
  EXPECT_FALSE(store.ByName("research", "train-0")->containers[0].container_id);

  ASSERT_EQ(store.ApplyWatchLine(lines[1]), PodStore::Event::kModified);
  EXPECT_EQ(store.ByName("research", "train-0")->containers[0].container_id,
            "f52a212505a606972cf8614c3cb856539e71b77ecae33436c5ac442232fbacf8");
  EXPECT_EQ(store.resource_version(), "81310");

  ASSERT_EQ(store.ApplyWatchLine(lines[2]), PodStore::Event::kBookmark);
  EXPECT_EQ(store.resource_version(), "81400") << "a bookmark moves the resume point";
  EXPECT_EQ(store.size(), 4u);

  const auto bad = store.ApplyWatchLine(lines[3]);  // no uid
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message,
              HasSubstr("watch MODIFIED research/broken: metadata.uid: missing"));
  EXPECT_EQ(store.size(), 4u) << "bad input changes nothing";
  EXPECT_EQ(store.resource_version(), "81400");

  ASSERT_EQ(store.ApplyWatchLine(lines[4]), PodStore::Event::kDeleted);
  EXPECT_FALSE(store.ByName("llm", "chat-0"));
  EXPECT_FALSE(store.ByUid("dde1244b-5bb5-4297-b544-85f3bc0d80bf"));
  EXPECT_EQ(store.size(), 3u);

  ASSERT_EQ(store.ApplyWatchLine(lines[5]), PodStore::Event::kRelist) << "410: list again";
  EXPECT_EQ(store.size(), 3u) << "the pods stay until the relist replaces them";
}

TEST(PodStore, MalformedInputIsRefusedAndTheLastGoodSetKept) {
  PodStore store;
  ASSERT_TRUE(store.ApplyList(Data("podlist.json")));
  struct Bad {
    std::string text, expect;
  };
  for (
      const auto& b : std::vector<Bad>{
          {"{not json", "PodList: not valid JSON: parse error at line 1, column 3"},
          {R"({"items":[{"metadata":{"name":"a","namespace":"n","uid":"u","generation":1)" +
               std::string(400, '9') + "}}]}",
           "PodList: not valid JSON: number overflow parsing '1999"},
          {R"({"kind":"PodList"})", "PodList: no items array"},
          // Two values for one field: malformed, not the last one silently.
          {R"({"items":[{"metadata":{"name":"a","namespace":"n","uid":"u","uid":"v"}}]})",
           "PodList: duplicate key 'uid'"},
          {R"({"items":[{"metadata":{"name":"a","namespace":"n","uid":"u","labels":{"team":"a","team":"b"}}}]})",
           "PodList: duplicate key 'team'"},
          {R"({"items":[{"metadata":{"name":"a","namespace":"n","uid":"u"}},{"metadata":{"name":"b","namespace":"n"}}]})",
           "PodList items[1] (n/b): metadata.uid: missing"},
          {R"({"items":[{"metadata":{"name":"a","namespace":"n","uid":"u","labels":{"team":7}}}]})",
           "metadata.labels.team: not a string"},
          {R"({"items":[{"metadata":{"name":"a","namespace":"n","uid":"u"},"spec":{"containers":{}}}]})",
           "spec.containers: not an array"},
          {R"({"items":[{"metadata":{"name":"a","namespace":"n","uid":"u"},"spec":{"containers":[{"image":"x"}]}}]})",
           "spec.containers[0].name: missing"},
      }) {
    const auto r = store.ApplyList(b.text);
    ASSERT_FALSE(r) << b.text;
    EXPECT_THAT(r.error().message, HasSubstr(b.expect));
    EXPECT_EQ(store.size(), 3u) << "kept after: " << b.text;
    EXPECT_EQ(store.resource_version(), "81234");
  }
  for (const auto& line :
       {std::string("garbage"), std::string(R"({"type":"ADDED"})"),
        std::string(R"({"type":"RENAMED","object":{}})"),
        std::string(R"({"type":"ERROR","object":{"code":500,"message":"etcd down"}})"),
        std::string(R"({"type":"ERROR","object":{"code":"410","message":7}})"),
        std::string(R"({"type":"DELETED","type":"ADDED","object":{}})"),
        std::string(
            R"({"type":"ADDED","object":{"metadata":{"name":1,"namespace":[],"uid":"u"}}})")}) {
    EXPECT_FALSE(store.ApplyWatchLine(line)) << line;
    EXPECT_EQ(store.size(), 3u);
  }
}

TEST(PodStore, ARecreatedPodNameFollowsTheNewUid) {
  PodStore store;
  ASSERT_TRUE(store.ApplyList(Data("podlist.json")));
  ASSERT_TRUE(store.ApplyWatchLine(
      R"({"type":"ADDED","object":{"metadata":{"name":"chat-0","namespace":"llm","uid":"11111111-2222-4333-8444-555555555555"},"status":{"phase":"Pending"}}})"));
  EXPECT_EQ(store.ByName("llm", "chat-0")->uid, "11111111-2222-4333-8444-555555555555");
  // The old pod's deletion arrives later; the name keeps pointing at the new one.
  ASSERT_TRUE(store.ApplyWatchLine(
      R"({"type":"DELETED","object":{"metadata":{"name":"chat-0","namespace":"llm","uid":"dde1244b-5bb5-4297-b544-85f3bc0d80bf"}}})"));
  ASSERT_TRUE(store.ByName("llm", "chat-0"));
  EXPECT_EQ(store.ByName("llm", "chat-0")->uid, "11111111-2222-4333-8444-555555555555");
}

}  // namespace
}  // namespace gpumeter::k8s
