// Guardrail detection on hand-built passes: each finding from the readings that show it, nothing
// from readings that do not (including unknown ones), and open/close bookkeeping.
#include "core/guard/guard.h"
#include "core/guard/tests/finding_filters.h"

#include <gtest/gtest.h>

#include <set>

#include "domain/unit_kind.h"

namespace gpumeter::guard {
namespace {

using domain::Owner;
using domain::OwnerKind;
using domain::SharingMode;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr const char* kModel = "NVIDIA H100 80GB HBM3";
const Owner kTrainer{OwnerKind::kContainer, "vision", "train-0", "trainer"};
const Owner kShell{OwnerKind::kContainer, "sandbox", "debug", "shell"};
const Owner kA{OwnerKind::kContainer, "llm", "chat-0", "vllm"};
const Owner kB{OwnerKind::kContainer, "llm", "chat-1", "vllm"};
const Owner kSystem{OwnerKind::kSystem, {}, {}, {}};
const Owner kIdle{OwnerKind::kIdle, {}, {}, {}};
const Owner kUnattributed{OwnerKind::kUnattributed, {}, {}, {}};

attribution::Row Row(const Owner& o, double mem_gib, double compute_ratio, double seconds) {
  attribution::Row r;
  r.owner = o;
  r.memory_byte_seconds = mem_gib * kGiB * seconds;
  r.compute_seconds = compute_ratio * seconds;
  return r;
}

attribution::UnitLedger Ledger(const std::string& uuid, double seconds,
                               std::vector<attribution::Row> rows) {
  attribution::UnitLedger l;
  l.uuid = uuid;
  l.seconds = seconds;
  l.memory_capacity_byte_seconds = 80 * kGiB * seconds;
  l.rows = std::move(rows);
  return l;
}

ProcessView Proc(
    uint32_t pid, const Owner& o,
    std::optional<std::map<std::string, std::string>> env = std::map<std::string, std::string>{},
    std::string comm = "python") {
  return ProcessView{pid, std::move(comm), o, static_cast<uint64_t>(2 * kGiB), std::move(env)};
}

UnitView Unit(const std::string& uuid, SharingMode mode, std::vector<attribution::Holding> holders,
              std::vector<ProcessView> procs, const attribution::UnitLedger* ledger = nullptr) {
  UnitView u;
  u.uuid = u.gpu_uuid = uuid;
  u.model = kModel;
  u.mode = mode;
  u.holders = std::move(holders);
  u.processes = std::move(procs);
  u.ledger = ledger;
  return u;
}

PassView Pass(std::vector<UnitView> units, double now = 1000) {
  PassView p;
  p.node = "node-a";
  p.now = now;
  p.allocations_known = true;
  p.pods_known = true;
  p.units = std::move(units);
  p.gpu_uuid_by_index = {{0, "GPU-0"}, {1, "GPU-1"}};
  return p;
}

using testing::Has;
using testing::Of;

// A pod that requested nothing, with NVIDIA_VISIBLE_DEVICES=all, runs on two GPUs held by a
// trainer.
PassView LeakPass(const std::vector<attribution::UnitLedger>& ledgers) {
  const std::map<std::string, std::string> all{{"NVIDIA_VISIBLE_DEVICES", "all"}};
  auto p = Pass({Unit("GPU-0", SharingMode::kExclusive, {{kTrainer, 1}},
                      {Proc(10, kTrainer), Proc(77, kShell, all)}, &ledgers[0]),
                 Unit("GPU-1", SharingMode::kExclusive, {{kTrainer, 1}},
                      {Proc(10, kTrainer), Proc(77, kShell, all)}, &ledgers[1])});
  p.requests_gpu = {{kTrainer, true}, {kShell, false}};
  return p;
}

TEST(Guard, ALeakIsUnallocatedUseWithoutARequestThroughVisibleDevicesAll) {
  const std::vector<attribution::UnitLedger> ledgers{
      Ledger("GPU-0", 60,
             {Row(kTrainer, 60, 0.7, 60), Row(kShell, 4, 0.2, 60), Row(kIdle, 16, 0.1, 60)}),
      Ledger("GPU-1", 60,
             {Row(kTrainer, 60, 0.9, 60), Row(kShell, 4, 0.1, 60), Row(kIdle, 16, 0, 60)})};
  Guard g(GuardConfig{}, nullptr);
  g.Update(LeakPass(ledgers));
  const auto open = g.Open();
  const auto unalloc = Of(open, Kind::kUnallocatedDevice);
  ASSERT_EQ(unalloc.size(), 2u);
  EXPECT_EQ(unalloc[0].unit_uuid, "GPU-0");
  EXPECT_EQ(unalloc[1].unit_uuid, "GPU-1");
  EXPECT_EQ(unalloc[0].severity, Severity::kCritical);
  EXPECT_EQ(unalloc[0].pod, "debug");
  EXPECT_EQ(unalloc[0].node, "node-a");
  EXPECT_TRUE(Has(unalloc[0].evidence, "pid 77 (python) of sandbox/debug/shell ran on GPU-0"))
      << unalloc[0].evidence;
  EXPECT_TRUE(Has(unalloc[0].evidence, "4.0 GiB, 20.0 % compute")) << unalloc[0].evidence;
  EXPECT_TRUE(Has(unalloc[0].evidence, "allocated to vision/train-0/trainer"))
      << unalloc[0].evidence;
  EXPECT_TRUE(Has(unalloc[0].evidence, "NVIDIA_VISIBLE_DEVICES=all")) << unalloc[0].evidence;
  const auto unrequested = Of(open, Kind::kNoGpuRequest);
  ASSERT_EQ(unrequested.size(), 1u);
  EXPECT_TRUE(Has(unrequested[0].evidence, "used GPU-0, GPU-1")) << unrequested[0].evidence;
  const auto all = Of(open, Kind::kVisibleDevicesAll);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].container, "shell");
  // The trainer is where it should be: nothing about it.
  for (const auto& f : open) EXPECT_NE(f.pod, "train-0") << ToString(f.kind);
  EXPECT_EQ(open.size(), 4u);
  EXPECT_EQ(open.front().severity, Severity::kCritical);
  EXPECT_EQ(open.back().severity, Severity::kWarning);
}

