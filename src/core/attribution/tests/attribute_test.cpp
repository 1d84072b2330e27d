// Worked examples per rule (the same ones as docs/attribution.md), computed by hand.
#include "core/attribution/attribute.h"

#include <algorithm>
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpumeter::attribution {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kGiB = 1ull << 30;
const Owner kA{OwnerKind::kContainer, "ns", "a", "c"};
const Owner kB{OwnerKind::kContainer, "ns", "b", "c"};
const Owner kC{OwnerKind::kContainer, "ns", "c", "c"};

UnitObservation MakeUnit(std::string uuid, SharingMode mode, uint64_t total,
                         std::optional<uint64_t> used, std::optional<uint64_t> reserved,
                         std::optional<double> busy, std::vector<ProcessObservation> processes) {
  UnitObservation u;
  u.uuid = std::move(uuid);
  u.mode = mode;
  u.memory_total_bytes = total;
  u.memory_used_bytes = used;
  u.memory_reserved_bytes = reserved;
  u.busy_fraction = busy;
  u.processes = std::move(processes);
  return u;
}

const Row* Find(const UnitLedger& l, OwnerKind kind, const std::string& pod = "") {
  for (const auto& r : l.rows)
    if (r.owner.kind == kind && r.owner.pod == pod) return &r;
  return nullptr;
}
double Mem(const UnitLedger& l, OwnerKind k, const std::string& pod = "") {
  const Row* r = Find(l, k, pod);
  return r ? r->memory_byte_seconds : 0;
}
double Cpu(const UnitLedger& l, OwnerKind k, const std::string& pod = "") {
  const Row* r = Find(l, k, pod);
  return r ? r->compute_seconds : 0;
}
// Row::compute_unknown_seconds of a container; -1 when it has no row at all.
double Unknown(const UnitLedger& l, const std::string& pod) {
  const Row* r = Find(l, OwnerKind::kContainer, pod);
  return r ? r->compute_unknown_seconds : -1;
}

TEST(Attribute, TimeSlicingWithSamplesBelowBusy) {
  // 80 GiB GPU, 1 GiB reserved, 40 GiB used: a 10, b 20, one process of unknown size.
  // Busy 70 %; samples a 30 %, b 25 %: 15 % of busy time has no owner.
  UnitObservation u =
      MakeUnit("GPU-1", SharingMode::kTimeSlicing, 80 * kGiB, 40 * kGiB, 1 * kGiB, 0.70,
               {{1, kA, 10 * kGiB, 0.30, {}},
                {2, kB, 20 * kGiB, 0.25, {}},
                {3, kC, std::nullopt, std::nullopt, {}}});
  const auto l = AttributeUnit(u, 10);
  EXPECT_EQ(l.mode, SharingMode::kTimeSlicing);
  EXPECT_DOUBLE_EQ(Mem(l, OwnerKind::kContainer, "a"), 10.0 * kGiB * 10);
  EXPECT_DOUBLE_EQ(Mem(l, OwnerKind::kContainer, "b"), 20.0 * kGiB * 10);
  EXPECT_DOUBLE_EQ(Mem(l, OwnerKind::kSystem), 1.0 * kGiB * 10);
  EXPECT_DOUBLE_EQ(Mem(l, OwnerKind::kUnattributed), 10.0 * kGiB * 10) << "40 used - 30 sized";
  EXPECT_DOUBLE_EQ(Mem(l, OwnerKind::kIdle), 39.0 * kGiB * 10);
  EXPECT_DOUBLE_EQ(Cpu(l, OwnerKind::kContainer, "a"), 3.0);
  EXPECT_DOUBLE_EQ(Cpu(l, OwnerKind::kContainer, "b"), 2.5);
  EXPECT_NEAR(Cpu(l, OwnerKind::kUnattributed), 1.5, 1e-12) << "not spread over a and b";
  EXPECT_NEAR(Cpu(l, OwnerKind::kIdle), 3.0, 1e-12);
  // Nothing measured about c: its row says only that its compute is unknown (up to the 1.5 s
  // nobody's samples cover), never a measured zero.
  const Row* c = Find(l, OwnerKind::kContainer, "c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->compute_seconds, 0.0);
  EXPECT_EQ(c->memory_byte_seconds, 0.0);
  EXPECT_NEAR(c->compute_unknown_seconds, 1.5, 1e-12);
  EXPECT_EQ(c->compute_rule, Rule::kNone);
  EXPECT_EQ(Find(l, OwnerKind::kContainer, "a")->compute_unknown_seconds, 0.0);
  EXPECT_THAT(ToString(Find(l, OwnerKind::kContainer, "a")->compute_rule),
              HasSubstr("per-process SM samples"));
}

TEST(Attribute, EnergyFollowsTheUnitsTime) {
  // 1000 J over 10 s; busy 70 %: a 30 %, b 25 %, unattributed 15 %, idle 30 %.
  UnitObservation u = MakeUnit("GPU-1", SharingMode::kTimeSlicing, 80 * kGiB, 40 * kGiB, 1 * kGiB,
                               0.70, {{1, kA, 10 * kGiB, 0.30, {}}, {2, kB, 20 * kGiB, 0.25, {}}});
  u.energy_joules = 1000;
  u.energy_rule = Rule::kEnergyCounterDelta;
  const auto l = AttributeUnit(u, 10);
  ASSERT_TRUE(l.energy_joules);
  EXPECT_NEAR(Find(l, OwnerKind::kContainer, "a")->energy_joules, 300, 1e-9);
  EXPECT_NEAR(Find(l, OwnerKind::kContainer, "b")->energy_joules, 250, 1e-9);
  EXPECT_NEAR(Find(l, OwnerKind::kUnattributed)->energy_joules, 150, 1e-9);
  EXPECT_NEAR(Find(l, OwnerKind::kIdle)->energy_joules, 300, 1e-9);
  EXPECT_EQ(Find(l, OwnerKind::kSystem)->energy_joules, 0.0)
      << "the reservation draws no compute time";
  EXPECT_STREQ(ToString(Find(l, OwnerKind::kContainer, "a")->energy_rule), "energy counter delta");
}

TEST(Attribute, SamplesAboveBusyAreScaledDown) {
  // Busy 60 %, samples 50 % + 40 % = 90 %: scaled by 60/90; never above 100 %.
  UnitObservation u = MakeUnit("GPU-1", SharingMode::kTimeSlicing, 16 * kGiB, 0, 0, 0.60,
                               {{1, kA, 0, 0.50, {}}, {2, kB, 0, 0.40, {}}});
  const auto l = AttributeUnit(u, 1);
  EXPECT_NEAR(Cpu(l, OwnerKind::kContainer, "a"), 0.5 * 60 / 90, 1e-12);
  EXPECT_NEAR(Cpu(l, OwnerKind::kContainer, "b"), 0.4 * 60 / 90, 1e-12);
  EXPECT_NEAR(Cpu(l, OwnerKind::kIdle), 0.4, 1e-12);
  EXPECT_THAT(ToString(Find(l, OwnerKind::kContainer, "a")->compute_rule),
              HasSubstr("scaled to busy"));
}

TEST(Attribute, MpsFallsBackToThreadsThenAnEvenSplit) {
  UnitObservation u = MakeUnit("GPU-1", SharingMode::kMps, 80 * kGiB, 40 * kGiB, 0, 0.50,
                               {{1, kA, 10 * kGiB, {}, 0.25}, {2, kB, 30 * kGiB, {}, 0.75}});
  auto l = AttributeUnit(u, 4);
  EXPECT_DOUBLE_EQ(Cpu(l, OwnerKind::kContainer, "a"), 0.5 * 0.25 * 4);
  EXPECT_DOUBLE_EQ(Cpu(l, OwnerKind::kContainer, "b"), 0.5 * 0.75 * 4);
  EXPECT_THAT(ToString(Find(l, OwnerKind::kContainer, "a")->compute_rule),
              HasSubstr("active-thread percentage"));
  // One client without a limit: nothing says who ran, so an even split (memory held is no sign
  // of time used).
  u.processes[1].mps_thread_fraction.reset();
  l = AttributeUnit(u, 4);
  EXPECT_DOUBLE_EQ(Cpu(l, OwnerKind::kContainer, "a"), 0.5 * 0.5 * 4);
  EXPECT_THAT(ToString(Find(l, OwnerKind::kContainer, "b")->compute_rule), HasSubstr("even split"));
}

TEST(Attribute, MigWithoutActivityIsUnknownNotIdle) {
  UnitObservation u = MakeUnit("MIG-1", SharingMode::kMig, 10 * kGiB, 3 * kGiB, {}, std::nullopt,
                               {{1, kA, 3 * kGiB, {}, {}}});
  auto l = AttributeUnit(u, 2);
  EXPECT_DOUBLE_EQ(Cpu(l, OwnerKind::kUnattributed), 2.0);
  EXPECT_EQ(Cpu(l, OwnerKind::kIdle), 0.0);
  EXPECT_THAT(ToString(Find(l, OwnerKind::kUnattributed)->compute_rule),
              HasSubstr("activity unknown"));
  u.busy_fraction = 0.7;  // GPM SM activity of the instance
  l = AttributeUnit(u, 2);
  EXPECT_DOUBLE_EQ(Cpu(l, OwnerKind::kContainer, "a"), 1.4);
  EXPECT_THAT(ToString(Find(l, OwnerKind::kContainer, "a")->compute_rule),
              HasSubstr("single tenant"));
}

TEST(Attribute, UnknownActivityLeavesItsTenantsComputeUnknownNotZero) {
  // A100 MIG instance without DCGM: two tenants with processes, a third holding it idle.
  UnitObservation u = MakeUnit("MIG-1", SharingMode::kMig, 10 * kGiB, 5 * kGiB, {}, std::nullopt,
                               {{1, kA, 3 * kGiB, {}, {}},
                                {2, kA, 1 * kGiB, {}, {}},
                                {3, kB, 1 * kGiB, {}, {}},
                                {4, std::nullopt, 0, {}, {}}});
  u.holders = {{kA, 1}, {kC, 1}};
  auto l = AttributeUnit(u, 2);
  EXPECT_DOUBLE_EQ(Cpu(l, OwnerKind::kUnattributed), 2.0) << "the time itself";
  EXPECT_EQ(Cpu(l, OwnerKind::kContainer, "a"), 0.0);
  EXPECT_DOUBLE_EQ(Unknown(l, "a"), 2.0) << "once per owner, not per process";
  EXPECT_DOUBLE_EQ(Unknown(l, "b"), 2.0);
  EXPECT_EQ(Unknown(l, "c"), 0.0) << "no process: its compute is known to be 0";
  EXPECT_EQ(Find(l, OwnerKind::kUnattributed)->compute_unknown_seconds, 0.0);

  // No readings at all (GPU lost): whoever held it may have used it.
  u.processes.clear();
  u.unknown_reason = Rule::kGpuLost;
  l = AttributeUnit(u, 2);
  EXPECT_DOUBLE_EQ(Unknown(l, "a"), 2.0);
  EXPECT_DOUBLE_EQ(Unknown(l, "c"), 2.0);
  EXPECT_EQ(Unknown(l, "b"), -1.0);

  // Activity known: nothing unknown.
  u = MakeUnit("MIG-1", SharingMode::kMig, 10 * kGiB, 3 * kGiB, {}, 0.4,
               {{1, kA, 3 * kGiB, {}, {}}});
  l = AttributeUnit(u, 2);
  EXPECT_DOUBLE_EQ(Cpu(l, OwnerKind::kContainer, "a"), 0.8);
  EXPECT_EQ(Unknown(l, "a"), 0.0);
}

TEST(Attribute, BusyTimeNoSignalCanSplitIsUnknownToEachTenant) {
  // Two tenants, busy 60 %, no per-process samples and no memory to weigh by.
  UnitObservation u = MakeUnit("GPU-1", SharingMode::kTimeSlicing, 8 * kGiB, 2 * kGiB, 0, 0.6,
                               {{1, kA, std::nullopt, {}, {}}, {2, kB, std::nullopt, {}, {}}});
  auto l = AttributeUnit(u, 10);
  EXPECT_DOUBLE_EQ(Cpu(l, OwnerKind::kUnattributed), 6.0);
  EXPECT_DOUBLE_EQ(Unknown(l, "a"), 6.0);
  EXPECT_DOUBLE_EQ(Unknown(l, "b"), 6.0);
  // Samples for part of the interval only (the driver lost 3 s of them): the lost time's owner
  // is unknown; busy 20 % sampled.
  u = MakeUnit("GPU-1", SharingMode::kTimeSlicing, 8 * kGiB, 2 * kGiB, 0, std::nullopt,
               {{1, kA, kGiB, 0.2, {}}, {2, kB, kGiB, 0.0, {}}});
  u.samples_uncovered_seconds = 3;
  l = AttributeUnit(u, 10);
  EXPECT_DOUBLE_EQ(Cpu(l, OwnerKind::kContainer, "a"), 2.0);
  EXPECT_DOUBLE_EQ(Unknown(l, "a"), 3.0);
  EXPECT_DOUBLE_EQ(Unknown(l, "b"), 3.0);
  // One process sampled (a: 30 %), one not (b: seen at one end only), busy 60 %: what the
  // samples leave over may be b's; a's is measured.
  u = MakeUnit("GPU-1", SharingMode::kTimeSlicing, 8 * kGiB, 2 * kGiB, 0, 0.6,
               {{1, kA, kGiB, 0.3, {}}, {2, kB, kGiB, std::nullopt, {}}});
  l = AttributeUnit(u, 10);
  EXPECT_DOUBLE_EQ(Cpu(l, OwnerKind::kUnattributed), 3.0);
  EXPECT_EQ(Unknown(l, "a"), 0.0);
  EXPECT_DOUBLE_EQ(Unknown(l, "b"), 3.0);
}

TEST(Attribute, UnknownContainerAndUnknownMemoryState) {
  // A process whose container is unknown is unattributed; with `used` unknown, what is not
  // sized is unattributed too (not idle).
  UnitObservation u = MakeUnit("GPU-1", SharingMode::kExclusive, 8 * kGiB, std::nullopt,
                               std::nullopt, 0.5, {{1, std::nullopt, 2 * kGiB, 0.5, {}}});
  const auto l = AttributeUnit(u, 1);
  EXPECT_DOUBLE_EQ(Mem(l, OwnerKind::kUnattributed), 8.0 * kGiB);
  EXPECT_EQ(Mem(l, OwnerKind::kIdle), 0.0);
  EXPECT_DOUBLE_EQ(Cpu(l, OwnerKind::kUnattributed), 0.5);
}

TEST(Attribute, ProcessMemoryAboveUsedIsScaled) {
  UnitObservation u = MakeUnit("GPU-1", SharingMode::kTimeSlicing, 8 * kGiB, 4 * kGiB, 0, 0,
                               {{1, kA, 3 * kGiB, 0, {}}, {2, kB, 3 * kGiB, 0, {}}});
  const auto l = AttributeUnit(u, 1);
  EXPECT_DOUBLE_EQ(Mem(l, OwnerKind::kContainer, "a"), 2.0 * kGiB);
  EXPECT_DOUBLE_EQ(Mem(l, OwnerKind::kIdle), 4.0 * kGiB);
}

}  // namespace
}  // namespace gpumeter::attribution

