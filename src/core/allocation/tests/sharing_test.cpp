#include "core/allocation/sharing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/yaml_bombs.h"

namespace gpumeter::k8s {
namespace {

using ::testing::HasSubstr;

const std::string kGpu = "GPU-b1028956-cfa2-0990-bf4a-5da9abb51763";
const std::string kGpu2 = "GPU-c1028956-cfa2-0990-bf4a-5da9abb51763";
const std::string kMig = "MIG-2ce7a541-c516-5dbc-a76e-26cc100d9b55";

ContainerAllocation C(const std::string& pod, const std::string& resource,
                      std::vector<std::string> ids) {
  return {"ns", pod, "c", {{resource, std::move(ids)}}, {}};
}

const UnitAllocation& Unit(const AllocationResult& r, const std::string& uuid) {
  for (const auto& u : r.units)
    if (u.unit_uuid == uuid) return u;
  ADD_FAILURE() << "no unit " << uuid;
  static const UnitAllocation kNone;
  return kNone;
}

TEST(Sharing, ExclusiveGpuAndMigInstanceHoldTheWholeUnit) {
  const auto r = BuildAllocations(
      {C("a", "nvidia.com/gpu", {kGpu}), C("b", "nvidia.com/mig-1g.10gb", {kMig})}, {});
  ASSERT_EQ(r.units.size(), 2u);
  EXPECT_EQ(Unit(r, kGpu).mode, domain::SharingMode::kExclusive);
  EXPECT_EQ(Unit(r, kGpu).evidence, "one holder, no replica IDs");
  EXPECT_DOUBLE_EQ(Unit(r, kGpu).holders.at(0).share, 1.0);
  EXPECT_EQ(Unit(r, kMig).mode, domain::SharingMode::kMig);
  EXPECT_DOUBLE_EQ(Unit(r, kMig).holders.at(0).share, 1.0);
  EXPECT_TRUE(r.problems.empty());
}

TEST(Sharing, ReplicaIdsAloneGiveALowerBoundAndSaySo) {
  const auto r = BuildAllocations(
      {C("a", "nvidia.com/gpu", {kGpu + "::0"}), C("b", "nvidia.com/gpu", {kGpu + "::3"}),
       C("c", "nvidia.com/gpu", {kGpu + "::1", kGpu + "::2"})},
      {});
  const auto& u = Unit(r, kGpu);
  EXPECT_EQ(u.mode, domain::SharingMode::kTimeSlicing);
  EXPECT_EQ(u.replicas, 4u);
  EXPECT_THAT(u.evidence, HasSubstr("replica IDs (::N)"));
  EXPECT_THAT(u.evidence, HasSubstr("replicas at least 4"));
  ASSERT_EQ(u.holders.size(), 3u);
  EXPECT_DOUBLE_EQ(u.holders[2].share, 0.5) << "two replica IDs of one GPU are two replicas";
  EXPECT_EQ(u.holders[2].replicas_held, 2u);
}

TEST(Sharing, PluginConfigBeatsLabelsAndDecidesMps) {
  const auto cfg = ParseDevicePluginConfig(R"(
version: v1
sharing:
  mps:
    resources:
      - name: nvidia.com/gpu
        replicas: 10
)");
  ASSERT_TRUE(cfg) << cfg.error().message;
  SharingEvidence ev;
  ev.plugin_config = *cfg;
  ev.node_labels = {{"nvidia.com/gpu.sharing-strategy", "time-slicing"},
                    {"nvidia.com/gpu.replicas", "4"}};
  const auto r = BuildAllocations({C("a", "nvidia.com/gpu.shared", {kGpu + "::0"}),
                                   C("b", "nvidia.com/gpu.shared", {kGpu + "::7"})},
                                  ev);
  const auto& u = Unit(r, kGpu);
  EXPECT_EQ(u.mode, domain::SharingMode::kMps);
  EXPECT_EQ(u.replicas, 10u);
  EXPECT_EQ(u.evidence, "device plugin config (sharing.mps)");
  EXPECT_DOUBLE_EQ(u.holders[0].share, 0.1);
}

TEST(Sharing, NodeLabelsWhenThereIsNoConfigFile) {
  SharingEvidence ev;
  ev.node_labels = {{"nvidia.com/gpu.sharing-strategy", "time-slicing"},
                    {"nvidia.com/gpu.replicas", "4"}};
  const auto r = BuildAllocations({C("a", "nvidia.com/gpu", {kGpu + "::2"})}, ev);
  const auto& u = Unit(r, kGpu);
  EXPECT_EQ(u.mode, domain::SharingMode::kTimeSlicing);
  EXPECT_EQ(u.replicas, 4u);
  EXPECT_EQ(u.evidence,
            "node label nvidia.com/gpu.sharing-strategy=time-slicing; replicas from node label "
            "nvidia.com/gpu.replicas");
  EXPECT_DOUBLE_EQ(u.holders[0].share, 0.25);
}

TEST(Sharing, SeveralHoldersOfOneUuidWithoutReplicasIsTimeSlicing) {
  const auto r =
      BuildAllocations({C("a", "example.com/gpu", {kGpu}), C("b", "example.com/gpu", {kGpu})},
                       SharingEvidence{{}, {}, {}, {}, {}, {"example.com/gpu"}, {}});
  const auto& u = Unit(r, kGpu);
  EXPECT_EQ(u.mode, domain::SharingMode::kTimeSlicing);
  EXPECT_EQ(u.evidence, "several containers hold one GPU");
  EXPECT_EQ(u.replicas, 1u) << "replicas unknown: each holder is charged the whole GPU's request";
}

TEST(Sharing, ConfiguredPerGpuWinsOverEverythingButMig) {
  SharingEvidence ev;
  ev.configured[kGpu2] = {domain::SharingMode::kMps, 2};
  ev.node_labels = {{"nvidia.com/gpu.sharing-strategy", "time-slicing"}};
  const auto r = BuildAllocations({C("a", "nvidia.com/gpu", {kGpu2 + "::1"})}, ev);
  EXPECT_EQ(Unit(r, kGpu2).mode, domain::SharingMode::kMps);
  EXPECT_EQ(Unit(r, kGpu2).replicas, 2u);
  EXPECT_EQ(Unit(r, kGpu2).evidence, "configured for this GPU");
}

TEST(Sharing, LegacyMigIdsNeedNvmlAndBadIdsAreReportedNotDropped) {
  SharingEvidence ev;
  ev.legacy_mig["GPU-b1028956-cfa2-0990-bf4a-5da9abb51763/3/0"] = kMig;
  const auto r = BuildAllocations(
      {C("a", "nvidia.com/gpu", {"MIG-" + kGpu + "/3/0"}),
       C("b", "nvidia.com/gpu", {"MIG-" + kGpu + "/4/0"}), C("c", "nvidia.com/gpu", {"GPU-nope"}),
       C("d", "nvidia.com/gpu", {"0"}), C("e", "cpu", {"whatever"})},
      ev);
  ASSERT_EQ(r.units.size(), 1u);
  EXPECT_EQ(r.units[0].unit_uuid, kMig);
  ASSERT_EQ(r.problems.size(), 3u);
  EXPECT_THAT(r.problems[0],
              HasSubstr("ns/b/c: device ID 'MIG-" + kGpu + "/4/0': no MIG instance"));
  EXPECT_THAT(r.problems[1], HasSubstr("ns/c/c: device ID 'GPU-nope'"));
  EXPECT_THAT(r.problems[2], HasSubstr("index-based IDs"));
}

TEST(DevicePluginConfig, RefusesWhatThePluginRefuses) {
  struct Bad {
    std::string yaml, expect;
  };
  for (const auto& b : std::vector<Bad>{
           {"version: v1\n", "no sharing section"},
           {"sharing: {timeSlicing: {resources: []}}\n",
            "sharing.timeSlicing.resources: no resources specified"},
           {"sharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 1}]}}\n",
            "must be >= 2"},
           {"sharing: {timeSlicing: {resources: [{name: nvidia.com/gpu}]}}\n", "replicas: missing"},
           {"sharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: many}]}}\n",
            "replicas: not a number"},
           {"sharing: {timeSlicing: {resources: [{replicas: 2}]}}\n", ".name: missing"},
           {"sharing: [\n", "device plugin config:"},
       }) {
    const auto r = ParseDevicePluginConfig(b.yaml);
    ASSERT_FALSE(r) << b.yaml;
    EXPECT_THAT(r.error().message, HasSubstr(b.expect)) << b.yaml;
  }
  const auto ts = ParseDevicePluginConfig(
      "sharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 4}]}}\n");
  ASSERT_TRUE(ts);
  EXPECT_EQ(ts->mode, domain::SharingMode::kTimeSlicing);
  EXPECT_EQ(ts->replicas_by_resource.at("nvidia.com/gpu"), 4u);
}

// The agent reads this file at start: a billion laughs must be an error naming it, not a hang.
TEST(DevicePluginConfig, AliasesAreRefusedNotExpanded) {
  const auto bomb = ParseDevicePluginConfig(testing::BillionLaughs());
  ASSERT_FALSE(bomb);
  EXPECT_EQ(bomb.error().message,
            "device plugin config: line 2, column 8: YAML aliases are not accepted (*a); write "
            "the value out");
  const auto shared = ParseDevicePluginConfig(
      "sharing:\n  timeSlicing:\n    resources: &r [{name: nvidia.com/gpu, replicas: 4}]\n"
      "  mps:\n    resources: *r\n");
  ASSERT_FALSE(shared);
  EXPECT_THAT(shared.error().message,
              HasSubstr("device plugin config: line 5, column 16: YAML aliases are not accepted"));
}

}  // namespace
}  // namespace gpumeter::k8s