TEST(Guard, WithoutAllocationsOrPodsNothingIsCalledUnallocatedOrUnrequested) {
  const std::vector<attribution::UnitLedger> ledgers{Ledger("GPU-0", 60, {}),
                                                     Ledger("GPU-1", 60, {})};
  auto p = LeakPass(ledgers);
  p.allocations_known = false;
  Guard g(GuardConfig{}, nullptr);
  g.Update(p);
  EXPECT_TRUE(Of(g.Open(), Kind::kUnallocatedDevice).empty());
  EXPECT_TRUE(Of(g.Open(), Kind::kNoGpuRequest).empty());
  EXPECT_EQ(Of(g.Open(), Kind::kVisibleDevicesAll).size(), 1u)
      << "the environment is a fact of its own";

  p = LeakPass(ledgers);
  p.requests_gpu.erase(kShell);  // its pod is not known
  Guard g2(GuardConfig{}, nullptr);
  g2.Update(p);
  EXPECT_EQ(Of(g2.Open(), Kind::kUnallocatedDevice).size(), 2u);
  EXPECT_TRUE(Of(g2.Open(), Kind::kNoGpuRequest).empty());
}

TEST(Guard, VisibleDevicesOutsideTheAllocationByUuidOrIndex) {
  const auto with = [](const std::string& value) {
    auto p = Pass({Unit(
        "GPU-0", SharingMode::kExclusive, {{kA, 1}},
        {Proc(5, kA, std::map<std::string, std::string>{{"NVIDIA_VISIBLE_DEVICES", value}})})});
    Guard g(GuardConfig{}, nullptr);
    g.Update(p);
    return Of(g.Open(), Kind::kVisibleDevicesOutside);
  };
  auto f = with("GPU-0,GPU-1");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(Has(f[0].evidence, "names GPU-1 outside its allocation (GPU-0)")) << f[0].evidence;
  f = with("0, 1");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(Has(f[0].evidence, "names GPU-1")) << f[0].evidence;
  EXPECT_TRUE(with("GPU-0").empty());
  EXPECT_TRUE(with("0").empty());
  EXPECT_TRUE(with("void").empty());
  EXPECT_TRUE(with("none").empty());
  EXPECT_TRUE(with("/var/run/nvidia-container-devices").empty()) << "volume-mounts strategy";
}

