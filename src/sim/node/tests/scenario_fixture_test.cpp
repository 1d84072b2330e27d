// The production ownership path (PodStore + ProcReader + OwnerResolver) over every bundled
// scenario presented as a node: every live process resolves to the scenario's owner, at times
// that cover process starts, exits and PID reuse.
#include "sim/node/scenario_fixture.h"
#include "sim/node/scenario_context.h"
#include "sources/slices/resource_slices.h"

#include <gtest/gtest.h>

#include "sim/scenario/loader.h"
#include "sim/scenario/truth.h"
#include "sources/proc/owner_resolver.h"
#include "sources/proc/proc_reader.h"
#include "support/paths.h"
#include "support/temp_dir.h"

namespace gpumeter::sim {
namespace {

class EveryScenario : public ::testing::TestWithParam<const char*> {};

TEST_P(EveryScenario, EveryLiveProcessResolvesToItsOwner) {
  const auto s = scenario::LoadScenarioFile(testing::ScenarioPath(GetParam()));
  ASSERT_TRUE(s) << s.error().message;
  testing::TempDir dir("gpumeter-fixture");
  k8s::PodStore pods;
  const auto list = pods.ApplyList(ScenarioPodListJson(*s));
  ASSERT_TRUE(list) << list.error().message;
  k8s::ProcReader proc(dir.path());
  k8s::OwnerResolver resolver(proc, pods);
  size_t checked = 0;
  for (double t = 0.5; t < s->duration_s;
       t += 7.25) {  // one resolver across time: caches must not mislead
    ASSERT_TRUE(WriteProcFixture(dir.path(), *s, t));
    for (const auto& p : s->processes) {
      if (!scenario::IsAlive(p, t)) continue;
      const auto o = resolver.Resolve(p.pid);
      if (!p.container) {
        EXPECT_EQ(o.kind, domain::OwnerKind::kSystem) << p.pid << " at " << t << ": " << o.how;
      } else {
        ASSERT_EQ(o.kind, domain::OwnerKind::kContainer) << p.pid << " at " << t << ": " << o.how;
        EXPECT_EQ(o.ns + "/" + o.pod + "/" + o.container, p.container->Key())
            << p.pid << " at " << t;
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 0u);
  // Before any process started the tree holds none of them (entries of dead processes are removed).
  ASSERT_TRUE(WriteProcFixture(dir.path(), *s, -1));
  for (const auto& p : s->processes)
    EXPECT_EQ(resolver.Resolve(p.pid).kind, domain::OwnerKind::kUnattributed) << p.pid;
}

INSTANTIATE_TEST_SUITE_P(Bundled, EveryScenario,
                         ::testing::Values("exclusive", "timeslice-h100", "mps-a100", "mig-h200",
                                           "node-8gpu", "dra-h100"),
                         [](const auto& i) {
                           std::string n = i.param;
                           for (auto& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

// With the fake NVML's clock, a process's start read back through /proc (btime + ticks) falls at
// its start_s on that clock, to a clock tick: what splits a reused PID's samples.
TEST(ScenarioFixture, StartTimesThroughProcMatchTheNvmlClock) {
  const auto s = scenario::LoadScenarioFile(testing::ScenarioPath("node-8gpu"));
  ASSERT_TRUE(s) << s.error().message;
  testing::TempDir dir("gpumeter-fixture");
  const double zero = 1733440000.37;  // Unix time of scenario time 0, a fraction of a second in
  k8s::ProcReader proc(dir.path());
  size_t checked = 0;
  for (const double t : {0.5, 130.0, 400.0}) {
    ASSERT_TRUE(WriteProcFixture(dir.path(), *s, t, zero));
    for (const auto& p : s->processes) {
      if (!scenario::IsAlive(p, t)) continue;
      const auto id = proc.Identify(p.pid);
      ASSERT_TRUE(id) << id.error().message;
      const auto us = proc.StartUnixUs(id->start_ticks);
      ASSERT_TRUE(us) << "root/stat has a btime";
      EXPECT_NEAR(static_cast<double>(*us) / 1e6, zero + p.start_s, 0.0051) << p.pid;
      ++checked;
    }
    proc.Retain({});
  }
  EXPECT_GT(checked, 10u);
  // Without a clock there is no root/stat: the start on the wall clock is unknown.
  testing::TempDir bare("gpumeter-fixture");
  ASSERT_TRUE(WriteProcFixture(bare.path(), *s, 0.5));
  EXPECT_FALSE(std::filesystem::exists(bare.path() / "stat"));
}

TEST(ScenarioFixture, CgroupPathsFollowTheKubeletLayoutPerQos) {
  scenario::Pod pod;
  pod.uid = "3a0f4b5d-4444-4d8e-bfc0-000000000001";
  scenario::Container c;
  c.id = "containerd://" + std::string(64, 'a');
  pod.qos = "Guaranteed";
  EXPECT_EQ(
      ScenarioCgroupPath(pod, c),
      "/kubepods.slice/kubepods-pod3a0f4b5d_4444_4d8e_bfc0_000000000001.slice/cri-containerd-" +
          std::string(64, 'a') + ".scope");
  pod.qos = "BestEffort";
  EXPECT_EQ(ScenarioCgroupPath(pod, c),
            "/kubepods.slice/kubepods-besteffort.slice/"
            "kubepods-besteffort-pod3a0f4b5d_4444_4d8e_bfc0_000000000001.slice/"
            "cri-containerd-" +
                std::string(64, 'a') + ".scope");
}

// The node's ResourceSlices as the agent's parser reads them: every claim of the scenario lands on
// the unit its device names, and the kubelet's list carries the claims as dynamic resources.
TEST(ScenarioFixture, ResourceSlicesPlaceEveryClaimOnItsUnit) {
  const auto s = scenario::LoadScenarioFile(testing::ScenarioPath("dra-h100"));
  ASSERT_TRUE(s) << s.error().message;
  k8s::ResourceSliceStore slices;
  ASSERT_TRUE(slices.ApplyList(ScenarioResourceSlicesJson(*s)));
  EXPECT_EQ(slices.devices().size(), 4u);  // gpu-0, two MIG instances of gpu-1, gpu-2
  size_t claims = 0;
  for (const auto& a : ScenarioAllocations(*s)) {
    for (const auto& cd : a.claim_devices) {
      ++claims;
      const auto* d = slices.Find(cd.driver, cd.pool, cd.device);
      ASSERT_NE(d, nullptr) << cd.device;
      ASSERT_TRUE(d->uuid);
      EXPECT_EQ(*d->uuid, s->DraUnit(cd.device));
      EXPECT_EQ(cd.claim_namespace, a.ns);
    }
  }
  EXPECT_EQ(claims, 4u);
  const auto* mig = slices.Find("gpu.nvidia.com", "gpu-node-dra", "gpu-1-mig-3g40gb-2-0");
  ASSERT_NE(mig, nullptr);
  EXPECT_EQ(mig->type, "mig");
  EXPECT_EQ(mig->parent_uuid, "GPU-d7a00000-0000-4000-8000-000000000001");
  EXPECT_EQ(mig->profile, "3g.40gb");
  // A GPU handed out by DRA carries no device-plugin sharing configuration.
  EXPECT_EQ(
      ScenarioSharingEvidence(*s).configured.count("GPU-d7a00000-0000-4000-8000-000000000002"), 0u);
}

TEST(ScenarioFixture, AnUnwritableRootIsAClearError) {
  const auto s = scenario::LoadScenarioFile(testing::ScenarioPath("exclusive"));
  ASSERT_TRUE(s);
  const auto r = WriteProcFixture("/proc/self/gpumeter-not-writable", *s, 1);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("/proc/self/gpumeter-not-writable"), std::string::npos)
      << r.error().message;
}

}  // namespace
}  // namespace gpumeter::sim
