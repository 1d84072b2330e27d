// Memory traffic (attribute.h, Row::memory_busy_*): split by the compute rules from the memory
// signal, worked by hand. Conservation, unknown and bounds as compute's.
#include <gtest/gtest.h>

#include "core/attribution/attribute.h"
#include "core/attribution/observe.h"

namespace gpumeter::attribution {
namespace {

const Owner kA{OwnerKind::kContainer, "ns", "a", "c"};
const Owner kB{OwnerKind::kContainer, "ns", "b", "c"};

const Row* Find(const UnitLedger& l, OwnerKind kind, const std::string& pod = "") {
  for (const auto& r : l.rows)
    if (r.owner.kind == kind && r.owner.pod == pod) return &r;
  return nullptr;
}
double Traffic(const UnitLedger& l, OwnerKind k, const std::string& pod = "") {
  const Row* r = Find(l, k, pod);
  return r ? r->memory_busy_seconds : 0;
}
double TrafficSum(const UnitLedger& l) {
  double s = 0;
  for (const auto& r : l.rows) s += r.memory_busy_seconds;
  return s;
}

ProcessObservation Process(uint32_t pid, const Owner& o, std::optional<double> sm,
                           std::optional<double> memory_busy) {
  ProcessObservation p;
  p.pid = pid;
  p.owner = o;
  p.memory_bytes = 1ull << 30;
  p.sm_fraction = sm;
  p.memory_busy_fraction = memory_busy;
  return p;
}

UnitObservation Unit(SharingMode mode, std::vector<ProcessObservation> ps) {
  UnitObservation u;
  u.uuid = "GPU-1";
  u.mode = mode;
  u.memory_total_bytes = 80ull << 30;
  u.memory_used_bytes = 2ull << 30;
  u.busy_fraction = 0.9;
  u.processes = std::move(ps);
  return u;
}

// A memory-bound server (10 % SM, 60 % memory) beside a compute-bound trainer (80 % SM, 15 %):
// per-process memUtil says whose traffic it was; the rest of the 20 s is idle memory.
TEST(MemoryTraffic, PerProcessSamplesSplitTheMemoryLikeCompute) {
  UnitObservation u =
      Unit(SharingMode::kTimeSlicing, {Process(1, kA, 0.10, 0.60), Process(2, kB, 0.80, 0.15)});
  u.memory_signal = MemorySignal::kProcessMemUtil;
  const auto l = AttributeUnit(u, 20);
  EXPECT_EQ(l.memory_signal, MemorySignal::kProcessMemUtil);
  EXPECT_DOUBLE_EQ(Traffic(l, OwnerKind::kContainer, "a"), 12.0);
  EXPECT_DOUBLE_EQ(Traffic(l, OwnerKind::kContainer, "b"), 3.0);
  EXPECT_DOUBLE_EQ(Traffic(l, OwnerKind::kIdle), 5.0);
  EXPECT_NEAR(TrafficSum(l), 20.0, 1e-12);
  // Compute is its own measure: the same rows, other numbers.
  EXPECT_DOUBLE_EQ(Find(l, OwnerKind::kContainer, "a")->compute_seconds, 2.0);
  EXPECT_EQ(Find(l, OwnerKind::kContainer, "a")->memory_busy_bound_seconds, 0.0);
}

// No process runs and the signal is per-process samples: nobody moved memory.
TEST(MemoryTraffic, NoProcessIsIdleMemoryNotUnknown) {
  UnitObservation u = Unit(SharingMode::kExclusive, {});
  u.memory_signal = MemorySignal::kProcessMemUtil;
  const auto l = AttributeUnit(u, 10);
  EXPECT_DOUBLE_EQ(Traffic(l, OwnerKind::kIdle), 10.0);
  EXPECT_EQ(Traffic(l, OwnerKind::kUnattributed), 0.0);
}

// A MIG instance with GPM's DRAM bandwidth (55 %) and two notebooks: nothing says whose, so an
// even split, each within [0, 55 % of 10 s]: 2.75 s ± 2.75 s.
TEST(MemoryTraffic, AnInstancesBandwidthIsSplitEvenlyWithItsBound) {
  UnitObservation u = Unit(SharingMode::kMig, {Process(1, kA, std::nullopt, std::nullopt),
                                               Process(2, kB, std::nullopt, std::nullopt)});
  u.memory_busy_fraction = 0.55;
  u.memory_signal = MemorySignal::kGpmDramBandwidth;
  const auto l = AttributeUnit(u, 10);
  for (const char* pod : {"a", "b"}) {
    const Row* r = Find(l, OwnerKind::kContainer, pod);
    ASSERT_NE(r, nullptr);
    EXPECT_DOUBLE_EQ(r->memory_busy_seconds, 2.75);
    EXPECT_DOUBLE_EQ(r->memory_busy_bound_seconds, 2.75);
    EXPECT_TRUE(domain::IsComputeEstimate(r->memory_busy_rule));
  }
  EXPECT_DOUBLE_EQ(Traffic(l, OwnerKind::kIdle), 4.5);
  // One tenant alone is exact.
  u.processes.pop_back();
  const auto alone = AttributeUnit(u, 10);
  EXPECT_DOUBLE_EQ(Traffic(alone, OwnerKind::kContainer, "a"), 5.5);
  EXPECT_EQ(Find(alone, OwnerKind::kContainer, "a")->memory_busy_bound_seconds, 0.0);
}

// No signal (an A100 MIG instance without DCGM): unattributed holds the time, and the tenant's
// traffic is unknown for all of it, never 0 measured.
TEST(MemoryTraffic, NoSignalIsUnknownToTheTenant) {
  UnitObservation u = Unit(SharingMode::kMig, {Process(1, kA, std::nullopt, std::nullopt)});
  u.memory_signal = MemorySignal::kNone;
  const auto l = AttributeUnit(u, 10);
  EXPECT_EQ(l.memory_signal, MemorySignal::kNone);
  EXPECT_DOUBLE_EQ(Traffic(l, OwnerKind::kUnattributed), 10.0);
  EXPECT_DOUBLE_EQ(Find(l, OwnerKind::kContainer, "a")->memory_busy_unknown_seconds, 10.0);
  EXPECT_EQ(Traffic(l, OwnerKind::kContainer, "a"), 0.0);
}

// Samples of 12 s of a 15 s interval (the driver lost 3 s): the covered part's share stands for
// the whole interval, and each may have moved memory for none to all of the lost 3 s.
TEST(MemoryTraffic, LostSamplesAreStoodForWithTheWholeLostPartAsBound) {
  UnitObservation u =
      Unit(SharingMode::kTimeSlicing, {Process(1, kA, 0.2, 0.40), Process(2, kB, 0.3, 0.10)});
  u.memory_signal = MemorySignal::kProcessMemUtil;
  u.samples_uncovered_seconds = 3;
  for (auto& p : u.processes) p.memory_busy_extrapolated = true;
  const auto l = AttributeUnit(u, 15);
  const Row* a = Find(l, OwnerKind::kContainer, "a");
  ASSERT_NE(a, nullptr);
  EXPECT_DOUBLE_EQ(a->memory_busy_seconds, 6.0);
  EXPECT_DOUBLE_EQ(a->memory_busy_bound_seconds, std::max(0.4 * 3, 3 - 0.4 * 3));
  EXPECT_DOUBLE_EQ(Find(l, OwnerKind::kContainer, "b")->memory_busy_bound_seconds, 3 - 0.1 * 3);
  EXPECT_DOUBLE_EQ(Traffic(l, OwnerKind::kIdle), 15 - 7.5);
  EXPECT_EQ(Traffic(l, OwnerKind::kUnattributed), 0.0);
  // The true traffic of the lost 3 s may be anything in [0, 3] for each: their worst cases.
  for (const double lost_a : {0.0, 3.0}) {
    const double truth = 0.4 * 12 + lost_a;
    EXPECT_LE(std::abs(truth - a->memory_busy_seconds), a->memory_busy_bound_seconds + 1e-12);
  }
}

TEST(MemoryTraffic, MergedIntervalsAddTheirTraffic) {
  UnitObservation u = Unit(SharingMode::kExclusive, {Process(1, kA, 0.5, 0.25)});
  u.memory_signal = MemorySignal::kProcessMemUtil;
  auto l = AttributeUnit(u, 10);
  u.processes[0].memory_busy_fraction = 0.75;
  MergeInto(l, AttributeUnit(u, 10));
  EXPECT_DOUBLE_EQ(Traffic(l, OwnerKind::kContainer, "a"), 10.0);
  EXPECT_NEAR(TrafficSum(l), 20.0, 1e-12);
}

gpu::DeviceSample Device() {
  gpu::DeviceSample d;
  d.uuid = "GPU-1";
  d.memory = gpu::MemoryInfo{80ull << 30, 2ull << 30, 0, 78ull << 30};
  d.processes = {{1, gpu::ProcessType::kCompute, 1ull << 30, {}, {}},
                 {2, gpu::ProcessType::kCompute, 1ull << 30, {}, {}}};
  d.process_util_window_start_us = 1'000'000;
  d.process_util_window_end_us = 2'000'000;
  d.process_util_period_us = 250'000;  // four periods in the window
  // PID 1: memUtil 60, 40 in two periods; PID 2: memory-quiet but busy.
  d.process_util = {{1, 1'250'000, 10, 60}, {1, 1'500'000, 10, 40}, {2, 1'750'000, 80, 0}};
  d.sm_active_ratio = 0.3;
  d.dram_bw_ratio = 0.9;  // another kind of measure: not mixed with memUtil
  d.utilization_memory_percent = 70;
  return d;
}

TEST(MemoryTraffic, ObserveTakesPerProcessMemUtilOverTheDevicesFigures) {
  const auto d = Device();
  const auto shares = MemoryBusyShares(d);
  EXPECT_DOUBLE_EQ(*SmShareOf(shares, 1), (60 + 40) / 100.0 / 4);
  EXPECT_DOUBLE_EQ(*SmShareOf(shares, 2), 0.0);
  const auto units = Observe(nullptr, d, 1.0, {});
  ASSERT_EQ(units.size(), 1u);
  EXPECT_EQ(units[0].memory_signal, MemorySignal::kProcessMemUtil);
  EXPECT_FALSE(units[0].memory_busy_fraction.has_value());
  ASSERT_EQ(units[0].processes.size(), 2u);
  EXPECT_DOUBLE_EQ(*units[0].processes[0].memory_busy_fraction, 0.25);
}

TEST(MemoryTraffic, WithoutPerProcessSamplesGpmThenUtilizationMemory) {
  auto d = Device();
  d.process_utilization_supported = false;
  d.process_util.clear();
  auto units = Observe(nullptr, d, 1.0, {});
  EXPECT_EQ(units[0].memory_signal, MemorySignal::kGpmDramBandwidth);
  EXPECT_DOUBLE_EQ(*units[0].memory_busy_fraction, 0.9);
  EXPECT_FALSE(units[0].memory_busy_is_instant);
  d.dram_bw_ratio.reset();
  units = Observe(nullptr, d, 1.0, {});
  EXPECT_EQ(units[0].memory_signal, MemorySignal::kDeviceMemoryUtil);
  EXPECT_DOUBLE_EQ(*units[0].memory_busy_fraction, 0.7);
  EXPECT_TRUE(units[0].memory_busy_is_instant);
  d.utilization_memory_percent.reset();
  units = Observe(nullptr, d, 1.0, {});
  EXPECT_EQ(units[0].memory_signal, MemorySignal::kNone);
}

TEST(MemoryTraffic, AMigInstanceTakesItsGpmBandwidth) {
  gpu::DeviceSample d;
  d.uuid = "GPU-1";
  d.mig_enabled = true;
  d.mig_total_slices = 7;
  gpu::MigInstanceSample m;
  m.uuid = "MIG-1";
  m.slices = 3;
  m.memory = gpu::MemoryInfo{40ull << 30, 1ull << 30, 0, 39ull << 30};
  m.dram_bw_ratio = 0.42;
  d.mig_instances = {m};
  m.uuid = "MIG-2";
  m.dram_bw_ratio.reset();  // no GPM (an A100): unknown
  d.mig_instances.push_back(m);
  const auto units = Observe(nullptr, d, 1.0, {});
  ASSERT_GE(units.size(), 2u);
  EXPECT_EQ(units[0].memory_signal, MemorySignal::kGpmDramBandwidth);
  EXPECT_DOUBLE_EQ(*units[0].memory_busy_fraction, 0.42);
  EXPECT_EQ(units[1].memory_signal, MemorySignal::kNone);
  EXPECT_FALSE(units[1].memory_busy_fraction.has_value());
}

TEST(MemoryTraffic, SignalNamesRoundTrip) {
  for (auto s :
       {MemorySignal::kNone, MemorySignal::kProcessMemUtil, MemorySignal::kDeviceMemoryUtil,
        MemorySignal::kGpmDramBandwidth, MemorySignal::kDcgmDramActive})
    EXPECT_EQ(domain::ParseMemorySignal(domain::ToString(s)), s);
  EXPECT_FALSE(domain::ParseMemorySignal("bandwidth").has_value());
  EXPECT_TRUE(domain::MeasuresTime(MemorySignal::kProcessMemUtil));
  EXPECT_FALSE(domain::MeasuresTime(MemorySignal::kGpmDramBandwidth));
}

}  // namespace
}  // namespace gpumeter::attribution
