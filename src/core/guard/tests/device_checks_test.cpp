// The device rules on hand-built passes: GPU-health states while they last, fault events (XIDs,
// a rise of the uncorrectable ECC count) with the pods on the GPU when they came.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "core/guard/guard.h"
#include "core/guard/tests/finding_filters.h"

namespace gpumeter::guard {
namespace {

using domain::Owner;
using domain::OwnerKind;
using domain::SharingMode;

const Owner kTrainer{OwnerKind::kContainer, "vision", "train-0", "trainer"};
const Owner kShell{OwnerKind::kContainer, "sandbox", "debug", "shell"};
const Owner kA{OwnerKind::kContainer, "llm", "chat-0", "vllm"};
const Owner kB{OwnerKind::kContainer, "llm", "chat-1", "vllm"};

UnitView Unit(const std::string& uuid, SharingMode mode, std::vector<attribution::Holding> holders,
              std::vector<ProcessView> procs) {
  UnitView u;
  u.uuid = u.gpu_uuid = uuid;
  u.model = "NVIDIA H100 80GB HBM3";
  u.mode = mode;
  u.holders = std::move(holders);
  u.processes = std::move(procs);
  return u;
}

PassView Pass(std::vector<UnitView> units, double now) {
  PassView p;
  p.node = "node-a";
  p.now = now;
  p.allocations_known = p.pods_known = true;
  p.units = std::move(units);
  return p;
}

using testing::Has;
using testing::Of;

// GPU health states, each finding with the containers on the GPU: a pending row remap (warning)
// on a MIG GPU, for the holder of each instance; a failed remap (critical) on a GPU nobody holds;
// clocks held down for heat (warning) once they held 60 s, not at the first reading. A power cap
// reached under load and the idle reason are no slowdown; unknown health and zero counts raise
// nothing; uncorrectable ECC errors from before the agent's first reading are one finding about
// the unit, naming nobody (who was on it then is not known).
TEST(Guard, GpuHealthStatesAreNamedWithThePodsOnTheGpu) {
  Guard g({}, nullptr);
  auto shared = Unit("GPU-0", SharingMode::kTimeSlicing, {{kA, 0.5}, {kB, 0.5}}, {});
  shared.health.ecc_uncorrected = 2, shared.health.ecc_corrected = 7;
  shared.health.clock_event_reasons = 0x4 | 0x1;  // sw_power_cap, gpu_idle
  gpu::GpuHealth mig_health;  // (NVML gives no rows with MIG on: the rule reads what it is given)
  mig_health.remapped_rows = gpu::GpuHealth::RemappedRows{0, 1, true, false};
  mig_health.clock_event_reasons = 0x40;  // hw_thermal
  auto mig1 = Unit("MIG-1", SharingMode::kMig, {{kA, 1}}, {});
  auto mig2 = Unit("MIG-2", SharingMode::kMig, {{kTrainer, 1}}, {});
  for (auto* m : {&mig1, &mig2}) m->gpu_uuid = "GPU-1", m->health = mig_health;
  auto nobody = Unit("GPU-2", SharingMode::kExclusive, {}, {});
  nobody.health.remapped_rows = gpu::GpuHealth::RemappedRows{0, 3, true, true};
  auto fine = Unit("GPU-3", SharingMode::kExclusive, {{kB, 1}}, {});
  fine.health.ecc_uncorrected = 0, fine.health.ecc_corrected = 4;
  fine.health.remapped_rows = gpu::GpuHealth::RemappedRows{2, 0, false, false};
  auto unknown = Unit("GPU-4", SharingMode::kExclusive, {{kShell, 1}}, {});
  const std::vector<UnitView> units{shared, mig1, mig2, nobody, fine, unknown};
  g.Update(Pass(units, 1000));
  EXPECT_TRUE(Of(g.Open(), Kind::kClocksSlowdown).empty()) << "not held 60 s yet";
  g.Update(Pass(units, 1060));
  const auto open = g.Open();
  auto who = [&](Kind k) {
    std::set<std::string> out;
    for (const auto& f : Of(open, k)) out.insert(f.unit_uuid + " " + f.pod);
    return out;
  };
  EXPECT_EQ(who(Kind::kEccUncorrectable), (std::set<std::string>{"GPU-0 "}));
  EXPECT_EQ(who(Kind::kRowRemapPending),
            (std::set<std::string>{"MIG-1 " + kA.pod, "MIG-2 " + kTrainer.pod}));
  EXPECT_EQ(who(Kind::kClocksSlowdown),
            (std::set<std::string>{"MIG-1 " + kA.pod, "MIG-2 " + kTrainer.pod}));
  EXPECT_EQ(who(Kind::kRowRemapFailed), (std::set<std::string>{"GPU-2 "}))
      << "a failed remap is reported as failed, not also as pending";
  for (const auto& f : open) {
    EXPECT_NE(f.unit_uuid, "GPU-3") << f.evidence;
    EXPECT_NE(f.unit_uuid, "GPU-4") << f.evidence;
  }
  const auto ecc = Of(open, Kind::kEccUncorrectable);
  ASSERT_EQ(ecc.size(), 1u);
  EXPECT_EQ(ecc[0].severity, Severity::kCritical);
  EXPECT_TRUE(Has(ecc[0].evidence, "before the agent's first reading")) << ecc[0].evidence;
  const auto slow = Of(open, Kind::kClocksSlowdown);
  ASSERT_FALSE(slow.empty());
  EXPECT_EQ(slow[0].severity, Severity::kWarning);
  EXPECT_TRUE(Has(slow[0].evidence, "(hw_thermal;")) << slow[0].evidence;
  EXPECT_TRUE(Has(slow[0].evidence, "for 60 s")) << slow[0].evidence;
  EXPECT_EQ(Of(open, Kind::kRowRemapPending)[0].severity, Severity::kWarning);
  EXPECT_EQ(Of(open, Kind::kRowRemapFailed)[0].severity, Severity::kCritical);
  EXPECT_TRUE(Has(Of(open, Kind::kRowRemapFailed)[0].evidence, "no container held it"));
}

// Events name the pods on the GPU when they came, and only those: a rise of the uncorrectable ECC
// count, and XIDs (one attributed to a MIG GPU instance names that instance's holder only; an
// application's XID is info). They stay open an hour after, whoever holds the GPU by then: a pod
// that comes later is named by none of them.
TEST(Guard, FaultEventsNameThePodsOnTheGpuThen) {
  Guard g({}, nullptr);
  auto shared = Unit("GPU-0", SharingMode::kTimeSlicing, {{kA, 0.5}, {kB, 0.5}}, {});
  shared.health.ecc_uncorrected = 0;
  auto mig1 = Unit("MIG-1", SharingMode::kMig, {{kTrainer, 1}}, {});
  auto mig2 = Unit("MIG-2", SharingMode::kMig, {{kShell, 1}}, {});
  mig1.gpu_uuid = mig2.gpu_uuid = "GPU-1";
  mig1.gpu_instance_id = 1, mig2.gpu_instance_id = 2;
  g.Update(Pass({shared, mig1, mig2}, 1000));
  EXPECT_TRUE(g.Open().empty());

  shared.health.ecc_uncorrected = 3;
  shared.xids = {{13, std::nullopt, 1'010'000'000}};
  mig1.xids = mig2.xids = {{95, 2u, 1'010'000'000}};
  g.Update(Pass({shared, mig1, mig2}, 1010));
  auto who = [&](Kind k) {
    std::set<std::string> out;
    for (const auto& f : Of(g.Open(), k)) out.insert(f.unit_uuid + " " + f.pod);
    return out;
  };
  EXPECT_EQ(who(Kind::kEccUncorrectable),
            (std::set<std::string>{"GPU-0 " + kA.pod, "GPU-0 " + kB.pod}));
  EXPECT_EQ(who(Kind::kXid), (std::set<std::string>{"MIG-2 " + kShell.pod}))
      << "attributed to GPU instance 2";
  EXPECT_EQ(who(Kind::kXidApplication),
            (std::set<std::string>{"GPU-0 " + kA.pod, "GPU-0 " + kB.pod}));
  const auto xid = Of(g.Open(), Kind::kXid);
  ASSERT_EQ(xid.size(), 1u);
  EXPECT_EQ(xid[0].severity, Severity::kCritical);
  EXPECT_TRUE(Has(xid[0].evidence, "XID 95 (an uncontained memory error)")) << xid[0].evidence;
  EXPECT_EQ(Of(g.Open(), Kind::kXidApplication)[0].severity, Severity::kInfo);
  EXPECT_TRUE(Has(Of(g.Open(), Kind::kEccUncorrectable)[0].evidence, "3 new uncorrectable"));

  // Later: the count stays, the tenants change; nobody new is named, the old stay open an hour.
  auto later = Unit("GPU-0", SharingMode::kTimeSlicing, {{kTrainer, 1}}, {});
  later.health.ecc_uncorrected = 3;
  mig1.xids.clear(), mig2.xids.clear();
  g.Update(Pass({later, mig1, mig2}, 2000));
  EXPECT_EQ(who(Kind::kEccUncorrectable),
            (std::set<std::string>{"GPU-0 " + kA.pod, "GPU-0 " + kB.pod}));
  EXPECT_EQ(who(Kind::kXid), (std::set<std::string>{"MIG-2 " + kShell.pod}));
  for (double t : {4700.0, 4800.0, 4900.0, 5000.0}) g.Update(Pass({later, mig1, mig2}, t));
  EXPECT_TRUE(Of(g.Open(), Kind::kEccUncorrectable).empty()) << "closed an hour after";
  EXPECT_TRUE(Of(g.Open(), Kind::kXid).empty());
  EXPECT_EQ(g.opened().at({Kind::kEccUncorrectable, Severity::kCritical}), 2u);
}

// Errors before the agent's first reading stay one finding while the count lasts (not only for
// the grace passes), and go with a driver reload (a lower count); one unread reasons mask does not
// restart a slowdown's hold; an XID attributed to an instance no unit is goes to every unit.
TEST(Guard, HealthStatesLastAndEventsFindTheirUnits) {
  Guard g({}, nullptr);
  auto gpu = Unit("GPU-0", SharingMode::kExclusive, {{kA, 1}}, {});
  gpu.health.ecc_uncorrected = 4;
  gpu.health.clock_event_reasons = 0x40;
  for (double t = 1000; t <= 1100; t += 20) g.Update(Pass({gpu}, t));
  EXPECT_EQ(Of(g.Open(), Kind::kEccUncorrectable).size(), 1u) << "open while the count lasts";
  ASSERT_EQ(Of(g.Open(), Kind::kClocksSlowdown).size(), 1u);
  auto unread = gpu;
  unread.health.clock_event_reasons.reset();
  g.Update(Pass({unread}, 1120));
  g.Update(Pass({gpu}, 1140));
  const auto slow = Of(g.Open(), Kind::kClocksSlowdown);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_TRUE(Has(slow[0].evidence, "for 140 s")) << slow[0].evidence;
  auto reloaded = gpu;
  reloaded.health.ecc_uncorrected = 0;
  for (double t = 1160; t <= 1240; t += 20) g.Update(Pass({reloaded}, t));
  EXPECT_TRUE(Of(g.Open(), Kind::kEccUncorrectable).empty()) << "a driver reload cleared it";

  auto mig1 = Unit("MIG-1", SharingMode::kMig, {{kTrainer, 1}}, {});
  auto mig2 = Unit("MIG-2", SharingMode::kMig, {{kShell, 1}}, {});
  mig1.gpu_uuid = mig2.gpu_uuid = "GPU-1";
  mig1.gpu_instance_id = 1, mig2.gpu_instance_id = 2;
  mig1.xids = mig2.xids = {{95, 9u, 1'300'000'000}};  // instance 9: no unit
  g.Update(Pass({mig1, mig2}, 1300));
  std::set<std::string> who;
  for (const auto& f : Of(g.Open(), Kind::kXid)) who.insert(f.unit_uuid);
  EXPECT_EQ(who, (std::set<std::string>{"MIG-1", "MIG-2"}));
}

// Retired pages (boards before Ampere): a pending retirement warns with the holders; 63 pages in
// all is the replacement limit (critical), 62 is not; unknown pending raises nothing.
TEST(Guard, RetiredPagesPendingAndAtTheLimitNameTheHolders) {
  Guard g({}, nullptr);
  auto pending = Unit("GPU-0", SharingMode::kTimeSlicing, {{kA, 0.5}, {kB, 0.5}}, {});
  pending.model = "Tesla V100-SXM2-32GB";
  pending.health.retired_pages = gpu::GpuHealth::RetiredPages{2, 1, true};
  auto limit = Unit("GPU-1", SharingMode::kExclusive, {{kTrainer, 1}}, {});
  limit.health.retired_pages = gpu::GpuHealth::RetiredPages{60, 3, false};
  auto below = Unit("GPU-2", SharingMode::kExclusive, {{kShell, 1}}, {});
  below.health.retired_pages = gpu::GpuHealth::RetiredPages{60, 2, std::nullopt};
  g.Update(Pass({pending, limit, below}, 1000));
  const auto open = g.Open();
  std::set<std::string> pend, full;
  for (const auto& f : Of(open, Kind::kRetiredPagesPending)) pend.insert(f.unit_uuid + " " + f.pod);
  for (const auto& f : Of(open, Kind::kRetiredPagesLimit)) full.insert(f.unit_uuid + " " + f.pod);
  EXPECT_EQ(pend, (std::set<std::string>{"GPU-0 " + kA.pod, "GPU-0 " + kB.pod}));
  EXPECT_EQ(full, (std::set<std::string>{"GPU-1 " + kTrainer.pod}));
  for (const auto& f : open) EXPECT_NE(f.unit_uuid, "GPU-2") << f.evidence;
  const auto p = Of(open, Kind::kRetiredPagesPending);
  ASSERT_FALSE(p.empty());
  EXPECT_EQ(p[0].severity, Severity::kWarning);
  EXPECT_TRUE(Has(p[0].evidence, "Tesla V100-SXM2-32GB")) << p[0].evidence;
  EXPECT_TRUE(Has(p[0].evidence, "1 double-bit, 2 single-bit")) << p[0].evidence;
  const auto l = Of(open, Kind::kRetiredPagesLimit);
  ASSERT_FALSE(l.empty());
  EXPECT_EQ(l[0].severity, Severity::kCritical);
  EXPECT_TRUE(Has(l[0].evidence, "retired 63 memory pages")) << l[0].evidence;
  pending.health.retired_pages->pending = false;  // the reboot retired them
  for (int i = 1; i <= Guard::kGracePasses; ++i)
    g.Update(Pass({pending, limit, below}, 1000 + 20 * i));
  EXPECT_TRUE(Of(g.Open(), Kind::kRetiredPagesPending).empty());
  EXPECT_EQ(Of(g.Open(), Kind::kRetiredPagesLimit).size(), 1u) << "the limit lasts";
}

}  // namespace
}  // namespace gpumeter::guard
