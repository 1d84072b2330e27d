// The PodResources client and source against a fake kubelet on a unix socket in a temp dir.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "sim/fake_kubelet/fake_kubelet.h"
#include "sources/kubelet/pod_resources.h"
#include "sources/kubelet/pod_resources_source.h"
#include "support/temp_dir.h"

namespace gpumeter::kubelet {
namespace {

using ::testing::HasSubstr;

constexpr const char* kGpu = "GPU-b1028956-cfa2-0990-bf4a-5da9abb51763";

class Kubelet : public ::testing::Test {
 protected:
  void SetUp() override {
    socket_ = (dir_.path() / "kubelet.sock").string();
    fake_.SetPods({
        {"llm",
         "chat-0",
         {{"", "", "vllm", {{"nvidia.com/gpu.shared", {std::string(kGpu) + "::1"}}}, {}},
          {"", "", "sidecar", {}, {}}}},
        {"research",
         "dra-0",
         {{"",
           "",
           "trainer",
           {},
           {{"gpu-claim", "research", "gpu.nvidia.com", "node-a", "gpu-0", std::nullopt},
            {"gpu-claim", "research", "gpu.nvidia.com", "node-a", "gpu-1", "share-7"}}}}},
    });
    fake_.SetAllocatable(
        {{"nvidia.com/gpu.shared", {std::string(kGpu) + "::0", std::string(kGpu) + "::1"}}});
    ASSERT_TRUE(fake_.Start(socket_));
  }
  void TearDown() override { fake_.Stop(); }
  PodResourcesOptions Options(
      std::chrono::milliseconds deadline = std::chrono::milliseconds(2000)) const {
    PodResourcesOptions o;
    o.socket_path = socket_;
    o.deadline = deadline;
    return o;
  }
  testing::TempDir dir_{"gpumeter-kubelet"};
  std::string socket_;
  FakeKubelet fake_;
};

TEST_F(Kubelet, ListReturnsEveryContainerWithDevicesAndDraClaims) {
  PodResourcesClient client(Options());
  const auto list = client.List();
  ASSERT_TRUE(list) << list.error().message;
  ASSERT_EQ(list->size(), 3u);
  const auto& vllm = (*list)[0];
  EXPECT_EQ(vllm.ns, "llm");
  EXPECT_EQ(vllm.pod, "chat-0");
  EXPECT_EQ(vllm.container, "vllm");
  ASSERT_EQ(vllm.devices.size(), 1u);
  EXPECT_EQ(vllm.devices[0].resource_name, "nvidia.com/gpu.shared");
  EXPECT_THAT(vllm.devices[0].device_ids, ::testing::ElementsAre(std::string(kGpu) + "::1"));
  EXPECT_EQ((*list)[1].container, "sidecar") << "containers without devices are listed too";
  EXPECT_TRUE((*list)[1].devices.empty());
  const auto& trainer = (*list)[2];
  ASSERT_EQ(trainer.claim_devices.size(), 2u);
  EXPECT_EQ(trainer.claim_devices[0].claim_name, "gpu-claim");
  EXPECT_EQ(trainer.claim_devices[0].driver, "gpu.nvidia.com");
  EXPECT_EQ(trainer.claim_devices[0].pool, "node-a");
  EXPECT_EQ(trainer.claim_devices[1].device, "gpu-1");
  EXPECT_FALSE(trainer.claim_devices[0].share_id);
  EXPECT_EQ(trainer.claim_devices[1].share_id, "share-7");
}

TEST_F(Kubelet, AllocatableAndGet) {
  PodResourcesClient client(Options());
  const auto all = client.GetAllocatable();
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].device_ids.size(), 2u);
  const auto one = client.Get("llm", "chat-0");
  ASSERT_TRUE(one) << one.error().message;
  EXPECT_EQ(one->size(), 2u);
  const auto none = client.Get("llm", "nope");
  ASSERT_FALSE(none);
  EXPECT_THAT(none.error().message, HasSubstr("pod nope in namespace llm not found"));
  EXPECT_THAT(none.error().message, HasSubstr(socket_));
}

// A relative socket path works (it did not: "unix://rel/path" reads "rel" as an authority).
TEST_F(Kubelet, ARelativeSocketPathWorks) {
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir_.path().parent_path());
  PodResourcesOptions o = Options();
  o.socket_path = (dir_.path().filename() / "kubelet.sock").string();
  PodResourcesClient client(o);
  const auto list = client.List();
  std::filesystem::current_path(cwd);
  ASSERT_TRUE(list) << list.error().message;
  EXPECT_EQ(list->size(), 3u);
}

