// Intervals of a GPU whose activity comes from DCGM are held until the collection that covers
// them is seen, then booked with the owners of their own time, the collection's mean and the
// GPU's energy placed by the board's power inside the collection (an estimate, bounded); what is
// still pending when the source goes away, or at a stop, is booked unknown.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>

#include "core/attribution/accountant.h"
#include "core/attribution/tests/node_spec.h"
#include "domain/rule.h"

namespace gpumeter::attribution {
namespace {

using test_support::FedAccountant;
using test_support::NodeSpec;

Owner C(const std::string& pod) { return Owner{OwnerKind::kContainer, "ns", pod, "c"}; }
const Owner kIdle{OwnerKind::kIdle, {}, {}, {}};

const Row* RowOf(const UnitLedger* l, const Owner& o) {
  if (!l) return nullptr;
  for (const auto& r : l->rows)
    if (r.owner == o) return &r;
  return nullptr;
}
const UnitLedger* Unit(const std::vector<UnitLedger>& ls, const std::string& uuid) {
  for (const auto& l : ls)
    if (l.uuid == uuid) return &l;
  return nullptr;
}

// An A30 in MIG mode (no GPM) of two instances, 2 + 2 slices, each with one process; the
// energy counter at `joules`; sampled at `t` seconds.
gpu::GpuSnapshot A30(double t, double joules, bool held = true) {
  gpu::DeviceSample d;
  d.uuid = "GPU-a30";
  d.name = "NVIDIA A30";
  d.mig_enabled = true;
  d.process_utilization_supported = false;
  d.mig_total_slices = 4;
  d.memory = gpu::MemoryInfo{1000, 0, 0, 1000};
  d.energy_joules = joules;
  d.dcgm_held = held;
  for (uint32_t i = 0; i < 2; ++i) {
    gpu::MigInstanceSample m;
    m.uuid = "MIG-" + std::to_string(i);
    m.gpu_instance_id = i + 1;
    m.slices = 2;
    m.memory = gpu::MemoryInfo{500, 100, 0, 400};
    m.processes.push_back({100 + i, gpu::ProcessType::kCompute, 100, i + 1, 0});
    d.mig_instances.push_back(std::move(m));
  }
  gpu::GpuSnapshot s;
  s.timestamp_us = static_cast<uint64_t>(t * 1e6);
  s.devices = {d};
  return s;
}

struct Fixture {
  std::map<uint32_t, Owner> owners{{100, C("a")}, {101, C("b")}};
  FedAccountant acc{
      NodeSpec{[this](uint32_t pid) -> std::optional<Owner> {
                 const auto it = owners.find(pid);
                 return it == owners.end() ? std::nullopt : std::optional<Owner>(it->second);
               },
               {},
               {},
               [](const std::string& unit) {
                 return std::vector<Holding>{{unit == "MIG-0" ? C("a") : C("b"), 1}};
               },
               {},
               {},
               {}},
      AccountantOptions{.idle_power_half_life_s = 3600, .idle_power_watts = {{"NVIDIA A30", 40}}}};
  // Collections: instance 1 at 0.6 then 0.2 (ending at 20 and 40), instance 2 idle; 0 unknown
  // until a collection ends after the interval.
  double known_until = 0;
  PastActivityOf Activity() const {
    return [this](const std::string&, std::optional<uint32_t> gi, double from, double to) {
      if (to > known_until) return PastActivity{true, std::nullopt};
      if (from < 0) return PastActivity{};
      const double first = std::max(0.0, std::min(to, 20.0) - from);
      const double second = std::max(0.0, to - std::max(from, 20.0));
      const double mean = gi == 1u ? (0.6 * first + 0.2 * second) / (to - from) : 0.0;
      return PastActivity{false, mean};
    };
  }
};

TEST(HeldIntervals, NothingIsBookedUntilTheCollectionThenExactlyItsMean) {
  Fixture f;
  f.acc.Prime(A30(0, 1000));
  for (int t = 5; t <= 20; t += 5) {
    EXPECT_TRUE(f.acc.Step(A30(t, 1000 + 100.0 * t), 5).empty());
    EXPECT_TRUE(f.acc.Release(f.Activity()).empty());  // pending: no extrapolation
  }
  EXPECT_EQ(f.acc.HeldUnits(), (std::set<std::string>{"GPU-a30", "MIG-0", "MIG-1"}));
  EXPECT_TRUE(f.acc.Step(A30(25, 3500), 5).empty());
  f.known_until = 20;  // the collection ending at 20 is seen: [0, 20] is booked, [20, 25] waits
  const auto out = f.acc.Release(f.Activity());
  const auto* m0 = Unit(out, "MIG-0");
  ASSERT_NE(m0, nullptr);
  EXPECT_DOUBLE_EQ(m0->seconds, 20);  // four intervals merged into one ledger
  EXPECT_DOUBLE_EQ(m0->late_seconds, 5);
  EXPECT_NEAR(RowOf(m0, C("a"))->compute_seconds, 0.6 * 20, 1e-9);
  EXPECT_NEAR(RowOf(Unit(out, "MIG-1"), C("b"))->compute_seconds, 0, 1e-12);
  // Energy: 2000 J over [0, 20]; idle 40 W by slices (800 J, half each), the rest (1200 J) by
  // activity × slices: all instance 1's. Its tenant gets its time's share of the instance's.
  ASSERT_TRUE(m0->energy_joules);
  EXPECT_NEAR(*m0->energy_joules, 400 + 1200, 1e-6);
  EXPECT_NEAR(RowOf(m0, C("a"))->energy_joules, 0.6 * 1600, 1e-6);
  EXPECT_EQ(f.acc.HeldUnits(), (std::set<std::string>{"GPU-a30", "MIG-0", "MIG-1"}));
}

// The fixture's accountant with other options (its owners and holders).
std::unique_ptr<FedAccountant> AccountantOf(Fixture& f, AccountantOptions options) {
  return std::make_unique<FedAccountant>(
      NodeSpec{[&f](uint32_t pid) -> std::optional<Owner> {
                 const auto it = f.owners.find(pid);
                 return it == f.owners.end() ? std::nullopt : std::optional<Owner>(it->second);
               },
               {},
               {},
               [](const std::string& unit) {
                 return std::vector<Holding>{{unit == "MIG-0" ? C("a") : C("b"), 1}};
               },
               {},
               {},
               {}},
      std::move(options));
}

// Board power samples every 0.25 s over (from, to]: `before` watts up to `edge`, `after` past it.
std::vector<gpu::PowerSample> Power(double from, double to, double edge, double before,
                                    double after) {
  std::vector<gpu::PowerSample> out;
  for (double t = from + 0.25; t <= to + 1e-9; t += 0.25)
    out.push_back(
        {static_cast<uint64_t>(std::llround(t * 1e6)), t <= edge + 1e-9 ? before : after});
  return out;
}

// At a 15 s step a pass straddles the collection's end (20 s): the part before it is booked with
// that collection, the rest waits for the next; the energy of the parts follows the board's
// power samples (linear would give the first part a third of the pass's).
TEST(HeldIntervals, AnIntervalAcrossACollectionsEndIsSplitThere) {
  Fixture f;
  f.acc.Prime(A30(0, 0));
  auto first = A30(15, 1500);
  first.devices[0].power_samples = Power(0, 15, 15, 100, 100);
  (void)f.acc.Step(first, 15);
  auto second = A30(30, 1500 + 500 + 3000);  // 5 s at 100 W, 10 s at 300 W
  second.devices[0].power_samples = Power(15, 30, 20, 100, 300);
  (void)f.acc.Step(second, 15);
  f.known_until = 20;
  auto activity = [&f](const std::string& gpu, std::optional<uint32_t> gi, double from, double to) {
    auto a = f.Activity()(gpu, gi, from, to);
    if (a.pending) a.covered_until_s = f.known_until;
    return a;
  };
  const auto out = f.acc.Release(activity);
  double seconds = 0, compute = 0, energy = 0;
  for (const auto& l : out) {
    energy += l.energy_joules.value_or(0);
    if (l.uuid != "MIG-0") continue;
    seconds += l.seconds;
    compute += RowOf(&l, C("a"))->compute_seconds;
    EXPECT_NEAR(l.late_seconds, 10, 1e-9) << "booked up to the collection's end";
  }
  EXPECT_NEAR(seconds, 20, 1e-9);
  EXPECT_NEAR(compute, 0.6 * 20, 1e-9) << "the collection whole, at its mean";
  EXPECT_NEAR(energy, 1500 + 500, 1e-6) << "the GPU's energy up to 20 s, by its power";
  EXPECT_EQ(f.acc.HeldUnits(), (std::set<std::string>{"GPU-a30", "MIG-0", "MIG-1"}));
  // The next collection (to 40 s) books the rest of that pass and the first 10 s of the next
  // (1000 J over (30, 45], no power samples: by time).
  f.known_until = 40;
  (void)f.acc.Step(A30(45, 5000 + 1000), 15);
  double later = 0, later_s = 0;
  for (const auto& l : f.acc.Release(activity)) {
    later += l.energy_joules.value_or(0);
    if (l.uuid == "MIG-0") later_s += l.seconds;
  }
  EXPECT_NEAR(later_s, 20, 1e-9) << "(20, 30] and (30, 40]; (40, 45] waits for its collection";
  EXPECT_NEAR(later, 3000 + 1000 * 10.0 / 15, 1e-6);
}

// Slices in no instance keep what the instances' profile did not take, whatever idle power it
// assumed (none is known here): the GPU's energy adds up over its units.
TEST(HeldIntervals, FreeSlicesKeepTheRestOfTheEnergy) {
  Fixture f;
  auto acc = AccountantOf(f, AccountantOptions{});  // no idle power: the profile assumes one
  auto with_free = [](double t, double joules) {
    auto s = A30(t, joules);
    s.devices[0].mig_instances[1].slices = 1;  // 2 + 1 of 4: one slice in no instance
    return s;
  };
  acc->Prime(with_free(0, 0));
  (void)acc->Step(with_free(10, 1000), 10);
  (void)acc->Step(with_free(20, 4000), 10);
  f.known_until = 20;
  double energy = 0;
  const auto out = acc->Release(f.Activity());
  for (const auto& l : out) energy += l.energy_joules.value_or(0);
  EXPECT_NEAR(energy, 4000, 1e-6);
  const auto* free = Unit(out, "GPU-a30");
  ASSERT_NE(free, nullptr) << "the free slice's unit";
  EXPECT_GT(*free->energy_joules, 0) << "its share of the idle power the profile took";
  // That idle power was a guess (none fitted or configured): so is the free slice's energy, the
  // truth anywhere from none to twice it.
  const auto* idle = RowOf(free, Owner{domain::OwnerKind::kIdle, "", "", ""});
  ASSERT_NE(idle, nullptr);
  EXPECT_TRUE(domain::IsEnergyEstimate(idle->energy_rule));
  EXPECT_NEAR(idle->energy_bound_joules, *free->energy_joules, 1e-9);
}

TEST(HeldIntervals, TheOwnersAreThoseOfTheIntervalsOwnTime) {
  Fixture f;
  f.acc.Prime(A30(0, 1000));
  (void)f.acc.Step(A30(10, 2000), 10);
  f.owners[100] = C("someone-else");  // the PID now names another container
  (void)f.acc.Step(A30(20, 3000), 10);
  f.known_until = 20;
  const auto out = f.acc.Release(f.Activity());
  const auto* m0 = Unit(out, "MIG-0");
  ASSERT_NE(m0, nullptr);
  // The first interval's process was a's; the second's is booked to the new owner.
  EXPECT_NEAR(RowOf(m0, C("a"))->compute_seconds, 6, 1e-9);
  EXPECT_NEAR(RowOf(m0, C("someone-else"))->compute_seconds, 6, 1e-9);
}

// The bound on the profile of one collection whose edges are `seen_within_s` uncertain.
double BoundOfOneCollection(double seen_within_s, double* busy_energy = nullptr) {
  Fixture f;
  auto acc = AccountantOf(f, AccountantOptions{.idle_power_half_life_s = 3600,
                                               .idle_power_watts = {{"NVIDIA A30", 40}},
                                               .dcgm_seen_within_s = seen_within_s});
  acc->Prime(A30(0, 0));
  (void)acc->Step(A30(10, 1000), 10);
  (void)acc->Step(A30(20, 4000), 10);
  f.known_until = 20;
  double bound = 0;
  for (const auto& l : acc->Release(f.Activity()))
    if (const auto* a = l.uuid == "MIG-0" ? RowOf(&l, C("a")) : nullptr) {
      bound += a->energy_bound_joules;
      if (busy_energy) *busy_energy += a->energy_joules;
    }
  return bound;
}

TEST(HeldIntervals, EnergyInsideOneCollectionFollowsTheBoardsPower) {
  Fixture f;
  f.acc.Prime(A30(0, 0));
  // 100 W then 300 W over two 10 s halves of one collection whose means are 0.6 and 0: the
  // collection says how the instances' busy time compares; the power says which half it fell in.
  (void)f.acc.Step(A30(10, 1000), 10);
  (void)f.acc.Step(A30(20, 4000), 10);
  f.known_until = 20;
  const auto out = f.acc.Release(f.Activity());
  double energy = 0, busy = 0, compute = 0;
  for (const auto& l : out) {
    if (l.uuid != "MIG-0") continue;
    energy += *l.energy_joules;
    const auto* a = RowOf(&l, C("a"));
    ASSERT_NE(a, nullptr);
    busy += a->energy_joules, compute += a->compute_seconds;
    EXPECT_TRUE(domain::IsEnergyEstimate(a->energy_rule));
  }
  // Idle 40 W × 20 s by slices (400 J each), the rest (3200 J) to instance 0, the only one busy.
  EXPECT_NEAR(energy, 400 + 3200, 1e-6);
  EXPECT_NEAR(compute, 0.6 * 20, 1e-6) << "the collection's busy time, unchanged";
  // Its activity follows the power above idle (60 W, then 260 W): 22.5 % then 97.5 % (mean 60 %);
  // busy energy 0.225 × (200 + 600) + 0.975 × (200 + 2600) = 2910 J. Spread evenly it was
  // 0.6 × 3600 = 2160 J, which the power rules out: with the collection's edges exact, the
  // bound is the idle power's error only.
  EXPECT_NEAR(busy, 2910, 1e-3);
  double exact_edges_busy = 0;
  const double exact_edges = BoundOfOneCollection(0, &exact_edges_busy);
  EXPECT_NEAR(exact_edges_busy, 2910, 1e-3);
  EXPECT_GT(exact_edges, 0);
  EXPECT_LT(exact_edges, 2910 - 2160);
  // Edges seen up to 2 s late (the source's poll): 2 s at each end may be the neighbours', whose
  // activity is not known here: up to the instance's full power (idle 20 W and κ's share) each.
  const double late_edges = BoundOfOneCollection(2);
  EXPECT_GT(late_edges, exact_edges);
  EXPECT_LE(late_edges - exact_edges, 2 * 2 * 0.5 * (40 + 3200 / (0.3 * 20) + 4) + 1e-6);
}

TEST(HeldIntervals, PendingWhenTheSourceGoesAwayOrAtAStopIsUnknownNotZero) {
  Fixture f;
  f.acc.Prime(A30(0, 0));
  (void)f.acc.Step(A30(10, 1000), 10);
  // The exporter went stale: the next pass does not hold the GPU, and what was held is given
  // up as unknown, before the new interval is booked as usual.
  const auto now = f.acc.Step(A30(20, 2000, /*held=*/false), 10);
  EXPECT_NE(Unit(now, "MIG-0"), nullptr);
  const auto out = f.acc.Release(f.Activity());
  const auto* m0 = Unit(out, "MIG-0");
  ASSERT_NE(m0, nullptr);
  EXPECT_DOUBLE_EQ(m0->seconds, 10);
  EXPECT_DOUBLE_EQ(RowOf(m0, C("a"))->compute_seconds, 0);
  EXPECT_DOUBLE_EQ(RowOf(m0, C("a"))->compute_unknown_seconds, 10);
  EXPECT_TRUE(f.acc.HeldUnits().empty());

  Fixture g;
  g.acc.Prime(A30(0, 0));
  (void)g.acc.Step(A30(10, 1000), 10);
  EXPECT_TRUE(g.acc.Release(g.Activity()).empty());
  const auto stop = g.acc.Release(g.Activity(), /*all=*/true);
  ASSERT_NE(Unit(stop, "MIG-1"), nullptr);
  EXPECT_DOUBLE_EQ(RowOf(Unit(stop, "MIG-1"), C("b"))->compute_unknown_seconds, 10);
}

TEST(HeldIntervals, AFailedPassKeepsWhatIsHeld) {
  Fixture f;
  f.acc.Prime(A30(0, 0));
  (void)f.acc.Step(A30(10, 1000), 10);
  const auto failed = f.acc.Step(gpu::GpuSnapshot{}, 5);  // every GPU answered nothing
  ASSERT_NE(Unit(failed, "MIG-0"), nullptr);              // that interval: the GPU missing, unknown
  EXPECT_DOUBLE_EQ(RowOf(Unit(failed, "MIG-0"), C("a"))->compute_unknown_seconds, 5);
  EXPECT_TRUE(f.acc.Release(f.Activity()).empty());  // the held interval still waits
  (void)f.acc.Step(A30(20, 2000), 5);
  f.known_until = 20;
  // (0, 10] at 0.6 for 10 s, then the good interval after the failure, (10, 20] at 0.6 for its
  // 5 s: two ledgers, as the second has no energy (no sample just before it).
  double seconds = 0, compute = 0, unknown = 0;
  int ledgers = 0;
  for (const auto& l : f.acc.Release(f.Activity()))
    if (l.uuid == "MIG-0") {
      ++ledgers;
      seconds += l.seconds;
      compute += RowOf(&l, C("a"))->compute_seconds;
      unknown += RowOf(&l, C("a"))->compute_unknown_seconds;
    }
  EXPECT_EQ(ledgers, 2);
  EXPECT_DOUBLE_EQ(seconds, 15);
  EXPECT_NEAR(compute, 9, 1e-9);
  EXPECT_DOUBLE_EQ(unknown, 0);
}

TEST(HeldIntervals, MergingKeepsConservation) {
  Fixture f;
  f.acc.Prime(A30(0, 0));
  for (int t = 4; t <= 40; t += 4) (void)f.acc.Step(A30(t, 150.0 * t), 4);
  f.known_until = 40;
  for (const auto& l : f.acc.Release(f.Activity())) {
    double compute = 0, energy = 0;
    for (const auto& r : l.rows) compute += r.compute_seconds, energy += r.energy_joules;
    EXPECT_NEAR(compute, l.seconds, 1e-9) << l.uuid;
    if (l.energy_joules) {
      EXPECT_NEAR(energy, *l.energy_joules, 1e-6) << l.uuid;
    }
    EXPECT_DOUBLE_EQ(l.seconds, 40);
  }
}

}  // namespace
}  // namespace gpumeter::attribution
