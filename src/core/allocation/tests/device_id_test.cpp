#include "core/allocation/device_id.h"

#include <gtest/gtest.h>

namespace gpumeter::k8s {
namespace {

constexpr const char* kGpu = "GPU-b1028956-cfa2-0990-bf4a-5da9abb51763";
constexpr const char* kMig = "MIG-2ce7a541-c516-5dbc-a76e-26cc100d9b55";

TEST(DeviceId, EveryFormOfTheReference) {
  struct Case {
    std::string id;
    DeviceIdKind kind;
    std::string key;
    std::optional<uint32_t> replica;
  };
  const std::vector<Case> cases = {
      {kGpu, DeviceIdKind::kGpuUuid, kGpu, std::nullopt},
      {kMig, DeviceIdKind::kMigUuid, kMig, std::nullopt},
      {std::string("MIG-") + kGpu + "/3/0", DeviceIdKind::kMigLegacy, std::string(kGpu) + "/3/0",
       std::nullopt},
      {std::string(kGpu) + "::3", DeviceIdKind::kGpuUuid, kGpu, 3},
      {std::string(kMig) + "::7", DeviceIdKind::kMigUuid, kMig, 7},
      {"0", DeviceIdKind::kIndex, "index:0", std::nullopt},
      {"1:2", DeviceIdKind::kIndex, "index:1:2", std::nullopt},
      {"nvidia0", DeviceIdKind::kGke, "gke:0", std::nullopt},
      {"nvidia0/vgpu3", DeviceIdKind::kGke, "gke:0", 3},
      {"nvidia1/gi2", DeviceIdKind::kGke, "gke:1/gi2", std::nullopt},
      {"nvidia1/gi2/vgpu0", DeviceIdKind::kGke, "gke:1/gi2", 0},
  };
  for (const auto& c : cases) {
    const auto r = ParseDeviceId(c.id);
    ASSERT_TRUE(r) << c.id << ": " << r.error().message;
    EXPECT_EQ(r->kind, c.kind) << c.id;
    EXPECT_EQ(UnitKey(*r), c.key) << c.id;
    EXPECT_EQ(r->replica, c.replica) << c.id;
  }
  const auto legacy = ParseDeviceId(std::string("MIG-") + kGpu + "/3/0");
  EXPECT_EQ(legacy->uuid, kGpu);
  EXPECT_EQ(legacy->gpu_instance, 3u);
  EXPECT_EQ(legacy->compute_instance, 0u);
}

TEST(DeviceId, MalformedIdsAreRefusedWithTheIdInTheMessage) {
  const std::vector<std::string> bad = {
      "",
      "GPU-",
      "GPU-b1028956-cfa2-0990-bf4a-5da9abb5176",    // short last group
      "GPU-b1028956-cfa2-0990-bf4a-5da9abb51763x",  // trailing garbage
      "GPU-z1028956-cfa2-0990-bf4a-5da9abb51763",   // not hex
      std::string(kGpu) + "::",                     // empty replica
      std::string(kGpu) + "::x",
      std::string(kGpu) + "::-1",
      std::string("MIG-") + kGpu + "/3",  // legacy without ci
      std::string("MIG-") + kGpu + "/a/0",
      "nvidia",
      "nvidiax",
      "nvidia0/gpu1",
      "nvidia0/vgpu",
      "1:",
      ":1",
      "abc",
      "12345678901234567890",  // out of range
  };
  for (const auto& id : bad) {
    const auto r = ParseDeviceId(id);
    ASSERT_FALSE(r) << "accepted '" << id << "'";
    EXPECT_NE(r.error().message.find("device ID '" + id + "'"), std::string::npos)
        << r.error().message;
  }
}

TEST(DeviceId, ReplicaSplitsOnTheFirstSeparator) {
  // "::" twice: the replica part "1::2" is not a number, so the ID is refused, not misread.
  EXPECT_FALSE(ParseDeviceId(std::string(kGpu) + "::1::2"));
}

TEST(ResourceNames, GpuSharedAndMig) {
  EXPECT_TRUE(IsGpuResource("nvidia.com/gpu"));
  EXPECT_TRUE(IsGpuResource("nvidia.com/gpu.shared"));
  EXPECT_TRUE(IsGpuResource("nvidia.com/mig-1g.10gb"));
  EXPECT_TRUE(IsGpuResource("nvidia.com/mig-1g.10gb.me"));
  EXPECT_TRUE(IsGpuResource("nvidia.com/mig-3g.40gb.shared"));
  EXPECT_FALSE(IsGpuResource("nvidia.com/mig-"));
  EXPECT_FALSE(IsGpuResource("cpu"));
  EXPECT_FALSE(IsGpuResource("amd.com/gpu"));
  EXPECT_TRUE(IsGpuResource("example.com/a100", {"example.com/a100"}));
  EXPECT_TRUE(IsSharedResourceName("nvidia.com/gpu.shared"));
  EXPECT_FALSE(IsSharedResourceName("nvidia.com/gpu"));
  EXPECT_EQ(MigProfileOfResource("nvidia.com/mig-1g.10gb.shared"), "1g.10gb");
  EXPECT_EQ(MigProfileOfResource("nvidia.com/mig-1g.10gb.me"), "1g.10gb.me");
  EXPECT_EQ(MigProfileOfResource("nvidia.com/gpu"), std::nullopt);
}

}  // namespace
}  // namespace gpumeter::k8s
