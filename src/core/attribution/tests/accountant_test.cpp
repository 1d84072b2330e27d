#include "core/attribution/accountant.h"

#include <gtest/gtest.h>

#include <cmath>
#include "core/attribution/tests/node_spec.h"

namespace gpumeter::attribution {
namespace {

using test_support::FedAccountant;
using test_support::NodeSpec;

Owner C(const std::string& pod) { return Owner{OwnerKind::kContainer, "ns", pod, "c"}; }

const Row* Find(const UnitLedger& l, const Owner& o) {
  for (const auto& r : l.rows)
    if (r.owner == o) return &r;
  return nullptr;
}

const UnitLedger* Unit(const std::vector<UnitLedger>& ls, const std::string& uuid) {
  for (const auto& l : ls)
    if (l.uuid == uuid) return &l;
  return nullptr;
}

double Sum(const UnitLedger& l, double Row::*field) {
  double s = 0;
  for (const auto& r : l.rows) s += r.*field;
  return s;
}

// A MIG GPU of 7 slices with instances of 3, 2 and 1 slices (one slice free). Power model:
// P = idle + (max − idle) × Σ activity × slices / 7.
gpu::DeviceSample MigGpu(double t, double a0, double a1, double a2, double idle = 90,
                         double max = 700) {
  gpu::DeviceSample d;
  d.uuid = "GPU-m";
  d.name = "NVIDIA H200";
  d.mig_enabled = true;
  d.process_utilization_supported = false;
  d.mig_total_slices = 7;
  d.memory = gpu::MemoryInfo{1000, 0, 0, 1000};
  const double busy = (a0 * 3 + a1 * 2 + a2 * 1) / 7;
  d.energy_joules = 1e6 + t * (idle + (max - idle) * busy);  // constant power over [0, t]
  const double as[] = {a0, a1, a2};
  const uint32_t slices[] = {3, 2, 1};
  for (int i = 0; i < 3; ++i) {
    gpu::MigInstanceSample m;
    m.uuid = "MIG-" + std::to_string(i);
    m.gpu_instance_id = static_cast<uint32_t>(i);
    m.slices = slices[i];
    m.memory = gpu::MemoryInfo{slices[i] * 100ull, 50, 0, slices[i] * 100ull - 50};
    m.sm_active_ratio = as[i];
    m.processes.push_back({static_cast<uint32_t>(100 + i), gpu::ProcessType::kCompute, 50,
                           static_cast<uint32_t>(i), 0});
    d.mig_instances.push_back(std::move(m));
  }
  return d;
}

gpu::GpuSnapshot Snap(std::vector<gpu::DeviceSample> ds) {
  gpu::GpuSnapshot s;
  s.devices = std::move(ds);
  return s;
}

NodeSpec Ctx() {
  NodeSpec ctx;
  ctx.owner = [](uint32_t pid) -> std::optional<Owner> { return C("p" + std::to_string(pid)); };
  return ctx;
}

TEST(Accountant, MigEnergyIdleBySizeAndTheRestByActivityWhenIdleIsKnown) {
  AccountantOptions opt;
  opt.idle_power_watts["NVIDIA H200"] = 90;  // configured by model
  FedAccountant acc(Ctx(), opt);
  acc.Prime(Snap({MigGpu(0, 0.7, 0.25, 0.05)}));
  const auto ls = acc.Step(Snap({MigGpu(10, 0.7, 0.25, 0.05)}), 10);
  // Instance i: idle × slices/7 + (max − idle) × activity × slices/7, × 10 s.
  const double want[] = {(90 * 3 + 610 * 0.7 * 3) / 7.0 * 10, (90 * 2 + 610 * 0.25 * 2) / 7.0 * 10,
                         (90 * 1 + 610 * 0.05 * 1) / 7.0 * 10};
  double total = 0;
  for (int i = 0; i < 3; ++i) {
    const auto* l = Unit(ls, "MIG-" + std::to_string(i));
    ASSERT_TRUE(l && l->energy_joules);
    EXPECT_NEAR(*l->energy_joules, want[i], 1e-6) << i;
    EXPECT_NEAR(Sum(*l, &Row::energy_joules), *l->energy_joules, 1e-9 * *l->energy_joules);
    total += *l->energy_joules;
  }
  // The free slice is a unit of its own under the GPU's UUID: idle, with its idle power.
  const auto* free = Unit(ls, "GPU-m");
  ASSERT_TRUE(free && free->energy_joules);
  EXPECT_NEAR(*free->energy_joules, 90.0 / 7 * 10, 1e-6);
  ASSERT_EQ(free->rows.size(), 1u);
  EXPECT_EQ(free->rows[0].owner.kind, OwnerKind::kIdle);
  EXPECT_DOUBLE_EQ(free->rows[0].compute_seconds, 10);
  EXPECT_EQ(free->memory_capacity_byte_seconds, (1000.0 - 600) * 10);
  // The GPU's energy is conserved across its instances and free slices.
  const double busy = (0.7 * 3 + 0.25 * 2 + 0.05) / 7;
  EXPECT_NEAR(total + *free->energy_joules, (90 + 610 * busy) * 10, 1e-6);
}

TEST(Accountant, ALostMigGpuKeepsEveryUnitIncludingItsFreeSlices) {
  FedAccountant acc(Ctx());
  acc.Prime(Snap({MigGpu(0, 0.5, 0.5, 0.5)}));
  gpu::DeviceSample lost;
  lost.uuid = "GPU-m";
  lost.lost = true;
  const auto ls = acc.Step(Snap({lost}), 2);
  ASSERT_EQ(ls.size(), 4u) << "three instances and the free slice";
  double capacity = 0;
  for (const auto& l : ls) {
    capacity += l.memory_capacity_byte_seconds;
    ASSERT_EQ(l.rows.size(), 1u) << l.uuid;
    EXPECT_EQ(l.rows[0].owner.kind, OwnerKind::kUnattributed) << l.uuid;
    EXPECT_STREQ(ToString(l.rows[0].memory_rule), "GPU lost: no readings");
  }
  EXPECT_DOUBLE_EQ(capacity, 1000.0 * 2) << "the whole GPU's memory, as before it was lost";
}

TEST(Accountant, IdlePowerIsFittedFromTheGpusOwnHistory) {
  FedAccountant acc(Ctx());
  double t = 0, e0 = 0;
  auto at = [&](double a0) {
    auto d = MigGpu(0, a0, 0.25, 0.05);
    const double busy = (a0 * 3 + 0.25 * 2 + 0.05) / 7;
    e0 += (90 + 610 * busy) * 1.0;  // one second at this activity
    d.energy_joules = 1e6 + e0;
    return d;
  };
  acc.Prime(Snap({at(0.1)}));
  EXPECT_FALSE(acc.IdleWatts("GPU-m"));
  std::vector<UnitLedger> ls;
  for (int i = 0; i < 10; ++i, t += 1) ls = acc.Step(Snap({at(0.1 + 0.08 * i)}), 1.0);
  ASSERT_TRUE(acc.IdleWatts("GPU-m"));
  EXPECT_NEAR(*acc.IdleWatts("GPU-m"), 90, 1e-3);
  EXPECT_NE(std::string(ToString(Unit(ls, "MIG-0")->rows[0].energy_rule))
                .find("idle power by instance size"),
            std::string::npos);
}

// A GPU without GPM: utilization.gpu is one driver period's value, not the interval's, so the
// idle-power fit takes its activity from the per-process samples where they cover the interval.
// Here utilization.gpu reads 0 or 100 whatever the GPU did; the samples hold the truth.
TEST(Accountant, TheIdlePowerFitTakesAGpuWithoutGpmsActivityFromItsSamples) {
  FedAccountant acc(Ctx());
  double e = 1e6;
  uint64_t now_us = 1'000'000'000;
  auto at = [&](int i) {
    gpu::DeviceSample d;
    d.uuid = "GPU-w";
    d.name = "NVIDIA L40S";
    d.memory = gpu::MemoryInfo{1000, 0, 0, 1000};
    d.utilization_gpu_percent = i % 2 ? 100u : 0u;
    d.process_utilization_supported = true;
    d.process_util_period_us = 250'000;
    d.process_util_window_start_us = now_us;
    now_us += 1'000'000;
    d.process_util_window_end_us = now_us;
    const double busy = 0.1 + 0.07 * (i % 9);
    const auto pct = static_cast<uint32_t>(std::lround(busy * 100));
    for (uint64_t k = 1; k <= 4; ++k)
      d.process_util.push_back({200, d.process_util_window_start_us + k * 250'000, pct, 0});
    d.processes.push_back({200, gpu::ProcessType::kCompute, 50, std::nullopt, 0});
    e += (36 + (350 - 36) * static_cast<double>(pct) / 100) * 1.0;
    d.energy_joules = e;
    return d;
  };
  acc.Prime(Snap({at(0)}));
  for (int i = 1; i < 12; ++i) acc.Step(Snap({at(i)}), 1.0);
  const auto fitted = acc.IdlePowerOf("GPU-w");
  ASSERT_TRUE(fitted);
  EXPECT_EQ(fitted->source, Accountant::IdleSource::kFitted);
  EXPECT_NEAR(fitted->watts, 36, 1e-6);
}

TEST(Accountant, WithoutIdlePowerEnergyFollowsActivityAndSaysSo) {
  FedAccountant acc(Ctx());
  acc.Prime(Snap({MigGpu(0, 0.5, 0.5, 0.0)}));
  const auto ls = acc.Step(Snap({MigGpu(1, 0.5, 0.5, 0.0)}), 1);
  const double e = 90 + 610 * (0.5 * 5 / 7.0);
  EXPECT_NEAR(*Unit(ls, "MIG-0")->energy_joules, e * 0.6, 1e-9);  // 3 × 0.5 of 5 × 0.5
  EXPECT_NEAR(*Unit(ls, "MIG-1")->energy_joules, e * 0.4, 1e-9);
  EXPECT_NEAR(*Unit(ls, "MIG-2")->energy_joules, 0, 1e-9);
  EXPECT_NE(std::string(ToString(Unit(ls, "MIG-0")->rows[0].energy_rule))
                .find("idle power not yet estimated"),
            std::string::npos);
}

TEST(Accountant, UnknownInstanceActivitySplitsBySize) {
  FedAccountant acc(Ctx());
  acc.Prime(Snap({MigGpu(0, 0.5, 0.5, 0.5)}));
  auto d = MigGpu(1, 0.5, 0.5, 0.5);
  d.mig_instances[1].sm_active_ratio.reset();
  const auto ls = acc.Step(Snap({std::move(d)}), 1);
  const double e = 90 + 610 * 0.5 * 6 / 7;
  EXPECT_NEAR(*Unit(ls, "MIG-0")->energy_joules, e * 3 / 6, 1e-9);
  EXPECT_NE(std::string(ToString(Unit(ls, "MIG-0")->rows[0].energy_rule)).find("activity unknown"),
            std::string::npos);
  const auto* un = Find(*Unit(ls, "MIG-1"), Owner{OwnerKind::kUnattributed, {}, {}, {}});
  ASSERT_TRUE(un);
  EXPECT_DOUBLE_EQ(un->compute_seconds, 1)
      << "activity unknown: the instance's time is unattributed";
}

// MIG without any activity source (an A100: no GPM, no DCGM), idle power known: the idle power
// is split by slices over the whole GPU, each instance's part goes to its holders by held share
// (to idle for the share nobody holds), and only the rest stays unattributed.
TEST(Accountant, MigWithoutActivityGivesIdlePowerBySlicesToTheHolders) {
  AccountantOptions opt;
  opt.idle_power_watts["NVIDIA H200"] = 90;
  NodeSpec ctx = Ctx();
  ctx.holders = [](const std::string& unit) -> std::vector<Holding> {
    if (unit == "MIG-0") return {{C("reserve"), 1.0}};            // held, whatever runs on it
    if (unit == "MIG-2") return {{C("a"), 0.5}, {C("b"), 0.25}};  // a quarter held by nobody
    return {};                                                    // MIG-1: nobody holds it
  };
  FedAccountant acc(ctx, opt);
  auto blind = [](double t) {
    auto d = MigGpu(t, 0.6, 0.3, 0.9);  // the board's power follows this activity...
    for (auto& m : d.mig_instances) m.sm_active_ratio.reset();  // ...which nobody can read
    return d;
  };
  acc.Prime(Snap({blind(0)}));
  const auto ls = acc.Step(Snap({blind(10)}), 10);
  const double energy = (90 + 610 * (0.6 * 3 + 0.3 * 2 + 0.9) / 7) * 10;
  const double idle = 90.0 * 10, dynamic = energy - idle;
  const double slices[] = {3, 2, 1};
  double total = 0;
  for (int i = 0; i < 3; ++i) {
    const auto* l = Unit(ls, "MIG-" + std::to_string(i));
    ASSERT_TRUE(l && l->energy_joules) << i;
    EXPECT_NEAR(*l->energy_joules, idle * slices[i] / 7 + dynamic * slices[i] / 6, 1e-6) << i;
    EXPECT_NEAR(Sum(*l, &Row::energy_joules), *l->energy_joules, 1e-9 * *l->energy_joules) << i;
    const auto* un = Find(*l, Owner{OwnerKind::kUnattributed, {}, {}, {}});
    ASSERT_TRUE(un) << i;
    EXPECT_DOUBLE_EQ(un->compute_seconds, 10) << "activity unknown: time stays unattributed";
    EXPECT_NEAR(un->energy_joules, dynamic * slices[i] / 6, 1e-6) << "only the dynamic part";
    total += *l->energy_joules;
  }
  const auto* reserve = Find(*Unit(ls, "MIG-0"), C("reserve"));
  ASSERT_TRUE(reserve);
  EXPECT_NEAR(reserve->energy_joules, idle * 3 / 7, 1e-6) << "its slices' share of idle power";
  EXPECT_STREQ(ToString(reserve->energy_rule),
               "the instance's share of GPU idle power, to its holders by held share");
  const auto* nobody = Find(*Unit(ls, "MIG-1"), Owner{OwnerKind::kIdle, {}, {}, {}});
  ASSERT_TRUE(nobody);
  EXPECT_NEAR(nobody->energy_joules, idle * 2 / 7, 1e-6) << "held by nobody: idle's";
  const auto& m2 = *Unit(ls, "MIG-2");
  EXPECT_NEAR(Find(m2, C("a"))->energy_joules, idle / 7 * 0.5, 1e-6);
  EXPECT_NEAR(Find(m2, C("b"))->energy_joules, idle / 7 * 0.25, 1e-6);
  EXPECT_NEAR(Find(m2, Owner{OwnerKind::kIdle, {}, {}, {}})->energy_joules, idle / 7 * 0.25, 1e-6);
  // The free slice keeps its idle power; the GPU's energy is conserved.
  const auto* free = Unit(ls, "GPU-m");
  ASSERT_TRUE(free && free->energy_joules);
  EXPECT_NEAR(*free->energy_joules, idle / 7, 1e-6);
  EXPECT_NEAR(total + *free->energy_joules, energy, 1e-6);
}

// An instance whose own activity is known keeps energy following time even when a neighbour's
// activity is unknown (the idle-by-slices placement is for instances nobody can see into).
TEST(Accountant, AnInstanceWithKnownActivityKeepsEnergyFollowingTime) {
  AccountantOptions opt;
  opt.idle_power_watts["NVIDIA H200"] = 90;
  NodeSpec ctx = Ctx();
  ctx.holders = [](const std::string& unit) -> std::vector<Holding> {
    return {{C("h-" + unit), 1.0}};
  };
  FedAccountant acc(ctx, opt);
  auto partly = [](double t) {
    auto d = MigGpu(t, 0.6, 0.3, 0.9);
    d.mig_instances[1].sm_active_ratio.reset();  // only the 2g's activity is unknown
    return d;
  };
  acc.Prime(Snap({partly(0)}));
  const auto ls = acc.Step(Snap({partly(10)}), 10);
  const auto& m0 = *Unit(ls, "MIG-0");  // activity known: its holder pays only its busy time
  const auto* p100 = Find(m0, C("p100"));
  ASSERT_TRUE(p100 && m0.energy_joules);
  EXPECT_NEAR(p100->energy_joules, *m0.energy_joules * 0.6, 1e-6);
  EXPECT_NEAR(Find(m0, C("h-MIG-0"))->energy_joules, 0, 1e-9);
  const auto& m1 = *Unit(ls, "MIG-1");  // unknown: its idle part to its holder
  EXPECT_NEAR(Find(m1, C("h-MIG-1"))->energy_joules, 90.0 * 10 * 2 / 7, 1e-6);
}

// Without configuration or activity to fit against, idle power comes from the board's power
// while nothing ran on the GPU, and says so.
TEST(Accountant, IdlePowerFromTheBoardWhileNothingRan) {
  FedAccountant acc(Ctx());
  auto empty = [](double t) {
    auto d = MigGpu(t, 0, 0, 0);  // power = idle (90 W)
    for (auto& m : d.mig_instances) m.sm_active_ratio.reset(), m.processes.clear();
    return d;
  };
  acc.Prime(Snap({empty(0)}));
  acc.Step(Snap({empty(2)}), 2);
  EXPECT_FALSE(acc.IdlePowerOf("GPU-m")) << "2 s seen: not enough yet";
  for (int t = 4; t <= 10; t += 2) acc.Step(Snap({empty(t)}), 2);
  const auto p = acc.IdlePowerOf("GPU-m");
  ASSERT_TRUE(p);
  EXPECT_NEAR(p->watts, 90, 1e-9);
  EXPECT_EQ(p->source, Accountant::IdleSource::kSeenIdle);
  // A busy interval (a process on an instance) is not evidence of idle power.
  auto busy = MigGpu(12, 0.9, 0.9, 0.9);
  for (auto& m : busy.mig_instances) m.sm_active_ratio.reset();
  acc.Step(Snap({busy}), 2);
  EXPECT_NEAR(acc.IdlePowerOf("GPU-m")->watts, 90, 1e-9);
  // Configuration wins over what was seen.
  AccountantOptions opt;
  opt.idle_power_watts["GPU-m"] = 75;
  FedAccountant configured(Ctx(), opt);
  configured.Prime(Snap({empty(0)}));
  EXPECT_EQ(configured.IdlePowerOf("GPU-m")->source, Accountant::IdleSource::kConfigured);
}

gpu::DeviceSample Whole(const std::string& uuid, bool lost = false) {
  gpu::DeviceSample d;
  d.uuid = uuid;
  d.name = "NVIDIA H100";
  d.lost = lost;
  if (lost) return d;
  d.memory = gpu::MemoryInfo{1000, 400, 0, 600};
  d.sm_active_ratio = 0.5;
  d.processes = {{7, gpu::ProcessType::kCompute, 400, {}, {}}};
  return d;
}

TEST(Accountant, ALostGpuIsAccountedAsUnattributedFromItsLastGoodSample) {
  NodeSpec ctx = Ctx();
  ctx.holders = [](const std::string& unit) {
    return std::vector<Holding>{{C("holder-" + unit), 1.0}};
  };
  FedAccountant acc(ctx);
  acc.Prime(Snap({Whole("GPU-a"), Whole("GPU-b")}));
  auto ls = acc.Step(Snap({Whole("GPU-a"), Whole("GPU-b", true)}), 2);
  const auto* b = Unit(ls, "GPU-b");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->memory_capacity_byte_seconds, 2000);
  EXPECT_FALSE(b->energy_joules) << "no energy reading: unknown, not zero";
  const auto* un = Find(*b, Owner{OwnerKind::kUnattributed, {}, {}, {}});
  ASSERT_TRUE(un);
  EXPECT_DOUBLE_EQ(un->memory_byte_seconds, 2000);
  EXPECT_DOUBLE_EQ(un->compute_seconds, 2);
  EXPECT_STREQ(ToString(un->compute_rule), "GPU lost: no readings");
  // The allocation is still held while the GPU is lost.
  const auto* holder = Find(*b, C("holder-GPU-b"));
  ASSERT_TRUE(holder);
  EXPECT_DOUBLE_EQ(holder->requested_share_seconds, 2);
  EXPECT_DOUBLE_EQ(holder->compute_seconds, 0);

  // A GPU that vanished from the sample altogether is accounted the same way.
  ls = acc.Step(Snap({Whole("GPU-a")}), 1);
  ASSERT_TRUE(Unit(ls, "GPU-b"));
  EXPECT_STREQ(
      ToString(Find(*Unit(ls, "GPU-b"), Owner{OwnerKind::kUnattributed, {}, {}, {}})->memory_rule),
      "GPU missing from the sample");

  // Back: a fresh start, no deltas across the gap (no energy, memory from this reading only).
  auto back = Whole("GPU-b");
  back.energy_joules = 5e6;
  ls = acc.Step(Snap({Whole("GPU-a"), back}), 1);
  EXPECT_FALSE(Unit(ls, "GPU-b")->energy_joules);
  EXPECT_DOUBLE_EQ(Find(*Unit(ls, "GPU-b"), C("p7"))->memory_byte_seconds, 400);
}

TEST(Accountant, RequestedShareIsHeldWhetherUsedOrNot) {
  NodeSpec ctx = Ctx();
  ctx.holders = [](const std::string&) {
    return std::vector<Holding>{{C("p7"), 0.25}, {C("idle-holder"), 0.25}, {C("too-much"), 3.0}};
  };
  FedAccountant acc(ctx);
  acc.Prime(Snap({Whole("GPU-a")}));
  const auto ls = acc.Step(Snap({Whole("GPU-a")}), 4);
  const auto& l = ls.at(0);
  EXPECT_DOUBLE_EQ(Find(l, C("p7"))->requested_share_seconds, 1.0);
  EXPECT_GT(Find(l, C("p7"))->memory_byte_seconds, 0);
  const auto* idle_holder = Find(l, C("idle-holder"));
  ASSERT_TRUE(idle_holder) << "a holder that uses nothing still has a row";
  EXPECT_DOUBLE_EQ(idle_holder->requested_share_seconds, 1.0);
  EXPECT_DOUBLE_EQ(idle_holder->compute_seconds, 0);
  EXPECT_DOUBLE_EQ(Find(l, C("too-much"))->requested_share_seconds, 4.0)
      << "a share is capped at the whole unit";
}

TEST(Accountant, AProcessThatExitedKeepsTheOwnerItHadWhenSeen) {
  // The owner lookup knows only live PIDs: PID 7 is gone by the second sample.
  bool alive = true;
  NodeSpec ctx;
  ctx.owner = [&](uint32_t pid) -> std::optional<Owner> {
    if (pid == 7 && alive) return C("p7");
    return std::nullopt;
  };
  FedAccountant acc(ctx);
  acc.Prime(Snap({Whole("GPU-a")}));
  alive = false;
  auto gone = Whole("GPU-a");
  gone.processes.clear();
  gone.memory->used_bytes = 0;
  const auto ls = acc.Step(Snap({gone}), 2);
  const auto* row = Find(ls.at(0), C("p7"));
  ASSERT_TRUE(row) << "half the interval's memory belongs to the container it exited from";
  EXPECT_DOUBLE_EQ(row->memory_byte_seconds, 400);  // mean of 400 and 0, for 2 s
}

TEST(Accountant, APidTakenOverBetweenPassesIsBookedToBothOwners) {
  // PID 7 names another container's process from the second pass on (a new start time).
  int pass = 0;
  NodeSpec ctx;
  ctx.owner = [&](uint32_t pid) -> std::optional<Owner> {
    if (pid != 7) return std::nullopt;
    return pass == 0 ? C("old") : C("new");
  };
  ctx.process_start = [&](uint32_t) -> std::optional<ProcessStart> {
    return pass == 0 ? ProcessStart{100, 1'000'000} : ProcessStart{250, 2'500'000};
  };
  FedAccountant acc(ctx);
  acc.Prime(Snap({Whole("GPU-a")}));
  pass = 1;
  auto ls = acc.Step(Snap({Whole("GPU-a")}), 2);
  const auto* old_row = Find(ls.at(0), C("old"));
  const auto* new_row = Find(ls.at(0), C("new"));
  ASSERT_TRUE(old_row && new_row);
  EXPECT_DOUBLE_EQ(old_row->memory_byte_seconds, 400) << "its 400 bytes, half the interval";
  EXPECT_DOUBLE_EQ(new_row->memory_byte_seconds, 400);
  // The next interval: the same process at both ends (same start), all of it the new owner's.
  ls = acc.Step(Snap({Whole("GPU-a")}), 2);
  EXPECT_FALSE(Find(ls.at(0), C("old")));
  EXPECT_DOUBLE_EQ(Find(ls.at(0), C("new"))->memory_byte_seconds, 800);
}

}  // namespace
}  // namespace gpumeter::attribution