TEST(Guard, HostProcessesOutsideAnyPodExceptTheExpectedOnes) {
  auto p = Pass({Unit("GPU-0", SharingMode::kExclusive, {},
                      {Proc(9, kSystem, std::nullopt, "dcgmproftester12"),
                       Proc(8, kSystem, std::nullopt, "nvidia-cuda-mps"),
                       Proc(7, kUnattributed, std::nullopt, "python")})});
  Guard g(GuardConfig{}, nullptr);
  g.Update(p);
  const auto open = g.Open();
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].kind, Kind::kHostProcess);
  EXPECT_TRUE(Has(open[0].evidence, "pid 9 (dcgmproftester12) runs outside any pod on GPU-0"))
      << open[0].evidence;
  EXPECT_TRUE(Has(open[0].evidence, "holding 2.0 GiB")) << open[0].evidence;
  EXPECT_EQ(open[0].process, "dcgmproftester12");
}

// A command name that is not UTF-8 (bytes a process set as its name, or one the kernel cut inside
// a character) reads as /metrics shows it, U+FFFD for each bad sequence; two names that read the
// same there are one finding, not two series with one label set.
TEST(Guard, AHostProcessNameThatIsNotUtf8ReadsAsMetricsShowIt) {
  const std::string fffd = "\xef\xbf\xbd", bytes = "\xff\xfe", overlong = "\xc0\xaf";
  auto p = Pass({Unit("GPU-0", SharingMode::kExclusive, {},
                      {Proc(9, kSystem, std::nullopt, bytes + "burn"),
                       Proc(8, kSystem, std::nullopt, overlong + "burn")})});
  Guard g(GuardConfig{}, nullptr);
  g.Update(p);
  const auto open = g.Open();
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].process, fffd + fffd + "burn");
  EXPECT_TRUE(Has(open[0].evidence, "(" + fffd + fffd + "burn) runs outside any pod on GPU-0"))
      << open[0].evidence;
}

TEST(Guard, AnIdleAllocationOpensAfterTheWindowWithItsCost) {
  auto pricing = cost::Pricing::Parse("currency: EUR\ngpu_models:\n  H100: 2.5\n", "prices.yaml");
  ASSERT_TRUE(pricing) << pricing.error().message;
  GuardConfig c;
  c.idle_window_s = 3600;
  Guard g(c, &*pricing);
  const auto idle = Ledger("GPU-0", 1200, {Row(kA, 1, 0.001, 1200), Row(kIdle, 79, 0.999, 1200)});
  const auto busy = Ledger("GPU-0", 1200, {Row(kA, 1, 0.5, 1200), Row(kIdle, 79, 0.5, 1200)});
  const auto unknown =
      Ledger("GPU-0", 1200, {Row(kA, 1, 0, 1200), Row(kUnattributed, 79, 1, 1200)});
  const auto pass = [&](const attribution::UnitLedger& l, double now) {
    g.Update(Pass({Unit("GPU-0", SharingMode::kExclusive, {{kA, 1}}, {Proc(5, kA)}, &l)}, now));
    return Of(g.Open(), Kind::kIdleAllocation);
  };
  EXPECT_TRUE(pass(idle, 1).empty());
  EXPECT_TRUE(pass(idle, 2).empty());
  EXPECT_TRUE(pass(unknown, 3).empty()) << "unknown activity is neither idle nor use";
  auto f = pass(idle, 4);
  ASSERT_EQ(f.size(), 1u);
  ASSERT_TRUE(f[0].waste_gpu_hours && f[0].waste_cost);
  EXPECT_DOUBLE_EQ(*f[0].waste_gpu_hours, 1.0);
  EXPECT_DOUBLE_EQ(*f[0].waste_cost, 2.5);
  EXPECT_EQ(f[0].currency, "EUR");
  EXPECT_TRUE(Has(f[0].evidence, "used under 2.0 % of that share for 1h 0m")) << f[0].evidence;
  EXPECT_EQ(f[0].first_seen, 4);
  f = pass(idle, 5);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_DOUBLE_EQ(*f[0].waste_cost, 2.5 * 4 / 3) << "the waste grows while it lasts";
  EXPECT_EQ(f[0].first_seen, 4);
  EXPECT_EQ(f[0].last_seen, 5);
  EXPECT_EQ(pass(busy, 6).size(), 1u) << "open for the grace passes, as last seen";
  pass(busy, 7);
  EXPECT_TRUE(pass(busy, 8).empty()) << "use ends it";
  EXPECT_TRUE(pass(idle, 9).empty()) << "and the window starts again";
  EXPECT_EQ(g.opened().at({Kind::kIdleAllocation, Severity::kWarning}), 1u);
}

