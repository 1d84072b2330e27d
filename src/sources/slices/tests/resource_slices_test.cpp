// ResourceSlices as k8s-dra-driver-gpu publishes them (kubernetes-node.md §6.5), and DRA claim
// devices placed through them.
#include "sources/slices/resource_slices.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/allocation/sharing.h"

namespace gpumeter::k8s {
namespace {

using ::testing::HasSubstr;

const std::string kGpu = "GPU-b1028956-cfa2-0990-bf4a-5da9abb51763";
const std::string kMig = "MIG-2ce7a541-c516-5dbc-a76e-26cc100d9b55";

std::string Slice(int64_t generation, const std::string& devices) {
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"node-a-gpu.nvidia.com-x"},)"
         R"("spec":{"driver":"gpu.nvidia.com","nodeName":"node-a","pool":{"name":"node-a","generation":)" +
         std::to_string(generation) + R"(,"resourceSliceCount":1},"devices":[)" + devices + "]}}";
}
const std::string kGpuDevice =
    R"({"name":"gpu-0","attributes":{"type":{"string":"gpu"},"uuid":{"string":")" + kGpu +
    R"("},"productName":{"string":"NVIDIA H100 80GB HBM3"},"cudaComputeCapability":{"version":"9.0.0"}},)"
    R"("capacity":{"memory":{"value":"80Gi"}}})";
const std::string kMigDevice =
    R"({"name":"gpu-1-mig-1g10gb-19-0","attributes":{"type":{"string":"mig"},"uuid":{"string":")" +
    kMig +
    R"("},"parentUUID":{"string":"GPU-c1028956-cfa2-0990-bf4a-5da9abb51763"},"profile":{"string":"1g.10gb"}}})";
const std::string kDynamicMig =
    R"({"name":"gpu-2-mig-3g40gb-9-4","attributes":{"type":{"string":"mig"},"parentUUID":{"string":"GPU-d"},"profile":{"string":"3g.40gb"}}})";

TEST(ResourceSlices, DevicesOfTheNewestGenerationWithTheirUuids) {
  ResourceSliceStore store;
  const std::string list =
      R"({"kind":"ResourceSliceList","items":[)" +
      Slice(1, R"({"name":"gpu-0","attributes":{"uuid":{"string":"GPU-old"}}})") + "," +
      Slice(2, kGpuDevice + "," + kMigDevice + "," + kDynamicMig) + "]}";
  ASSERT_TRUE(store.ApplyList(list));
  ASSERT_EQ(store.devices().size(), 3u);
  const auto* gpu = store.Find("gpu.nvidia.com", "node-a", "gpu-0");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->uuid, kGpu) << "generation 1 is stale";
  EXPECT_EQ(gpu->type, "gpu");
  const auto* mig = store.Find("gpu.nvidia.com", "node-a", "gpu-1-mig-1g10gb-19-0");
  ASSERT_NE(mig, nullptr);
  EXPECT_EQ(mig->profile, "1g.10gb");
  EXPECT_EQ(mig->parent_uuid, "GPU-c1028956-cfa2-0990-bf4a-5da9abb51763");
  EXPECT_FALSE(store.Find("gpu.nvidia.com", "node-a", "gpu-2-mig-3g40gb-9-4")->uuid.has_value());
}

TEST(ResourceSlices, BadInputIsAnErrorThatKeepsWhatWasThere) {
  ResourceSliceStore store;
  ASSERT_TRUE(store.ApplyList(R"({"items":[)" + Slice(1, kGpuDevice) + "]}"));
  EXPECT_THAT(store.ApplyList("{").error().message, HasSubstr("not valid JSON"));
  EXPECT_THAT(store.ApplyList(R"({"items":[7]})").error().message,
              HasSubstr("items[0]: not an object"));
  EXPECT_THAT(store.ApplyList(R"({"items":[{"spec":{"pool":{"name":"p"}}}]})").error().message,
              HasSubstr("items[0].spec.driver"));
  EXPECT_THAT(
      store.ApplyList(R"({"items":[{"spec":{"driver":"d","pool":{"name":"p","generation":"x"}}}]})")
          .error()
          .message,
      HasSubstr("pool.generation"));
  EXPECT_THAT(
      store
          .ApplyList(
              R"({"items":[{"spec":{"driver":"d","pool":{"name":"p"},"devices":[{"attributes":{}}]}}]})")
          .error()
          .message,
      HasSubstr("devices[0].name"));
  EXPECT_EQ(store.devices().size(), 1u);
}

TEST(ResourceSlices, ClaimDevicesArePlacedThroughTheirSlices) {
  ResourceSliceStore store;
  ASSERT_TRUE(store.ApplyList(R"({"items":[)" +
                              Slice(1, kGpuDevice + "," + kMigDevice + "," + kDynamicMig) + "]}"));
  SharingEvidence ev;
  ev.dra_devices = store.devices();
  auto claim = [](const std::string& pod, const std::string& device) {
    return ContainerAllocation{
        "research",
        pod,
        "main",
        {},
        {{"gpu-claim", "research", "gpu.nvidia.com", "node-a", device, std::nullopt}}};
  };
  // One GPU claim shared by two pods, one MIG claim, one dynamic MIG device and one unknown device.
  const auto r = BuildAllocations(
      {claim("a", "gpu-0"), claim("b", "gpu-0"), claim("m", "gpu-1-mig-1g10gb-19-0"),
       claim("d", "gpu-2-mig-3g40gb-9-4"), claim("x", "gpu-9")},
      ev);
  ASSERT_EQ(r.units.size(), 2u);
  const auto& gpu = r.units[0].unit_uuid == kGpu ? r.units[0] : r.units[1];
  const auto& mig = r.units[0].unit_uuid == kGpu ? r.units[1] : r.units[0];
  EXPECT_EQ(gpu.mode, domain::SharingMode::kTimeSlicing);
  EXPECT_EQ(gpu.evidence, "DRA claim device shared by 2 containers");
  ASSERT_EQ(gpu.holders.size(), 2u);
  EXPECT_DOUBLE_EQ(gpu.holders[0].share, 0.5);
  EXPECT_EQ(mig.mode, domain::SharingMode::kMig);
  EXPECT_THAT(mig.evidence, HasSubstr("via a DRA claim"));
  EXPECT_DOUBLE_EQ(mig.holders.at(0).share, 1.0);
  ASSERT_EQ(r.problems.size(), 2u);
  EXPECT_THAT(r.problems[0], HasSubstr("no uuid attribute"));
  EXPECT_THAT(r.problems[1], HasSubstr("gpu.nvidia.com/node-a/gpu-9 (claim research/gpu-claim): no "
                                       "ResourceSlice of this node names it"));
  // A single holder is exclusive.
  const auto one = BuildAllocations({claim("a", "gpu-0")}, ev);
  EXPECT_EQ(one.units.at(0).mode, domain::SharingMode::kExclusive);
  EXPECT_EQ(one.units.at(0).evidence, "DRA claim device (ResourceSlice uuid)");
}

}  // namespace
}  // namespace gpumeter::k8s
