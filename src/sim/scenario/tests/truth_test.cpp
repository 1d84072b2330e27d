#include "sim/scenario/truth.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "sim/scenario/loader.h"

namespace gpumeter::scenario {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

Scenario Load(const char* yaml) {
  auto s = ParseScenario(yaml, "truth.yaml");
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

// A: 50 % from t=0; B: 80 % from 10 s to 20 s. Hand-computed busy: 0.5, then min(1, 1.3) = 1,
// then 0.5 again.
const char* kTwo = R"(
name: two
gpus:
  - {index: 0, uuid: GPU-a, model: T, memory_mib: 1000, power: {idle_watts: 10, max_watts: 110}, energy_start_joules: 7}
processes:
  - pid: 1
    usage: [{unit: GPU-a, memory_mib: 100, memory_growth_mib_per_s: 1, memory_max_mib: 105, sm_pct: 50}]
  - pid: 2
    start_s: 10
    end_s: 20
    usage: [{unit: GPU-a, memory_mib: 200, sm_pct: 80}]
)";

TEST(Truth, BusyAndSharesWhenOversubscribed) {
  const auto s = Load(kTwo);
  EXPECT_DOUBLE_EQ(UnitAt(s, "GPU-a", 5).busy, 0.5);
  const auto mid = UnitAt(s, "GPU-a", 15);
  EXPECT_DOUBLE_EQ(mid.busy, 1.0);
  ASSERT_EQ(mid.processes.size(), 2u);
  EXPECT_DOUBLE_EQ(mid.processes[0].sm_share, 0.5 / 1.3);
  EXPECT_DOUBLE_EQ(mid.processes[1].sm_share, 0.8 / 1.3);
  EXPECT_DOUBLE_EQ(mid.processes[0].sm_share + mid.processes[1].sm_share, 1.0);
  EXPECT_DOUBLE_EQ(UnitAt(s, "GPU-a", 20).busy, 0.5);  // B has exited at exactly 20 s
}

TEST(Truth, MemoryGrowsAndCaps) {
  const auto s = Load(kTwo);
  const auto& p = s.processes[0];
  EXPECT_EQ(MemoryAt(p, p.usage[0], 3), 103 * kMiB);
  EXPECT_EQ(MemoryAt(p, p.usage[0], 10), 105 * kMiB);
  const auto& b = s.processes[1];
  EXPECT_EQ(MemoryAt(b, b.usage[0], 9.99), 0u);
  EXPECT_EQ(MemoryAt(b, b.usage[0], 20), 0u);
  EXPECT_EQ(UnitAt(s, "GPU-a", 15).process_memory_bytes, (105 + 200) * kMiB);
}

TEST(Truth, ExactBusyAndEnergyIntegrals) {
  const auto s = Load(kTwo);
  // 10 s at 0.5 + 10 s at 1.0 + 10 s at 0.5 = 20 busy-seconds.
  EXPECT_NEAR(UnitBusySeconds(s, "GPU-a", 0, 30), 20.0, 1e-12);
  EXPECT_NEAR(UnitBusySeconds(s, "GPU-a", 15, 25), 5.0 + 2.5, 1e-12);
  // E(30) = start 7 J + idle 10 W * 30 s + (110 - 10) W * 20 busy-s.
  EXPECT_NEAR(GpuEnergyJoulesAt(s, s.gpus[0], 30), 7 + 300 + 2000, 1e-9);
  EXPECT_DOUBLE_EQ(GpuPowerWattsAt(s, s.gpus[0], 15), 110);
}

TEST(Truth, DutyScheduleSteps) {
  const auto s = Load(R"(
name: steps
gpus:
  - {index: 0, uuid: GPU-a, model: T, memory_mib: 1000, power: {idle_watts: 0, max_watts: 100}}
processes:
  - pid: 1
    start_s: 5
    usage: [{unit: GPU-a, memory_mib: 1, sm: [{at_s: 0, pct: 10}, {at_s: 10, pct: 60}]}]
)");
  EXPECT_DOUBLE_EQ(UnitAt(s, "GPU-a", 4).busy, 0);
  EXPECT_DOUBLE_EQ(UnitAt(s, "GPU-a", 7).busy, 0.1);
  EXPECT_DOUBLE_EQ(UnitAt(s, "GPU-a", 12).busy, 0.6);
  // [5,10) at 0.1 + [10,20) at 0.6
  EXPECT_NEAR(UnitBusySeconds(s, "GPU-a", 0, 20), 0.5 + 6.0, 1e-12);
}

TEST(Truth, MigBusyIsSliceWeighted) {
  const auto s = Load(R"(
name: mig
gpus:
  - index: 0
    uuid: GPU-m
    model: T
    memory_mib: 1000
    power: {idle_watts: 0, max_watts: 700}
    mig:
      instances:
        - {gi: 1, profile: 3g, uuid: MIG-a, memory_mib: 400, slices: 3}
        - {gi: 2, profile: 1g, uuid: MIG-b, memory_mib: 100, slices: 1}
processes:
  - pid: 1
    usage: [{unit: MIG-a, memory_mib: 10, sm_pct: 70}]
)");
  EXPECT_DOUBLE_EQ(GpuBusyAt(s, s.gpus[0], 1), 0.7 * 3 / 7);
  EXPECT_NEAR(GpuBusySeconds(s, s.gpus[0], 0, 7), 0.7 * 3, 1e-12);
  EXPECT_NEAR(GpuEnergyJoulesAt(s, s.gpus[0], 7), 700 * 0.7 * 3, 1e-9);
}

}  // namespace
}  // namespace gpumeter::scenario