TEST(Guard, IdlenessIsMeasuredAgainstTheHoldersShare) {
  GuardConfig c;
  c.idle_window_s = 60;
  Guard g(c, nullptr);
  // A quarter of a time-sliced GPU: 1 % of the GPU is 4 % of its share (not idle); 0.4 % is 1.6 %
  // (idle).
  const auto l =
      Ledger("GPU-0", 60, {Row(kA, 1, 0.01, 60), Row(kB, 1, 0.004, 60), Row(kIdle, 78, 0.986, 60)});
  g.Update(Pass({Unit("GPU-0", SharingMode::kTimeSlicing, {{kA, 0.25}, {kB, 0.25}},
                      {Proc(5, kA), Proc(6, kB)}, &l)}));
  const auto f = Of(g.Open(), Kind::kIdleAllocation);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].pod, "chat-1");
  EXPECT_DOUBLE_EQ(*f[0].waste_gpu_hours, 0.25 * 60 / 3600);
  EXPECT_FALSE(f[0].waste_cost) << "no pricing: no cost, never 0";
}

TEST(Guard, SharedGpuNearOutOfMemory) {
  const auto risky =
      Ledger("GPU-0", 60, {Row(kA, 40, 0.3, 60), Row(kB, 36, 0.3, 60), Row(kIdle, 4, 0.4, 60)});
  const auto roomy =
      Ledger("GPU-0", 60, {Row(kA, 30, 0.3, 60), Row(kB, 36, 0.3, 60), Row(kIdle, 14, 0.4, 60)});
  const auto solo = Ledger("GPU-0", 60, {Row(kA, 78, 0.3, 60), Row(kIdle, 2, 0.7, 60)});
  const auto find = [](const attribution::UnitLedger& l, SharingMode mode) {
    Guard g(GuardConfig{}, nullptr);
    g.Update(Pass({Unit("GPU-0", mode, {{kA, 0.5}, {kB, 0.5}}, {Proc(5, kA), Proc(6, kB)}, &l)}));
    return Of(g.Open(), Kind::kOomRisk);
  };
  auto f = find(risky, SharingMode::kTimeSlicing);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(Has(f[0].evidence, "76.0 of 80.0 GiB in use (95 %, threshold 90 %)"))
      << f[0].evidence;
  EXPECT_TRUE(Has(f[0].evidence, "llm/chat-0/vllm 40.0 GiB, llm/chat-1/vllm 36.0 GiB"))
      << f[0].evidence;
  EXPECT_EQ(find(risky, SharingMode::kMps).size(), 1u);
  EXPECT_TRUE(find(risky, SharingMode::kExclusive).empty()) << "one tenant cannot starve another";
  EXPECT_TRUE(find(roomy, SharingMode::kTimeSlicing).empty());
  EXPECT_TRUE(find(solo, SharingMode::kTimeSlicing).empty());
}