TEST_F(Kubelet, AMissingSocketIsUnavailableAndNamesThePath) {
  PodResourcesOptions o = Options();
  o.socket_path = (dir_.path() / "absent.sock").string();
  PodResourcesClient client(o);
  const auto list = client.List();
  ASSERT_FALSE(list);
  EXPECT_EQ(list.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(list.error().message, HasSubstr(o.socket_path));
  EXPECT_THAT(list.error().message, HasSubstr("pod-resources mounted"));
}

TEST_F(Kubelet, ASlowReplyPastTheDeadlineIsReportedAsSuch) {
  fake_.SetDelay(std::chrono::milliseconds(600));
  PodResourcesClient client(Options(std::chrono::milliseconds(150)));
  const auto list = client.List();
  ASSERT_FALSE(list);
  EXPECT_EQ(list.error().code, ErrorCode::kDeadlineExceeded);
  EXPECT_THAT(list.error().message, HasSubstr("no reply within 150 ms"));
}

TEST_F(Kubelet, RepliesUpToTheReceiveLimitPassAndLargerOnesAreRefused) {
  PodResourcesClient client(Options());
  fake_.SetPaddingBytes(10u << 20);  // above gRPC's 4 MiB default, below our 16 MiB
  const auto big = client.List();
  ASSERT_TRUE(big) << big.error().message;
  EXPECT_EQ(big->size(), 4u);
  fake_.SetPaddingBytes(17u << 20);
  const auto huge = client.List();
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().code, ErrorCode::kInvalidInput);
  EXPECT_THAT(huge.error().message, HasSubstr("reply too large (limit 16777216 bytes)"));
}

TEST_F(Kubelet, RateLimitIsUnavailableNotFatal) {
  fake_.SetFailure(std::pair{8, std::string("rejected by rate limit")});
  PodResourcesClient client(Options());
  const auto list = client.List();
  ASSERT_FALSE(list);
  EXPECT_EQ(list.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(list.error().message, HasSubstr("rate limited by the kubelet"));
}

TEST_F(Kubelet, AKubeletRestartIsSurvivedByTheSameClient) {
  PodResourcesClient client(Options());
  ASSERT_TRUE(client.List());
  fake_.Stop();  // the kubelet restarts: its socket disappears ...
  EXPECT_FALSE(client.List());
  ASSERT_TRUE(fake_.Start(socket_));  // ... and comes back at the same path
  bool back = false;
  for (int i = 0; i < 50 && !back; ++i) {  // the channel reconnects within its backoff (≤ 5 s)
    back = client.List().has_value();
    if (!back) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(back);
}

TEST_F(Kubelet, SourceKeepsTheLastGoodListAndBacksOff) {
  PodResourcesSource source(
      std::make_unique<PodResourcesClient>(Options()),
      BackoffOptions{std::chrono::milliseconds(1000), std::chrono::milliseconds(4000)});
  auto t = PodResourcesSource::Clock::time_point{} + std::chrono::hours(1);
  ASSERT_TRUE(source.PollIfDue(t));
  ASSERT_TRUE(source.status().up);
  const auto good = source.Current();
  ASSERT_TRUE(good);
  EXPECT_EQ(good->size(), 3u);

  fake_.SetFailure(std::pair{14, std::string("connection refused")});  // UNAVAILABLE
  ASSERT_TRUE(source.PollIfDue(t));
  EXPECT_FALSE(source.status().up);
  EXPECT_EQ(source.status().consecutive_failures, 1);
  EXPECT_THAT(source.status().last_error, HasSubstr("connection refused"));
  EXPECT_EQ(source.Current(), good) << "the last good list is kept";
  EXPECT_EQ(source.status().last_success, t);
  // Backoff: 1 s, then 2 s, then capped at 4 s; no poll before it is due.
  EXPECT_FALSE(source.PollIfDue(t + std::chrono::milliseconds(999)));
  ASSERT_TRUE(source.PollIfDue(t + std::chrono::milliseconds(1000)));
  EXPECT_EQ(source.status().next_attempt, t + std::chrono::milliseconds(3000));
  ASSERT_TRUE(source.PollIfDue(t + std::chrono::milliseconds(3000)));
  EXPECT_EQ(source.status().next_attempt, t + std::chrono::milliseconds(7000));
  ASSERT_TRUE(source.PollIfDue(t + std::chrono::milliseconds(7000)));
  EXPECT_EQ(source.status().next_attempt, t + std::chrono::milliseconds(11000)) << "capped at 4 s";

  fake_.SetFailure(std::nullopt);
  ASSERT_TRUE(source.PollIfDue(t + std::chrono::milliseconds(11000)));
  EXPECT_TRUE(source.status().up);
  EXPECT_EQ(source.status().consecutive_failures, 0);
  EXPECT_NE(source.Current(), good);
}

}  // namespace
}  // namespace gpumeter::kubelet