namespace gpumeter::attribution {
namespace {

double Bound(const UnitLedger& l, const std::string& pod) {
  const Row* r = Find(l, OwnerKind::kContainer, pod);
  return r ? r->compute_bound_seconds : -1;
}

TEST(AttributeBounds, ASplitByAProxyIsBoundedByTheBusyTimeEachMayHaveRun) {
  // A 3g instance time-sliced by two notebooks holding 10 and 30 GiB, busy 60 % of 10 s, no
  // per-process signal: either may have run anything from none to all 6 s. The even split is
  // the middle of that, so its bound is the least any split can claim: 3 ± 3 each.
  UnitObservation u = MakeUnit("MIG-1", SharingMode::kMig, 40 * kGiB, 40 * kGiB, {}, 0.6,
                               {{1, kA, 10 * kGiB, {}, {}}, {2, kB, 30 * kGiB, {}, {}}});
  auto l = AttributeUnit(u, 10);
  EXPECT_DOUBLE_EQ(Cpu(l, OwnerKind::kContainer, "a"), 3.0);
  EXPECT_DOUBLE_EQ(Bound(l, "a"), 3.0);  // the truth in [0, 6]
  EXPECT_DOUBLE_EQ(Cpu(l, OwnerKind::kContainer, "b"), 3.0);
  EXPECT_DOUBLE_EQ(Bound(l, "b"), 3.0);
  EXPECT_EQ(Find(l, OwnerKind::kIdle)->compute_bound_seconds, 0.0);  // measured: busy is known

  // One tenant alone: its time is the busy time, exactly.
  u.processes.pop_back();
  l = AttributeUnit(u, 10);
  EXPECT_DOUBLE_EQ(Cpu(l, OwnerKind::kContainer, "a"), 6.0);
  EXPECT_EQ(Bound(l, "a"), 0.0);

  // Three without memory readings: an even split, 2 s each, each within [0, 6].
  u = MakeUnit("MIG-1", SharingMode::kMig, 40 * kGiB, {}, {}, 0.6,
               {{1, kA, {}, {}, {}}, {2, kB, {}, {}, {}}, {3, kC, {}, {}, {}}});
  l = AttributeUnit(u, 10);
  EXPECT_EQ(Find(l, OwnerKind::kContainer, "c")->compute_rule, Rule::kEvenSplitNoSamples);
  EXPECT_DOUBLE_EQ(Cpu(l, OwnerKind::kContainer, "c"), 2.0);
  EXPECT_DOUBLE_EQ(Bound(l, "c"), 4.0);

  // MPS thread shares: the same claim (a share of SMs limits no one's time), and the estimate
  // off the middle makes the bound wider.
  u = MakeUnit("GPU-1", SharingMode::kMps, 80 * kGiB, 40 * kGiB, 0, 0.5,
               {{1, kA, 10 * kGiB, {}, 0.25}, {2, kB, 30 * kGiB, {}, 0.75}});
  l = AttributeUnit(u, 4);
  EXPECT_DOUBLE_EQ(Bound(l, "a"), 1.5);  // est 0.5 of 2 s busy
  EXPECT_DOUBLE_EQ(Bound(l, "b"), 1.5);  // est 1.5

  // Per-process samples are a measurement: no bound.
  u = MakeUnit("GPU-1", SharingMode::kTimeSlicing, 80 * kGiB, 40 * kGiB, 0, 0.5,
               {{1, kA, 10 * kGiB, 0.2, {}}, {2, kB, 30 * kGiB, 0.3, {}}});
  l = AttributeUnit(u, 4);
  EXPECT_EQ(Bound(l, "a"), 0.0);
  EXPECT_EQ(Bound(l, "b"), 0.0);
}

TEST(AttributeBounds, TheEnergyOfAnEstimatedSplitIsBoundedToo) {
  // The two notebooks of the 3g instance again, 600 J over its 10 s (busy 6 s): each one's energy
  // follows its estimated 3 s, so it is off by what its time may be off (± 3 s) at the most a busy
  // second can have drawn: all 600 J over the 6 busy s (idle power included) = 100 W.
  UnitObservation u = MakeUnit("MIG-1", SharingMode::kMig, 40 * kGiB, 40 * kGiB, {}, 0.6,
                               {{1, kA, 10 * kGiB, {}, {}}, {2, kB, 30 * kGiB, {}, {}}});
  u.energy_joules = 600;
  u.energy_rule = Rule::kMigIdleBySize;
  auto l = AttributeUnit(u, 10);
  const Row* a = Find(l, OwnerKind::kContainer, "a");
  ASSERT_NE(a, nullptr);
  EXPECT_DOUBLE_EQ(a->energy_joules, 180);  // its 3 s of 10 at the mean
  EXPECT_DOUBLE_EQ(a->energy_bound_joules, 3 * 100.0);
  EXPECT_EQ(Find(l, OwnerKind::kIdle)->energy_bound_joules, 0.0) << "idle time is measured";
  // Alone, its time and so its energy are measured: no bound.
  u.processes.pop_back();
  l = AttributeUnit(u, 10);
  EXPECT_EQ(Find(l, OwnerKind::kContainer, "a")->energy_bound_joules, 0.0);
  // Energy unknown: no bound claimed on it either.
  u.energy_joules.reset();
  u.processes.push_back({2, kB, 30 * kGiB, {}, {}});
  l = AttributeUnit(u, 10);
  EXPECT_EQ(Find(l, OwnerKind::kContainer, "a")->energy_bound_joules, 0.0);
}

TEST(AttributeBounds, EveryPossibleTruthOfASplitLiesWithinItsBound) {
  // Any way the busy time could have been shared among the tenants (sampled on a grid, corners
  // included): each tenant's estimate is within its bound of it. MPS thread shares put the
  // estimates off the middle, the harder case.
  UnitObservation u = MakeUnit(
      "GPU-1", SharingMode::kMps, 40 * kGiB, 40 * kGiB, {}, 0.8,
      {{1, kA, 5 * kGiB, {}, 0.1}, {2, kB, 15 * kGiB, {}, 0.3}, {3, kC, 20 * kGiB, {}, 0.6}});
  const auto l = AttributeUnit(u, 15);
  const double busy = 0.8 * 15;
  int judged = 0;
  for (int i = 0; i <= 20; ++i)
    for (int j = 0; i + j <= 20; ++j) {
      const double truth[] = {busy * i / 20, busy * j / 20, busy * (20 - i - j) / 20};
      const char* pods[] = {"a", "b", "c"};
      for (int k = 0; k < 3; ++k) {
        EXPECT_LE(std::abs(Cpu(l, OwnerKind::kContainer, pods[k]) - truth[k]),
                  Bound(l, pods[k]) + 1e-12)
            << pods[k] << " truth " << truth[k];
        ++judged;
      }
    }
  EXPECT_EQ(judged, 3 * 231);
  // And the bound is no wider than it must be: the corner where a tenant ran nothing, or all,
  // reaches it.
  for (const char* pod : {"a", "b", "c"}) {
    const double est = Cpu(l, OwnerKind::kContainer, pod);
    EXPECT_DOUBLE_EQ(Bound(l, pod), std::max(est, busy - est)) << pod;
  }
}

TEST(AttributeBounds, ExtrapolatedSamplesAreBoundedByTheUncoveredTime) {
  // 10 s, busy 50 % by utilization.gpu (one driver period's reading, not the interval's); the
  // driver lost 4 s of samples. a's covered share 30 %, b's 10 %, c listed without a sample in
  // the covered part: each may have run none to all of the 4 s.
  UnitObservation u =
      MakeUnit("GPU-1", SharingMode::kTimeSlicing, 80 * kGiB, 40 * kGiB, 0, 0.5,
               {{1, kA, 10 * kGiB, 0.3, {}}, {2, kB, 10 * kGiB, 0.1, {}}, {3, kC, kGiB, 0.0, {}}});
  u.busy_is_instant = true;
  u.samples_uncovered_seconds = 4;
  for (auto& p : u.processes) p.sm_extrapolated = true;
  const auto l = AttributeUnit(u, 10);
  EXPECT_DOUBLE_EQ(Cpu(l, OwnerKind::kContainer, "a"), 3.0);
  EXPECT_DOUBLE_EQ(Bound(l, "a"), 2.8);  // 1.2 s stood for the lost part; the truth's in [0, 4]
  EXPECT_DOUBLE_EQ(Bound(l, "b"), 3.6);
  EXPECT_DOUBLE_EQ(Bound(l, "c"), 4.0);
  EXPECT_EQ(Cpu(l, OwnerKind::kContainer, "c"), 0.0);

  // Lost time longer than the busy time: nobody ran more than the busy time in it.
  u.samples_uncovered_seconds = 8;
  u.busy_fraction = 0.4;
  const auto tight = AttributeUnit(u, 10);
  EXPECT_DOUBLE_EQ(Bound(tight, "c"), 4.0);
}

// The same with the interval's own busy time (GPM): it says how much ran while the samples were
// lost, L = 5 - (1.8 + 0.6) = 2.6 s, which goes to the tenants by their covered rates (3 : 1);
// each may have run none to all of L.
TEST(AttributeBounds, LostSamplesBusyTimeComesFromTheUnitsOwnBusyTime) {
  UnitObservation u =
      MakeUnit("GPU-1", SharingMode::kTimeSlicing, 80 * kGiB, 40 * kGiB, 0, 0.5,
               {{1, kA, 10 * kGiB, 0.3, {}}, {2, kB, 10 * kGiB, 0.1, {}}, {3, kC, kGiB, 0.0, {}}});
  u.samples_uncovered_seconds = 4;
  for (auto& p : u.processes) p.sm_extrapolated = true;
  const auto l = AttributeUnit(u, 10);
  EXPECT_DOUBLE_EQ(Cpu(l, OwnerKind::kContainer, "a"), 1.8 + 2.6 * 0.75);
  EXPECT_DOUBLE_EQ(Cpu(l, OwnerKind::kContainer, "b"), 0.6 + 2.6 * 0.25);
  EXPECT_EQ(Cpu(l, OwnerKind::kContainer, "c"), 0.0);
  EXPECT_NEAR(Cpu(l, OwnerKind::kUnattributed), 0.0, 1e-12) << "all the busy time is placed";
  EXPECT_DOUBLE_EQ(Bound(l, "a"), 2.6 * 0.75);
  EXPECT_DOUBLE_EQ(Bound(l, "b"), 2.6 * 0.75);
  EXPECT_DOUBLE_EQ(Bound(l, "c"), 2.6);
  // Every way the 2.6 s could have been shared among the three lies within each one's bound.
  for (double xa = 0; xa <= 2.6 + 1e-9; xa += 0.1)
    for (double xb = 0; xa + xb <= 2.6 + 1e-9; xb += 0.1) {
      const double xc = 2.6 - xa - xb;
      EXPECT_LE(std::abs(Cpu(l, OwnerKind::kContainer, "a") - (1.8 + xa)), Bound(l, "a") + 1e-9);
      EXPECT_LE(std::abs(Cpu(l, OwnerKind::kContainer, "b") - (0.6 + xb)), Bound(l, "b") + 1e-9);
      EXPECT_LE(std::abs(Cpu(l, OwnerKind::kContainer, "c") - xc), Bound(l, "c") + 1e-9);
    }

  // One tenant alone: its busy time is the unit's, whatever the samples lost.
  UnitObservation one = MakeUnit("GPU-2", SharingMode::kExclusive, 80 * kGiB, 40 * kGiB, 0, 0.2,
                                 {{1, kA, 10 * kGiB, 0.0, {}}});
  one.samples_uncovered_seconds = 9;
  one.processes[0].sm_extrapolated = true;
  const auto alone = AttributeUnit(one, 15);
  EXPECT_DOUBLE_EQ(Cpu(alone, OwnerKind::kContainer, "a"), 3.0) << "was 0: a burst the ring lost";
  EXPECT_DOUBLE_EQ(Bound(alone, "a"), 3.0) << "a process nobody listed may have run it";

  // Samples showing more than the unit's busy time are scaled to it: nothing is left for L.
  UnitObservation over = MakeUnit("GPU-3", SharingMode::kTimeSlicing, 80 * kGiB, 40 * kGiB, 0, 0.2,
                                  {{1, kA, 10 * kGiB, 0.4, {}}, {2, kB, 10 * kGiB, 0.2, {}}});
  over.samples_uncovered_seconds = 5;
  for (auto& p : over.processes) p.sm_extrapolated = true;
  const auto scaled = AttributeUnit(over, 10);
  EXPECT_DOUBLE_EQ(
      Cpu(scaled, OwnerKind::kContainer, "a") + Cpu(scaled, OwnerKind::kContainer, "b"), 2.0);
  EXPECT_DOUBLE_EQ(Bound(scaled, "a"), 0.0);
}

// The lost part's busy time L comes from two windows that need not end together (the device's
// between passes, the samples' between period boundaries): with the driver's period known, each
// share of L may be two periods more than L allows. The example above with 1/6 s periods:
// L = 2.6 s, and each bound reaches to L + 1/3 s (at most the 4 s lost).
TEST(AttributeBounds, TheLostBusyTimeIsKnownToTwoDriverPeriods) {
  UnitObservation u = MakeUnit("GPU-1", SharingMode::kTimeSlicing, 80 * kGiB, 40 * kGiB, 0, 0.5,
                               {{1, kA, 10 * kGiB, 0.3, {}}, {2, kB, 10 * kGiB, 0.1, {}}});
  u.samples_uncovered_seconds = 4;
  u.samples_period_seconds = 1.0 / 6;
  for (auto& p : u.processes) p.sm_extrapolated = true;
  const auto l = AttributeUnit(u, 10);
  EXPECT_DOUBLE_EQ(Cpu(l, OwnerKind::kContainer, "a"), 1.8 + 2.6 * 0.75)
      << "the estimate is as before";
  EXPECT_DOUBLE_EQ(Bound(l, "a"), 2.6 * 0.75);  // max(1.95, 2.6 + 1/3 - 1.95)
  EXPECT_DOUBLE_EQ(Bound(l, "b"), 2.6 + 1.0 / 3 - 2.6 * 0.25);
  // At most the lost seconds: a period as long as the interval adds no more than U.
  u.samples_period_seconds = 10;
  EXPECT_DOUBLE_EQ(Bound(AttributeUnit(u, 10), "b"), 4 - 2.6 * 0.25);
}

// Energy follows each row's time at the power drawn in it. 10 s, 2000 J (mean 200 W), busy 40 %:
// a 20 % of the time at 650 W, b 10 % at 400 W, a process nobody owns 10 % (no power known: the
// mean), idle 60 % at 80 W. Weights 2 × 650, 1 × 400, 1 × 200, 6 × 80: 2380.
TEST(AttributeEnergy, EachRowsTimeIsChargedThePowerDrawnInIt) {
  UnitObservation u = MakeUnit("GPU-1", SharingMode::kTimeSlicing, 80 * kGiB, 40 * kGiB, 0, 0.4,
                               {{1, kA, 10 * kGiB, 0.2, {}}, {2, kB, 10 * kGiB, 0.1, {}}});
  u.processes.push_back({3, std::nullopt, kGiB, 0.1, {}});
  u.processes[0].busy_watts = 650;
  u.processes[1].busy_watts = 400;
  u.idle_time_watts = 80;
  u.energy_joules = 2000;
  const auto l = AttributeUnit(u, 10);
  auto energy = [&l](OwnerKind k, const std::string& pod = "") {
    const Row* r = Find(l, k, pod);
    return r ? r->energy_joules : 0.0;
  };
  EXPECT_DOUBLE_EQ(energy(OwnerKind::kContainer, "a"), 2000 * 1300 / 2380.0);
  EXPECT_DOUBLE_EQ(energy(OwnerKind::kContainer, "b"), 2000 * 400 / 2380.0);
  EXPECT_DOUBLE_EQ(energy(OwnerKind::kUnattributed), 2000 * 200 / 2380.0);
  EXPECT_DOUBLE_EQ(energy(OwnerKind::kIdle), 2000 * 480 / 2380.0);
  double sum = 0;
  for (const auto& r : l.rows) sum += r.energy_joules;
  EXPECT_NEAR(sum, 2000, 1e-9) << "conservation";
  // Without any power sample, energy follows time at the mean power, as before.
  u.processes[0].busy_watts.reset();
  u.processes[1].busy_watts.reset();
  u.idle_time_watts.reset();
  const auto plain = AttributeUnit(u, 10);
  EXPECT_DOUBLE_EQ(Find(plain, OwnerKind::kContainer, "a")->energy_joules, 400);
}

TEST(AttributeBounds, MergedIntervalsAddTheirBounds) {
  UnitObservation u = MakeUnit("MIG-1", SharingMode::kMig, 40 * kGiB, 40 * kGiB, {}, 0.6,
                               {{1, kA, 10 * kGiB, {}, {}}, {2, kB, 30 * kGiB, {}, {}}});
  auto l = AttributeUnit(u, 10);
  MergeInto(l, AttributeUnit(u, 5));
  EXPECT_DOUBLE_EQ(Bound(l, "a"), 3 + 1.5);
  EXPECT_DOUBLE_EQ(Cpu(l, OwnerKind::kContainer, "a"), 3 + 1.5);
}

}  // namespace
}  // namespace gpumeter::attribution