namespace gpumeter::scenario {
namespace {

// Memory traffic: A asks 70 %, B 60 % (from 10 s); oversubscribed SM (0.5 + 0.8) gives each
// 1/1.3 of its time, so A moves 0.7/1.3, B 0.6/1.3: 1.0 together, within the memory's bandwidth.
// Without `mem`, a process moves half its SM duty. Hand-computed.
const char* kTraffic = R"(
name: traffic
gpus:
  - {index: 0, uuid: GPU-a, model: T, memory_mib: 1000, power: {idle_watts: 10, max_watts: 110}}
  - {index: 1, uuid: GPU-b, model: T, memory_mib: 1000, power: {idle_watts: 10, max_watts: 110}}
processes:
  - pid: 1
    usage: [{unit: GPU-a, memory_mib: 100, sm_pct: 50, mem_pct: 70}]
  - pid: 2
    start_s: 10
    usage: [{unit: GPU-a, memory_mib: 100, sm_pct: 80, mem: [{at_s: 0, pct: 60}, {at_s: 15.5, pct: 95}]}]
  - pid: 3
    usage: [{unit: GPU-b, memory_mib: 1, sm_pct: 40}]
)";

TEST(Truth, MemoryTrafficFollowsTheTimeGivenAndFitsTheBandwidth) {
  const auto s = Load(kTraffic);
  EXPECT_DOUBLE_EQ(UnitAt(s, "GPU-a", 5).memory_busy, 0.7);
  const auto mid = UnitAt(s, "GPU-a", 12);
  EXPECT_DOUBLE_EQ(mid.processes[0].memory_share, 0.7 / 1.3);
  EXPECT_DOUBLE_EQ(mid.processes[1].memory_share, 0.6 / 1.3);
  EXPECT_DOUBLE_EQ(mid.memory_busy, 1.0);
  // From 15.5 s B asks 95 %: (0.7 + 0.95) / 1.3 > 1, scaled again to the bandwidth.
  const auto late = UnitAt(s, "GPU-a", 16);
  EXPECT_DOUBLE_EQ(late.memory_busy, 1.0);
  EXPECT_DOUBLE_EQ(late.processes[0].memory_share, 0.7 / 1.65);
  EXPECT_DOUBLE_EQ(UnitAt(s, "GPU-b", 1).memory_busy, 0.2);
  // The integral cuts at 15.5 s (a change of memory duty alone): 10 × 0.7 + 5.5 × 1 + 4.5 × 1.
  EXPECT_NEAR(UnitMemoryBusySeconds(s, "GPU-a", 0, 20), 7.0 + 5.5 + 4.5, 1e-12);
  const auto cuts = UnitChangeTimes(s, "GPU-a", 0, 20);
  EXPECT_NE(std::find(cuts.begin(), cuts.end(), 15.5), cuts.end());
}

}  // namespace
}  // namespace gpumeter::scenario
