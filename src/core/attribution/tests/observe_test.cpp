#include "core/attribution/observe.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/attribution/attribute.h"
#include "core/attribution/tests/node_spec.h"

namespace gpumeter::attribution {
namespace {

using test_support::FedAccountant;
using test_support::NodeSpec;

gpu::DeviceSample Device() {
  gpu::DeviceSample d;
  d.uuid = "GPU-1";
  d.memory = gpu::MemoryInfo{100, 40, 10, 50};
  d.utilization_gpu_percent = 60;
  d.processes = {{1, gpu::ProcessType::kCompute, 30, {}, {}},
                 {2, gpu::ProcessType::kCompute, 10, {}, {}}};
  // Window of 1 s, driver period 1/4 s: pid 1 busy in all 4 periods at 50 %, pid 2 in one at 40 %.
  d.process_util_window_start_us = 1'000'000;
  d.process_util_window_end_us = 2'000'000;
  d.process_util_period_us = 250'000;
  for (uint64_t k = 1; k <= 4; ++k) d.process_util.push_back({1, 1'000'000 + k * 250'000, 50, 0});
  d.process_util.push_back({2, 1'500'000, 40, 0});
  return d;
}

TEST(Observe, SmSharesCountPeriodsWithoutSamplesAsIdle) {
  const auto shares = SmShares(Device());
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_DOUBLE_EQ(SmShareOf(shares, 1).value_or(-1), 0.5);
  EXPECT_DOUBLE_EQ(SmShareOf(shares, 2).value_or(-1), 0.1);
  EXPECT_FALSE(SmShareOf(shares, 3).has_value());
}

// utilization.gpu is the driver's last period only: where the samples cover the window, theirs is
// the window's busy time, every sampled PID's (listed or not), at most 100 % per period. Device():
// periods at 50, 90, 50, 50 % with PID 9 (in no process list: a graphics process, or one that came
// and went between passes) at 30 % in the first: 0.675 of the window, where the one period said
// 100 %. PID 9's time is unattributed, not idle, and not spread over PIDs 1 and 2.
TEST(Observe, SamplesOverTheWindowOutweighOnePeriodsUtilization) {
  auto d = Device();
  d.utilization_gpu_percent = 100;
  d.process_util.push_back({9, 1'250'000, 30, 0});
  NodeSpec ctx;
  ctx.owner = [](uint32_t pid) -> std::optional<Owner> {
    return Owner{OwnerKind::kContainer, "ns", std::to_string(pid), "c"};
  };
  ctx.sharing = [](const std::string&) { return SharingMode::kTimeSlicing; };
  const auto units = Observe(&d, d, 1.0, ctx);
  ASSERT_EQ(units.size(), 1u);
  ASSERT_TRUE(units[0].busy_fraction);
  EXPECT_DOUBLE_EQ(*units[0].busy_fraction, 0.675);
  EXPECT_TRUE(units[0].busy_from_samples);
  const auto l = AttributeUnit(units[0], 1.0);
  std::map<std::string, double> cpu;
  for (const auto& r : l.rows)
    cpu[r.owner.kind == OwnerKind::kContainer ? r.owner.pod : ToString(r.owner.kind)] =
        r.compute_seconds;
  EXPECT_DOUBLE_EQ(cpu["1"], 0.5);
  EXPECT_DOUBLE_EQ(cpu["2"], 0.1);
  EXPECT_NEAR(cpu[ToString(OwnerKind::kUnattributed)], 0.075, 1e-12);
  EXPECT_NEAR(cpu[ToString(OwnerKind::kIdle)], 0.325, 1e-12);

  // Not under MPS (clients' shares add up past the busy time), not on an unknown period grid
  // (shares are then the samples' mean), not with samples lost: the device's figure stays.
  ctx.sharing = [](const std::string&) { return SharingMode::kMps; };
  EXPECT_DOUBLE_EQ(*Observe(&d, d, 1.0, ctx)[0].busy_fraction, 1.0);
  ctx.sharing = [](const std::string&) { return SharingMode::kTimeSlicing; };
  auto no_grid = d;
  no_grid.process_util_period_us.reset();
  EXPECT_DOUBLE_EQ(*Observe(&no_grid, no_grid, 1.0, ctx)[0].busy_fraction, 1.0);
  auto lost = d;
  lost.process_util_uncovered_us = 250'000;
  EXPECT_FALSE(Observe(&lost, lost, 1.0, ctx)[0].busy_from_samples);
}

// One pass over the samples gives what the two tables give apart: sampled PIDs by their samples,
// listed PIDs without a sample at 0 (once, though listed twice), in PID order.
TEST(Observe, BothSharesAtOnceAreEachTableApart) {
  auto d = Device();
  for (auto& u : d.process_util) u.memory_percent = u.sm_percent / 2;
  d.process_util.push_back({9, 1'250'000, 30, 20});                    // sampled, not listed
  d.processes.push_back({5, gpu::ProcessType::kCompute, 1, {}, {}});   // listed, no sample
  d.processes.push_back({5, gpu::ProcessType::kCompute, 1, {}, {}});   // listed twice
  d.processes.push_back({12, gpu::ProcessType::kCompute, 1, {}, {}});  // after every sampled PID
  const auto [sm, memory] = SmAndMemoryBusyShares(d);
  EXPECT_EQ(sm, SmShares(d));
  EXPECT_EQ(memory, MemoryBusyShares(d));
  const SmShareTable want{{1, 0.5}, {2, 0.1}, {5, 0.0}, {9, 0.075}, {12, 0.0}};
  EXPECT_EQ(sm, want);
  EXPECT_DOUBLE_EQ(SmShareOf(memory, 1).value_or(-1), 0.25);
  d.process_utilization_supported = false;
  EXPECT_TRUE(SmAndMemoryBusyShares(d).first.empty());
}

TEST(Observe, NoPerProcessUtilizationGivesNoShares) {
  auto d = Device();
  d.process_utilization_supported = false;
  EXPECT_TRUE(SmShares(d).empty());
}

TEST(Observe, MemoryIsTheMeanOfBothEnds) {
  auto before = Device();
  before.processes = {{1, gpu::ProcessType::kCompute, 20, {}, {}},
                      {3, gpu::ProcessType::kCompute, 8, {}, {}}};
  before.memory->used_bytes = 28;
  NodeSpec ctx;
  ctx.owner = [](uint32_t pid) -> std::optional<Owner> {
    return Owner{OwnerKind::kContainer, "ns", std::to_string(pid), "c"};
  };
  const auto units = Observe(&before, Device(), 1.0, ctx);
  ASSERT_EQ(units.size(), 1u);
  const auto& u = units[0];
  EXPECT_EQ(u.memory_used_bytes, 34u);
  EXPECT_DOUBLE_EQ(*u.busy_fraction, 0.6);
  std::map<uint32_t, uint64_t> mem;
  for (const auto& p : u.processes) mem[p.pid] = p.memory_bytes.value_or(999);
  EXPECT_EQ(mem.at(1), 25u);  // grew 20 -> 30
  EXPECT_EQ(mem.at(2), 5u);   // appeared: half the interval
  EXPECT_EQ(mem.at(3), 4u);   // exited: half the interval
}

// PID 1 exited and another container's process took the PID within the interval (started at
// 1.6 s, between the driver's samples at 1.5 and 1.75 s): two processes, each with its own owner,
// the memory it was seen with, and the SM samples of its own time.
TEST(Observe, AReusedPidIsTwoProcessesSplitAtTheNewOnesStart) {
  auto before = Device();
  before.processes = {{1, gpu::ProcessType::kCompute, 20, {}, {}},
                      {2, gpu::ProcessType::kCompute, 10, {}, {}}};
  NodeSpec ctx;
  const Owner old_owner{OwnerKind::kContainer, "batch", "job-0", "w"};
  const Owner new_owner{OwnerKind::kContainer, "nb", "jupyter", "k"};
  ctx.owner = [&](uint32_t pid) -> std::optional<Owner> {
    return pid == 1 ? new_owner : Owner{OwnerKind::kContainer, "ns", "two", "c"};
  };
  ctx.earlier = [&](uint32_t pid) -> std::optional<EarlierProcess> {
    if (pid != 1) return std::nullopt;
    return EarlierProcess{old_owner, 1'600'000};
  };
  auto now = Device();  // PID 1's samples at 1.25, 1.5 (the old one), 1.75, 2.0 s: 50 % each
  const auto units = Observe(&before, now, 1.0, ctx);
  ASSERT_EQ(units.size(), 1u);
  std::vector<const ProcessObservation*> one;
  for (const auto& p : units[0].processes)
    if (p.pid == 1) one.push_back(&p);
  ASSERT_EQ(one.size(), 2u);
  const auto& old_p = *one[0]->owner == old_owner ? *one[0] : *one[1];
  const auto& new_p = *one[0]->owner == old_owner ? *one[1] : *one[0];
  EXPECT_EQ(*old_p.owner, old_owner);
  EXPECT_EQ(*new_p.owner, new_owner);
  EXPECT_EQ(old_p.memory_bytes, 10u) << "seen with 20 at the start only: half the interval";
  EXPECT_EQ(new_p.memory_bytes, 15u) << "seen with 30 at the end only";
  EXPECT_DOUBLE_EQ(old_p.sm_fraction.value_or(-1), 0.25);
  EXPECT_DOUBLE_EQ(new_p.sm_fraction.value_or(-1), 0.25);
  const auto [a, b] = SmShareSplit(now, 1, 1'600'000);
  EXPECT_DOUBLE_EQ(*a + *b, SmShareOf(SmShares(now), 1).value_or(-1)) << "the parts add up";

  // The new one's start unknown: whose samples were whose is unknown, not guessed.
  ctx.earlier = [&](uint32_t pid) -> std::optional<EarlierProcess> {
    if (pid != 1) return std::nullopt;
    return EarlierProcess{old_owner, std::nullopt};
  };
  const auto unknown_start = Observe(&before, now, 1.0, ctx);  // kept: the loop reads into it
  ASSERT_EQ(unknown_start.size(), 1u);
  for (const auto& p : unknown_start[0].processes)
    if (p.pid == 1) {
      EXPECT_FALSE(p.sm_fraction.has_value());
      EXPECT_TRUE(p.memory_bytes.has_value()) << "memory is still each one's own";
    }
}

// A PID seen at the start only here, and held now by another process on another GPU: the earlier
// process's owner, not the new one's. A reused PID whose memory NVML could not read is still two
// processes. A reused PID without a sample, the driver's period not known yet: idle, not NaN.
TEST(Observe, AReusedPidKeepsTheEarlierOwnerWhereverTheNewOneRuns) {
  const Owner old_owner{OwnerKind::kContainer, "batch", "job-0", "w"};
  const Owner new_owner{OwnerKind::kContainer, "nb", "jupyter", "k"};
  NodeSpec ctx;
  ctx.owner = [&](uint32_t pid) -> std::optional<Owner> {
    return pid == 1 ? new_owner : Owner{OwnerKind::kContainer, "ns", "two", "c"};
  };
  ctx.earlier = [&](uint32_t pid) -> std::optional<EarlierProcess> {
    if (pid != 1) return std::nullopt;
    return EarlierProcess{old_owner, 1'600'000};
  };
  auto before = Device();
  auto now = Device();
  now.processes = {{2, gpu::ProcessType::kCompute, 10, {}, {}}};  // PID 1 now runs elsewhere
  std::erase_if(now.process_util,
                [](const auto& u) { return u.pid == 1 && u.timestamp_us > 1'600'000; });
  const auto units = Observe(&before, now, 1.0, ctx);
  ASSERT_EQ(units.size(), 1u);
  size_t ones = 0;
  for (const auto& p : units[0].processes)
    if (p.pid == 1) {
      ++ones;
      EXPECT_EQ(*p.owner, old_owner);
      EXPECT_EQ(p.memory_bytes, 15u);
    }
  EXPECT_EQ(ones, 1u);

  auto unread = Device();
  unread.processes[0].used_memory_bytes.reset();  // NVML_VALUE_NOT_AVAILABLE for PID 1
  const auto split = Observe(&before, unread, 1.0, ctx);
  std::vector<Owner> owners;
  for (const auto& p : split[0].processes)
    if (p.pid == 1) {
      owners.push_back(*p.owner);
      EXPECT_FALSE(p.memory_bytes.has_value());
    }
  EXPECT_EQ(owners.size(), 2u) << "still two processes";

  auto no_period = Device();
  no_period.process_util_period_us.reset();
  no_period.process_util.clear();
  const auto [a, b] = SmShareSplit(no_period, 1, 1'600'000);
  EXPECT_EQ(a, 0.0);
  EXPECT_EQ(b, 0.0);
}

// The driver lost the window's first half: with the device's busy time known, the covered half's
// shares stand for the whole window and say they are an estimate; without it, they stay shares
// of the whole window and the rest of the busy time is unattributed.
TEST(Observe, SamplesLostFromTheDriverBufferAreExtrapolatedOnlyWhenBusyIsKnown) {
  auto d = Device();                   // window 1 s, 4 periods; pid 1 sampled in all 4 at 50 %
  d.process_util_window_start_us = 0;  // now a 2 s window whose first second was lost
  d.process_util_uncovered_us = 1'000'000;
  EXPECT_TRUE(SmSharesExtrapolated(d));
  EXPECT_DOUBLE_EQ(SmShareOf(SmShares(d), 1).value_or(-1), 0.5);
  const auto units = Observe(nullptr, d, 2.0, {});
  EXPECT_DOUBLE_EQ(units[0].samples_uncovered_seconds, 1.0);
  for (const auto& p : units[0].processes) EXPECT_TRUE(p.sm_extrapolated) << p.pid;
  const auto ledger = AttributeUnit(units[0], 2.0);
  bool estimate = false;
  for (const auto& r : ledger.rows)
    estimate = estimate || domain::IsComputeEstimate(r.compute_rule);
  EXPECT_TRUE(estimate);
  EXPECT_DOUBLE_EQ(ledger.samples_uncovered_seconds, 1.0);
  d.utilization_gpu_percent.reset();  // busy unknown: no extrapolation
  EXPECT_FALSE(SmSharesExtrapolated(d));
  EXPECT_DOUBLE_EQ(SmShareOf(SmShares(d), 1).value_or(-1), 0.25);
  // Busy from the samples alone (pid 1 0.25, pid 2 0.05 of 2 s): the lost second is unknown, not
  // idle; idle is what is left, 0.4 s.
  const auto blind = AttributeUnit(Observe(nullptr, d, 2.0, {})[0], 2.0);
  double unknown = 0, idle = 0;
  for (const auto& r : blind.rows) {
    if (r.owner.kind == OwnerKind::kUnattributed) unknown += r.compute_seconds;
    if (r.owner.kind == OwnerKind::kIdle) idle += r.compute_seconds;
  }
  EXPECT_NEAR(unknown, 1.0 + 0.6, 1e-9) << "the lost second, plus the processes (no owner here)";
  EXPECT_NEAR(idle, 0.4, 1e-9);
}

TEST(Observe, UnknownMemoryStaysUnknownAndLostGpuHasNoUnits) {
  auto d = Device();
  d.processes[0].used_memory_bytes.reset();
  const auto units = Observe(nullptr, d, 1.0, {});
  EXPECT_FALSE(units[0].processes[0].memory_bytes.has_value());
  EXPECT_FALSE(units[0].processes[0].owner.has_value()) << "no owner source: unattributed";
  d.lost = true;
  EXPECT_TRUE(Observe(nullptr, d, 1.0, {}).empty());
}

TEST(Observe, MigInstancesBecomeUnits) {
  gpu::DeviceSample d;
  d.uuid = "GPU-m";
  d.mig_enabled = true;
  d.process_utilization_supported = false;
  gpu::MigInstanceSample m;
  m.uuid = "MIG-1";
  m.memory = gpu::MemoryInfo{10, 4, 0, 6};
  m.sm_active_ratio = 0.7;
  m.processes = {{5, gpu::ProcessType::kCompute, 4, 1, 0}};
  d.mig_instances = {m};
  const auto units = Observe(nullptr, d, 1.0, {});
  ASSERT_EQ(units.size(), 1u);
  EXPECT_EQ(units[0].uuid, "MIG-1");
  EXPECT_EQ(units[0].mode, SharingMode::kMig);
  EXPECT_DOUBLE_EQ(*units[0].busy_fraction, 0.7);
  EXPECT_FALSE(units[0].processes[0].sm_fraction.has_value());
}

TEST(Observe, EnergyFromCounterElsePowerElseUnknown) {
  auto before = Device(), now = Device();
  before.energy_joules = 1000;
  now.energy_joules = 1600;
  before.power_watts = 500;
  now.power_watts = 700;
  auto u = Observe(&before, now, 2.0, {})[0];
  EXPECT_DOUBLE_EQ(*u.energy_joules, 600);
  EXPECT_STREQ(ToString(u.energy_rule), "energy counter delta");
  now.energy_joules = 5;  // counter reset (driver reload): never a negative delta
  u = Observe(&before, now, 2.0, {})[0];
  EXPECT_DOUBLE_EQ(*u.energy_joules, 1200);
  EXPECT_NE(std::string(ToString(u.energy_rule)).find("mean board power"), std::string::npos);
  now.power_watts.reset();
  EXPECT_FALSE(Observe(&before, now, 2.0, {})[0].energy_joules.has_value());
  EXPECT_FALSE(Observe(nullptr, now, 2.0, {})[0].energy_joules.has_value())
      << "first pass: no interval";
}

// Power samples on the same period grid as Device()'s per-process samples: 600 W in the period
// pid 2 ran too (90 % busy), 400 W in the three where pid 1 ran alone (50 %).
TEST(Observe, PowerSamplesGiveEachProcessTheWattsOfItsBusyPeriodsAndIdleItsOwn) {
  auto before = Device(), now = Device();
  for (uint64_t k = 1; k <= 4; ++k)
    now.power_samples.push_back({1'000'000 + k * 250'000, k == 2 ? 600.0 : 400.0});
  const auto u = Observe(&before, now, 1.0, {})[0];
  ASSERT_EQ(u.processes.size(), 2u);
  // pid 1: activity 0.5 in each period: (3 × 0.5 × 400 + 0.5 × 600) / 2 = 450 W.
  EXPECT_DOUBLE_EQ(u.processes[0].busy_watts.value_or(-1), 450);
  EXPECT_DOUBLE_EQ(u.processes[1].busy_watts.value_or(-1), 600);
  // Idle: 0.5 of three periods at 400 W and 0.1 of one at 600 W.
  EXPECT_DOUBLE_EQ(u.idle_time_watts.value_or(-1), (1.5 * 400 + 0.1 * 600) / 1.6);
  // Power on a grid of its own (two samples per per-process period, stamped mid-period and at
  // its end): a per-process sample's period takes the mean of the power stamped inside it.
  auto fine = Device();
  for (uint64_t k = 1; k <= 8; ++k)
    fine.power_samples.push_back({1'000'000 + k * 125'000, k == 3 || k == 4 ? 600.0 : 400.0});
  const auto f = Observe(&before, fine, 1.0, {})[0];
  EXPECT_DOUBLE_EQ(f.processes[1].busy_watts.value_or(-1), 600) << "(1.25, 1.5] s: 600 and 600";
  EXPECT_DOUBLE_EQ(f.processes[0].busy_watts.value_or(-1), 450);
  // Power samples of other periods only (the driver's buffer lost the window's), or no period
  // known: no weights.
  auto off = Device();
  for (uint64_t k = 0; k < 4; ++k) off.power_samples.push_back({k * 200'000, 400.0});
  const auto unmatched = Observe(&before, off, 1.0, {})[0];
  EXPECT_FALSE(unmatched.processes[0].busy_watts);
  EXPECT_FALSE(unmatched.idle_time_watts);
  now.process_util_period_us.reset();
  EXPECT_FALSE(Observe(&before, now, 1.0, {})[0].idle_time_watts);
}

}  // namespace
}  // namespace gpumeter::attribution

namespace gpumeter::attribution {
namespace {

// The snapshot of a pass over `d` whose facts name every listed PID's pod after the PID, and
// PIDs `met` as processes a drain identified between the passes (listed false).
std::shared_ptr<const domain::NodeSnapshot> PassWith(const gpu::DeviceSample& d,
                                                     std::vector<uint32_t> met) {
  auto s = std::make_shared<domain::NodeSnapshot>();
  s->ok = true;
  s->gpus.devices = {d};
  std::vector<uint32_t> pids = domain::SamplePids(s->gpus);
  for (const uint32_t pid : met) pids.push_back(pid);
  std::sort(pids.begin(), pids.end());
  for (const uint32_t pid : pids) {
    domain::ProcessFact f;
    f.pid = pid;
    f.owner = {OwnerKind::kContainer, "ns", std::to_string(pid), "c", "test"};
    f.start = ProcessStart{pid, std::nullopt};
    f.listed = std::find(met.begin(), met.end(), pid) == met.end();
    s->processes.push_back(std::move(f));
  }
  s->units = {{d.uuid, SharingMode::kTimeSlicing, {}}};
  return s;
}

std::map<std::string, double> ComputeByPod(const UnitObservation& u) {
  std::map<std::string, double> out;
  for (const auto& r : AttributeUnit(u, 1.0).rows)
    out[r.owner.kind == OwnerKind::kContainer ? r.owner.pod : ToString(r.owner.kind)] +=
        r.compute_seconds;
  return out;
}

// PID 9 ran between two passes (samples, in neither process list). A drain met it and /proc named
// its pod then: its samples are its pod's. Without that, its time is unattributed — never idle,
// never another pod's.
TEST(Observe, AProcessThatRanBetweenPassesIsBookedToThePodADrainFound) {
  auto d = Device();
  d.process_util.push_back({9, 1'250'000, 30, 20});
  const auto start = PassWith(d, {});
  const auto units = Observe(&d, d, 1.0, IntervalFacts(PassWith(d, {9}), start));
  ASSERT_EQ(units.size(), 1u);
  const ProcessObservation* nine = nullptr;
  for (const auto& p : units[0].processes)
    if (p.pid == 9) nine = &p;
  ASSERT_NE(nine, nullptr);
  EXPECT_EQ(nine->owner->pod, "9");
  EXPECT_FALSE(nine->memory_bytes) << "never listed: its memory was never read";
  EXPECT_DOUBLE_EQ(nine->sm_fraction.value_or(-1), 0.075);
  EXPECT_DOUBLE_EQ(nine->memory_busy_fraction.value_or(-1), 0.05);
  auto cpu = ComputeByPod(units[0]);
  EXPECT_DOUBLE_EQ(cpu["9"], 0.075);
  EXPECT_DOUBLE_EQ(cpu["1"], 0.5);
  EXPECT_NEAR(cpu[ToString(OwnerKind::kUnattributed)], 0.0, 1e-12);

  const auto unknown = Observe(&d, d, 1.0, IntervalFacts(PassWith(d, {}), start));
  cpu = ComputeByPod(unknown[0]);
  EXPECT_EQ(cpu.count("9"), 0u);
  EXPECT_NEAR(cpu[ToString(OwnerKind::kUnattributed)], 0.075, 1e-12);
}

// PID 1 was listed at the start, exited, and a process of another pod took the PID between the
// passes (a drain met it, started at 1.6 s): the samples before its start are the first
// process's, the rest the second's, and the second's memory is unknown (never listed).
TEST(Observe, APidReusedBetweenPassesSplitsAtTheStartTheDrainRead) {
  auto before = Device();
  auto now = Device();
  now.processes = {{2, gpu::ProcessType::kCompute, 10, {}, {}}};
  const auto start = PassWith(before, {});
  auto end = std::make_shared<domain::NodeSnapshot>(*PassWith(now, {1}));
  for (auto& f : end->processes)
    if (f.pid == 1) f.owner.pod = "successor", f.start = ProcessStart{5000, 1'600'000};
  const auto units = Observe(&before, now, 1.0, IntervalFacts(end, start));
  std::map<std::string, const ProcessObservation*> ones;
  for (const auto& p : units[0].processes)
    if (p.pid == 1) ones[p.owner->pod] = &p;
  ASSERT_EQ(ones.size(), 2u);
  EXPECT_DOUBLE_EQ(ones["1"]->sm_fraction.value_or(-1), 0.25);
  EXPECT_DOUBLE_EQ(ones["successor"]->sm_fraction.value_or(-1), 0.25);
  EXPECT_EQ(ones["1"]->memory_bytes, 15u) << "seen with 30 at the start only: half the interval";
  EXPECT_FALSE(ones["successor"]->memory_bytes);
}

}  // namespace
}  // namespace gpumeter::attribution

namespace gpumeter::attribution {
namespace {

// An MPS GPU without per-process utilization: two clients at 25 % and 75 % of the threads, and
// the control daemon's server, a host process every real MPS GPU lists (pid 1800), or a tenant's
// process that gives itself the server's name.
std::vector<UnitObservation> MpsWithServer(const Owner& server_owner, bool server_holds = false) {
  gpu::DeviceSample d;
  d.uuid = "GPU-mps";
  d.memory = gpu::MemoryInfo{1000, 500, 100, 400};
  d.utilization_gpu_percent = 80;
  d.process_utilization_supported = false;
  d.processes = {{1800, gpu::ProcessType::kCompute, 32, {}, {}},
                 {2001, gpu::ProcessType::kMps, 200, {}, {}},
                 {2002, gpu::ProcessType::kMps, 268, {}, {}}};
  auto s = std::make_shared<domain::NodeSnapshot>();
  s->ok = true;
  s->gpus.devices = {d};
  const Owner a = Owner::Container("ml", "a", "c"), b = Owner::Container("ml", "b", "c");
  auto fact = [](uint32_t pid, const Owner& o, std::optional<double> threads, std::string comm) {
    domain::ProcessFact f;
    f.pid = pid;
    f.owner = {o.kind, o.ns, o.pod, o.container, "test"};
    f.mps_thread_fraction = threads;
    f.comm = std::move(comm);
    return f;
  };
  s->processes = {fact(1800, server_owner, std::nullopt, "nvidia-cuda-mps-server"),
                  fact(2001, a, 0.25, "python"), fact(2002, b, 0.75, "python")};
  s->units = {{d.uuid, SharingMode::kMps, {{a, 0.5}, {b, 0.5}}}};
  if (server_holds) s->units[0].holders.push_back({server_owner, 0.5});
  return Observe(&d, d, 1.0, IntervalFacts(s, s));
}

// As a host process, or in the device plugin's mps-control-daemon pod (which holds no GPU).
class MpsServer : public ::testing::TestWithParam<Owner> {};
INSTANTIATE_TEST_SUITE_P(
    Observe, MpsServer,
    ::testing::Values(Owner{OwnerKind::kSystem, {}, {}, {}},
                      Owner::Container("nvidia-device-plugin",
                                       "nvidia-device-plugin-mps-control-daemon-7xk2p",
                                       "mps-control-daemon-ctr")));

TEST_P(MpsServer, NeitherStopsTheThreadSplitNorTakesAShare) {
  const auto units = MpsWithServer(GetParam());
  ASSERT_EQ(units.size(), 1u);
  const auto l = AttributeUnit(units[0], 1.0);
  std::map<std::string, double> cpu, memory;
  for (const auto& r : l.rows) {
    const auto who = r.owner.kind == OwnerKind::kContainer ? r.owner.pod : ToString(r.owner.kind);
    cpu[who] += r.compute_seconds;
    memory[who] += r.memory_byte_seconds;
    if (r.owner.kind == OwnerKind::kContainer) {
      EXPECT_EQ(r.compute_rule, Rule::kMpsThreadPercentage);
    }
  }
  EXPECT_DOUBLE_EQ(cpu["a"], 0.2);
  EXPECT_DOUBLE_EQ(cpu["b"], 0.6);
  EXPECT_NEAR(cpu[ToString(OwnerKind::kSystem)], 0.0, 1e-12) << "infrastructure runs no kernels";
  EXPECT_NEAR(cpu[ToString(OwnerKind::kUnattributed)], 0.0, 1e-12);
  EXPECT_DOUBLE_EQ(memory[ToString(OwnerKind::kSystem)], 100 + 32) << "reservation + the server";
  EXPECT_EQ(memory.count("nvidia-device-plugin-mps-control-daemon-7xk2p"), 0u);
}

// A tenant's own process named like the server computes like any tenant's: no thread
// percentage, so the split is even over the three tenants, the third one included.
TEST(Observe, ATenantNamingItselfTheMpsServerIsStillATenant) {
  const Owner sly = Owner::Container("ml", "sly", "c");
  const auto units = MpsWithServer(sly, true);
  ASSERT_EQ(units.size(), 1u);
  double sly_cpu = 0;
  for (const auto& r : AttributeUnit(units[0], 1.0).rows)
    if (r.owner == sly) {
      sly_cpu += r.compute_seconds;
      EXPECT_EQ(r.compute_rule, Rule::kEvenSplitNoSamples);
    }
  EXPECT_NEAR(sly_cpu, 0.8 / 3, 1e-12);
}

}  // namespace
}  // namespace gpumeter::attribution