TEST(Guard, MpsClientsWithoutLimits) {
  using Env = std::map<std::string, std::string>;
  const auto find = [](std::vector<ProcessView> procs, bool plugin = false) {
    auto p = Pass({Unit("GPU-0", SharingMode::kMps, {{kA, 0.5}, {kB, 0.5}}, std::move(procs))});
    p.mps_limits_by_device_plugin = plugin;
    Guard g(GuardConfig{}, nullptr);
    g.Update(p);
    return Of(g.Open(), Kind::kMpsNoLimits);
  };
  const Env threads{{"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "50"}};
  const Env both{{"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "50"},
                 {"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=20G"}};
  // The server as /proc shows it: its name cut to 15 characters, its environment readable.
  const auto server = [](Env env = {}) {
    return Proc(4, kSystem, std::move(env), "nvidia-cuda-mps");
  };
  auto f = find({server(), Proc(5, kA, threads), Proc(6, kB, both)});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].pod, "chat-0");
  EXPECT_TRUE(Has(f[0].evidence, "no limit on memory (CUDA_MPS_PINNED_DEVICE_MEM_LIMIT)"))
      << f[0].evidence;
  EXPECT_FALSE(Has(f[0].evidence, "active threads")) << f[0].evidence;
  EXPECT_EQ(find({server(), Proc(5, kA, Env{}), Proc(6, kB, both)}).size(), 1u);
  EXPECT_TRUE(find({server(), Proc(5, kA, both), Proc(6, kB, both)}).empty());
  EXPECT_TRUE(find({server(), Proc(5, kA, std::nullopt), Proc(6, kB, std::nullopt)}).empty())
      << "an unreadable environment is unknown";
  EXPECT_TRUE(find({server(Env{{"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=40G"}}),
                    Proc(5, kA, threads), Proc(6, kB, threads)})
                  .empty())
      << "the server's default covers its clients";
  EXPECT_TRUE(find({Proc(5, kA, Env{}), Proc(6, kB, Env{})}).empty())
      << "no server seen: its defaults are unknown";
  EXPECT_TRUE(find({Proc(4, kSystem, std::nullopt, "nvidia-cuda-mps"), Proc(5, kA, Env{})}).empty())
      << "an unreadable server is unknown";
  EXPECT_TRUE(find({server(), Proc(5, kA, Env{}), Proc(6, kB, Env{})}, true).empty())
      << "the device plugin sets defaults";
}

TEST(Guard, FindingsStayOpenWhileSeenAndCountOncePerOpening) {
  const std::vector<attribution::UnitLedger> ledgers{Ledger("GPU-0", 60, {}),
                                                     Ledger("GPU-1", 60, {})};
  Guard g(GuardConfig{}, nullptr);
  auto leak = LeakPass(ledgers);
  g.Update(leak);
  leak.now = 1060;
  g.Update(leak);
  auto open = g.Open();
  ASSERT_FALSE(open.empty());
  for (const auto& f : open) {
    EXPECT_EQ(f.first_seen, 1000);
    EXPECT_EQ(f.last_seen, 1060);
  }
  EXPECT_EQ(g.opened().at({Kind::kUnallocatedDevice, Severity::kCritical}), 2u);
  g.Update(Pass({}, 1120));
  g.Update(Pass({}, 1180));
  EXPECT_EQ(g.Open().size(), open.size()) << "a pass or two unseen is not the end of it";
  EXPECT_EQ(g.Open().front().last_seen, 1060) << "as last seen";
  leak.now = 1200;
  g.Update(leak);
  EXPECT_EQ(g.opened().at({Kind::kUnallocatedDevice, Severity::kCritical}), 2u)
      << "back within the grace: the same finding";
  for (double t : {1260, 1320, 1380}) g.Update(Pass({}, t));
  EXPECT_TRUE(g.Open().empty()) << "gone after three passes unseen";
  leak.now = 1440;
  g.Update(leak);
  EXPECT_EQ(g.opened().at({Kind::kUnallocatedDevice, Severity::kCritical}), 4u);
  EXPECT_EQ(g.opened().at({Kind::kNoGpuRequest, Severity::kCritical}), 2u);
}

// A GPU that fell off the bus is named with each container that held it then, as critical; a MIG
// instance of it likewise; a lost GPU nobody held is one finding for the unit; a GPU that is not
// lost, none.
TEST(Guard, ALostGpuIsNamedWithThePodsThatHeldIt) {
  Guard g({}, nullptr);
  auto shared = Unit("GPU-0", SharingMode::kTimeSlicing, {{kA, 0.5}, {kB, 0.5}}, {});
  shared.gpu_lost = true;
  auto mig = Unit("MIG-1", SharingMode::kMig, {{kA, 1}}, {});
  mig.gpu_uuid = "GPU-1", mig.gpu_lost = true;
  auto nobody = Unit("GPU-2", SharingMode::kExclusive, {}, {});
  nobody.gpu_lost = true, nobody.model = "";  // a lost GPU may no longer say its name
  auto fine = Unit("GPU-3", SharingMode::kExclusive, {{kB, 1}}, {});
  g.Update(Pass({shared, mig, nobody, fine}));
  const auto lost = Of(g.Open(), Kind::kGpuLost);
  ASSERT_EQ(lost.size(), 4u);
  std::set<std::string> seen;
  for (const auto& f : lost) {
    EXPECT_EQ(f.severity, Severity::kCritical);
    EXPECT_TRUE(Has(f.evidence, "fell off the bus")) << f.evidence;
    EXPECT_NE(f.unit_uuid, "GPU-3");
    seen.insert(f.unit_uuid + " " + f.ns + "/" + f.pod);
  }
  EXPECT_EQ(seen,
            (std::set<std::string>{"GPU-0 " + kA.ns + "/" + kA.pod, "GPU-0 " + kB.ns + "/" + kB.pod,
                                   "MIG-1 " + kA.ns + "/" + kA.pod, "GPU-2 /"}));
  for (const auto& f : lost) {
    if (f.unit_uuid == "MIG-1") {
      EXPECT_EQ(f.gpu_uuid, "GPU-1");
      EXPECT_TRUE(Has(f.evidence, "MIG instance MIG-1")) << f.evidence;
    }
    if (f.unit_uuid == "GPU-0") {
      EXPECT_TRUE(Has(f.evidence, "held 50 % of it")) << f.evidence;
    }
    if (f.unit_uuid == "GPU-2") {
      EXPECT_TRUE(Has(f.evidence, "no container held it")) << f.evidence;
      EXPECT_TRUE(Has(f.evidence, "GPU GPU-2 fell off")) << f.evidence;
    }
  }
  EXPECT_EQ(g.opened().at({Kind::kGpuLost, Severity::kCritical}), 4u);
}

TEST(Guard, KindsTurnedOffAreNotReported) {
  const std::vector<attribution::UnitLedger> ledgers{Ledger("GPU-0", 60, {}),
                                                     Ledger("GPU-1", 60, {})};
  GuardConfig c;
  c.severity.erase(Kind::kVisibleDevicesAll);
  c.severity[Kind::kNoGpuRequest] = Severity::kInfo;
  Guard g(c, nullptr);
  g.Update(LeakPass(ledgers));
  EXPECT_TRUE(Of(g.Open(), Kind::kVisibleDevicesAll).empty());
  ASSERT_EQ(Of(g.Open(), Kind::kNoGpuRequest).size(), 1u);
  EXPECT_EQ(Of(g.Open(), Kind::kNoGpuRequest)[0].severity, Severity::kInfo);
}

TEST(Guard, WhatTheAllocationCannotShowIsNotAViolation) {
  const std::vector<attribution::UnitLedger> ledgers{Ledger("GPU-0", 60, {}),
                                                     Ledger("GPU-1", 60, {})};
  // A container whose device could not be placed (an index ID, a DRA device without a slice),
  // or an init container: its allocation is not known.
  auto p = LeakPass(ledgers);
  p.allocation_unknown.insert(kShell);
  Guard g(GuardConfig{}, nullptr);
  g.Update(p);
  EXPECT_TRUE(Of(g.Open(), Kind::kUnallocatedDevice).empty());
  EXPECT_TRUE(Of(g.Open(), Kind::kNoGpuRequest).empty());
  // MIG with migStrategy none: the container holds the GPU, its process runs on an instance.
  UnitView gpu = Unit("GPU-0", SharingMode::kMig, {{kA, 1}}, {});
  gpu.mig_profile = domain::MigProfileLabel(domain::UnitKind::kUnpartitioned, "");
  UnitView mig = Unit("MIG-0", SharingMode::kMig, {}, {Proc(5, kA)});
  mig.gpu_uuid = "GPU-0";
  Guard g2(GuardConfig{}, nullptr);
  g2.Update(Pass({gpu, mig}));
  EXPECT_TRUE(Of(g2.Open(), Kind::kUnallocatedDevice).empty())
      << "the instance is carved from the GPU it holds";
}

TEST(Guard, TheMpsServerInItsOwnPodIsNeitherIntruderNorTenant) {
  // The device plugin runs the MPS control daemon in a pod that holds no GPU and requests none.
  const Owner daemon{OwnerKind::kContainer, "nvidia", "mps-control-daemon", "mps"};
  const auto l = Ledger(
      "GPU-0", 60, {Row(kA, 38, 0.3, 60), Row(daemon, 0.03, 0, 60), Row(kIdle, 41.97, 0.7, 60)});
  auto p = Pass(
      {Unit("GPU-0", SharingMode::kMps, {{kA, 0.5}, {kB, 0.5}},
            {Proc(4, daemon, std::map<std::string, std::string>{}, "nvidia-cuda-mps"), Proc(5, kA)},
            &l)});
  p.requests_gpu = {{daemon, false}, {kA, true}};
  p.mps_limits_by_device_plugin = true;
  Guard g(GuardConfig{}, nullptr);
  g.Update(p);
  for (const auto& f : g.Open()) ADD_FAILURE() << ToString(f.kind) << ": " << f.evidence;
}

TEST(Guard, AnEstimatedSplitCannotShowATenantIdle) {
  GuardConfig c;
  c.idle_window_s = 60;
  Guard g(c, nullptr);
  // No per-process samples: the busy time was an estimated split, and one tenant got little.
  auto a = Row(kA, 1, 0.006, 60), b = Row(kB, 79, 0.494, 60);
  a.compute_rule = b.compute_rule = domain::Rule::kEvenSplitNoSamples;
  const auto l = Ledger("GPU-0", 60, {a, b, Row(kIdle, 0, 0.5, 60)});
  g.Update(Pass({Unit("GPU-0", SharingMode::kTimeSlicing, {{kA, 0.5}, {kB, 0.5}},
                      {Proc(5, kA), Proc(6, kB)}, &l)}));
  g.Update(Pass({Unit("GPU-0", SharingMode::kTimeSlicing, {{kA, 0.5}, {kB, 0.5}},
                      {Proc(5, kA), Proc(6, kB)}, &l)}));
  EXPECT_TRUE(Of(g.Open(), Kind::kIdleAllocation).empty());
}

TEST(Guard, UnknownDeviceMemoryIsNoOutOfMemoryRisk) {
  // The device's used memory is unknown: what the processes do not hold went to unattributed.
  auto unknown = Row(kUnattributed, 20, 0, 60);
  unknown.memory_rule = domain::Rule::kMemoryStateUnknown;
  const auto l = Ledger("GPU-0", 60, {Row(kA, 30, 0.3, 60), Row(kB, 30, 0.3, 60), unknown});
  Guard g(GuardConfig{}, nullptr);
  g.Update(Pass({Unit("GPU-0", SharingMode::kTimeSlicing, {{kA, 0.5}, {kB, 0.5}},
                      {Proc(5, kA), Proc(6, kB)}, &l)}));
  EXPECT_TRUE(Of(g.Open(), Kind::kOomRisk).empty());
}

TEST(Guard, ACleanNodeHasNoFinding) {
  using Env = std::map<std::string, std::string>;
  const auto ex = Ledger("GPU-0", 60, {Row(kTrainer, 60, 0.9, 60), Row(kIdle, 20, 0.1, 60)});
  const auto ts =
      Ledger("GPU-1", 60, {Row(kA, 20, 0.3, 60), Row(kB, 20, 0.3, 60), Row(kIdle, 40, 0.4, 60)});
  auto p = Pass({Unit("GPU-0", SharingMode::kExclusive, {{kTrainer, 1}},
                      {Proc(10, kTrainer, Env{{"NVIDIA_VISIBLE_DEVICES", "GPU-0"}})}, &ex),
                 Unit("GPU-1", SharingMode::kTimeSlicing, {{kA, 0.5}, {kB, 0.5}},
                      {Proc(11, kA, Env{{"NVIDIA_VISIBLE_DEVICES", "GPU-1"}}),
                       Proc(12, kB, Env{{"NVIDIA_VISIBLE_DEVICES", "1"}})},
                      &ts)});
  p.requests_gpu = {{kTrainer, true}, {kA, true}, {kB, true}};
  GuardConfig c;
  c.idle_window_s = 60;
  Guard g(c, nullptr);
  g.Update(p);
  g.Update(p);
  for (const auto& f : g.Open()) ADD_FAILURE() << ToString(f.kind) << ": " << f.evidence;
  EXPECT_EQ(g.opened().size(), kAllKinds.size());
  for (const auto& [key, n] : g.opened()) EXPECT_EQ(n, 0u) << ToString(key.first);
}

}  // namespace
}  // namespace gpumeter::guard
