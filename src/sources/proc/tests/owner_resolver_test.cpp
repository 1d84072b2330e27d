// PID -> container, end to end over a fixture /proc tree and recorded API-server pods.
#include "sources/proc/owner_resolver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "support/temp_dir.h"

namespace gpumeter::k8s {
namespace {

using ::testing::HasSubstr;
using Kind = domain::OwnerKind;

std::string Data(const std::string& name) {
  std::ifstream in(std::string(GPUMETER_TEST_SOURCE_DIR) + "/src/sources/pods/tests/data/" + name);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

constexpr const char* kVllm = "40c03570b6f4c30bc8d69923d37ee698f5cfcced92c7b7df1c47f6f7887378a9";
constexpr const char* kMonitor = "f33f47b0db740bb647cb3e7ac62d96c74966dbb99cbfaf4563bfd42d387e8b44";

class Resolver : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(pods_.ApplyList(Data("podlist.json"))); }
  void Process(uint32_t pid, uint64_t start, const std::string& cgroup_path) {
    const auto d = dir_.path() / std::to_string(pid);
    std::filesystem::create_directories(d);
    std::ofstream(d / "stat") << pid << " (python) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
                              << start << " 0 0\n";
    std::ofstream(d / "cgroup") << "0::" << cgroup_path << "\n";
  }
  testing::TempDir dir_{"gpumeter-owner"};
  PodStore pods_;
  ProcReader proc_{dir_.path()};
  OwnerResolver resolver_{proc_, pods_};
};

const std::string kChatCgroup =
    std::string(
        "/kubepods.slice/kubepods-burstable.slice/"
        "kubepods-burstable-poddde1244b_5bb5_4297_b544_85f3bc0d80bf.slice/cri-containerd-") +
    kVllm + ".scope";

TEST_F(Resolver, AContainerProcessIsNamedWithHowItWasFound) {
  Process(100, 5, kChatCgroup);
  const auto o = resolver_.Resolve(100);
  EXPECT_EQ(o.kind, Kind::kContainer);
  EXPECT_EQ(o.ns + "/" + o.pod + "/" + o.container, "llm/chat-0/vllm");
  EXPECT_EQ(o.how, "cgroup pod UID + container ID");
}

TEST_F(Resolver, HostProcessesAreSystem) {
  Process(1, 1, "/system.slice/nvidia-persistenced.service");
  const auto o = resolver_.Resolve(1);
  EXPECT_EQ(o.kind, Kind::kSystem);
  EXPECT_THAT(o.how, HasSubstr("host process"));
}

TEST_F(Resolver, StaticPodsByTheirHashAndHiddenPodsByContainerId) {
  Process(200, 5,
          std::string("/kubepods/besteffort/podb53dfa9e2dc9b890f7fadb2770857b03/crio-") + kMonitor);
  auto o = resolver_.Resolve(200);
  EXPECT_EQ(o.kind, Kind::kContainer);
  EXPECT_EQ(o.pod, "kube-gpu-monitor-gpu-node-1");
  EXPECT_EQ(o.how, "cgroup static-pod hash + container ID");
  Process(201, 5, std::string("/../cri-containerd-") + kVllm + ".scope");
  o = resolver_.Resolve(201);
  EXPECT_EQ(o.kind, Kind::kContainer);
  EXPECT_EQ(o.container, "vllm");
  EXPECT_THAT(o.how, HasSubstr("hidden by a cgroup namespace"));
}

TEST_F(Resolver, WhatCannotBePlacedIsUnattributedWithTheReason) {
  Process(300, 5, std::string("/kubepods/pod11111111-2222-4333-8444-555555555555/") + kVllm);
  EXPECT_EQ(resolver_.Resolve(300).kind, Kind::kUnattributed);
  EXPECT_THAT(resolver_.Resolve(300).how,
              HasSubstr("pod UID 11111111-2222-4333-8444-555555555555 not known"));
  // The pause container of chat-0: its ID is in no container status.
  Process(301, 5,
          "/kubepods/burstable/poddde1244b-5bb5-4297-b544-85f3bc0d80bf/" + std::string(64, 'a'));
  EXPECT_THAT(resolver_.Resolve(301).how,
              HasSubstr("container aaaaaaaaaaaa of llm/chat-0 not in the pod's status"));
  EXPECT_THAT(resolver_.Resolve(999).how, HasSubstr("exited before /proc was read"));
  Process(302, 5, "/kubepods/burstable/poddde1244b-5bb5-4297-b544-85f3bc0d80bf");
  EXPECT_THAT(resolver_.Resolve(302).how, HasSubstr("pod-level process of llm/chat-0"));
}

TEST_F(Resolver, APodDeletedWhileItsProcessRunsStillOwnsIt) {
  Process(100, 5, kChatCgroup);
  ASSERT_EQ(resolver_.Resolve(100).kind, Kind::kContainer);
  ASSERT_TRUE(pods_.ApplyWatchLine(
      R"({"type":"DELETED","object":{"metadata":{"name":"chat-0","namespace":"llm","uid":"dde1244b-5bb5-4297-b544-85f3bc0d80bf"}}})"));
  const auto o = resolver_.Resolve(100);
  EXPECT_EQ(o.kind, Kind::kContainer);
  EXPECT_EQ(o.container, "vllm");
}

TEST_F(Resolver, AReusedPidIsResolvedAfresh) {
  Process(100, 5, kChatCgroup);
  ASSERT_EQ(resolver_.Resolve(100).container, "vllm");
  Process(100, 9000, "/user.slice/user-1000.slice/session-3.scope");  // same PID, a new process
  EXPECT_EQ(resolver_.Resolve(100).kind, Kind::kSystem);
  resolver_.Retain({});
  EXPECT_EQ(proc_.cached(), 0u);
}

}  // namespace
}  // namespace gpumeter::k8s
