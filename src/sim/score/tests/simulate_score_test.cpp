// The harness's judge on hand-made ledgers: right numbers meet the targets; a wrong split, memory
// short of the truth or an estimate that loses activity do not; growth to a cap between samples
// and a fault window are not errors.
#include "sim/score/simulate_score.h"

#include <gtest/gtest.h>

#include <functional>

#include "sim/scenario/loader.h"

namespace gpumeter::app {
namespace {

using attribution::Row;
using attribution::UnitLedger;
using domain::Owner;
using domain::Rule;

constexpr const char* kGpu = "GPU-00000000-0000-0000-0000-000000000001";
constexpr double kMiB = 1024.0 * 1024.0;

// Two tenants time-slicing one GPU: a at 30 % with 1000 MiB, b at 20 % with 2000 MiB growing
// 100 MiB/s up to 2150 MiB (the cap is reached at t = 1.5 s, between samples).
const char* kScenario = R"(
name: t
gpus:
  - {index: 0, uuid: GPU-00000000-0000-0000-0000-000000000001, model: Test, memory_mib: 8192,
     power: {idle_watts: 10, max_watts: 110}, sharing: {mode: time-slicing, replicas: 2}}
pods:
  - namespace: ns
    name: a
    uid: u1
    containers: [{name: c, id: "containerd://a", devices: ["GPU-00000000-0000-0000-0000-000000000001::0"]}]
  - namespace: ns
    name: b
    uid: u2
    containers: [{name: c, id: "containerd://b", devices: ["GPU-00000000-0000-0000-0000-000000000001::1"]}]
processes:
  - {pid: 1, container: ns/a/c, usage: [{unit: GPU-00000000-0000-0000-0000-000000000001, memory_mib: 1000, sm_pct: 30}]}
  - {pid: 2, container: ns/b/c, usage: [{unit: GPU-00000000-0000-0000-0000-000000000001, memory_mib: 2000,
     memory_growth_mib_per_s: 100, memory_max_mib: 2150, sm_pct: 20}]}
)";

scenario::Scenario Load(const std::string& extra = "") {
  auto s = scenario::ParseScenario(std::string(kScenario) + extra, "test.yaml");
  EXPECT_TRUE(s) << (s ? "" : s.error().message);
  return s ? *s : scenario::Scenario{};
}

double MemoryB(double t) { return std::min(2000 + 100 * t, 2150.0) * kMiB; }

// The ledger of [from, to] as an exact sampler would give it: compute shares, memory as the mean
// of both ends; `rule` the tenants' compute rule.
UnitLedger Ledger(double from, double to, double share_a = 0.3, double share_b = 0.2,
                  Rule rule = Rule::kProcessSmSamples) {
  const double len = to - from;
  UnitLedger l;
  l.uuid = kGpu;
  l.mode = domain::SharingMode::kTimeSlicing;
  l.seconds = len;
  Row a{Owner::Container("ns", "a", "c"), 1000 * kMiB * len, share_a * len, 0, 0.5 * len};
  Row b{Owner::Container("ns", "b", "c"), (MemoryB(from) + MemoryB(to)) / 2 * len, share_b * len, 0,
        0.5 * len};
  a.compute_rule = b.compute_rule = rule;
  Row idle{Owner{domain::OwnerKind::kIdle, {}, {}, {}}, 0, (1 - share_a - share_b) * len};
  // Memory traffic: the scenario gives none, so each moves half its SM duty's worth.
  a.memory_busy_seconds = share_a / 2 * len, b.memory_busy_seconds = share_b / 2 * len;
  idle.memory_busy_seconds = len - a.memory_busy_seconds - b.memory_busy_seconds;
  a.memory_busy_rule = b.memory_busy_rule = rule;
  l.rows = {a, b, idle};
  return l;
}

ScoreReport ScoreRun(const scenario::Scenario& s,
                     const std::function<UnitLedger(double, double)>& ledger) {
  Scorer scorer(s, 1);
  for (double t = 0; t < 10; t += 1)
    scorer.AddInterval(t, t + 1, {ledger(t, t + 1)}, {{kGpu, 0.5}});
  return scorer.Finish(0, 10);
}

TEST(SimulateScore, RightNumbersMeetTheTargetsDespiteGrowthToACap) {
  const auto s = Load();
  const auto r = ScoreRun(s, [](double a, double b) { return Ledger(a, b); });
  EXPECT_TRUE(r.met) << (r.misses.empty() ? "" : r.misses.front());
  EXPECT_TRUE(r.memory_within_bound);
  ASSERT_EQ(r.groups.count("time-slicing"), 1u);
  EXPECT_LT(r.groups.at("time-slicing").cpu_worst, 0.01);
  // The trapezoid misses the kink at 1.5 s: the bound is exactly that, not zero.
  for (const auto& c : r.containers) {
    if (c.container == "ns/b/c") {
      EXPECT_GT(c.memory_bound_byte_s, 0);
    }
  }
}

// Memory traffic is judged as compute: 6 pp off for one tenant is a miss; where the ledger says
// it was unknown (no signal) it is not scored, reported as unknown and no miss.
TEST(SimulateScore, MemoryTrafficIsJudgedAndUnknownTrafficIsNotAnError) {
  const auto s = Load();
  const auto wrong = ScoreRun(s, [](double a, double b) {
    auto l = Ledger(a, b);
    l.rows[0].memory_busy_seconds += 0.06 * l.seconds,
        l.rows[2].memory_busy_seconds -= 0.06 * l.seconds;
    return l;
  });
  EXPECT_FALSE(wrong.met);
  EXPECT_NEAR(wrong.groups.at("time-slicing").traffic_worst, 6, 1e-9);
  EXPECT_EQ(wrong.groups.at("time-slicing").cpu_worst < 0.01, true) << "compute is still right";
  const auto unknown = ScoreRun(s, [](double a, double b) {
    auto l = Ledger(a, b);
    for (auto& r : l.rows) r.memory_busy_seconds = 0, r.memory_busy_rule = Rule::kNone;
    Row nobody{Owner{domain::OwnerKind::kUnattributed, {}, {}, {}}, 0, 0};
    nobody.memory_busy_seconds = l.seconds;
    nobody.memory_busy_rule = Rule::kActivityUnknown;
    l.rows.push_back(nobody);
    return l;
  });
  EXPECT_TRUE(unknown.met) << (unknown.misses.empty() ? "" : unknown.misses.front());
  EXPECT_NEAR(unknown.groups.at("time-slicing").memory_busy_unknown_s, 2 * 10, 1e-9);
  EXPECT_EQ(unknown.groups.at("time-slicing").traffic_worst, 0.0);
}

TEST(SimulateScore, AWrongSplitFails) {
  const auto s = Load();
  const auto r = ScoreRun(s, [](double a, double b) { return Ledger(a, b, 0.2, 0.3); });
  EXPECT_FALSE(r.met);
  EXPECT_NEAR(r.groups.at("time-slicing").cpu_worst, 10, 0.01);
}

TEST(SimulateScore, MemoryShortOfTheTruthFailsOutsideTheBound) {
  const auto s = Load();
  const auto r = ScoreRun(s, [](double a, double b) {
    auto l = Ledger(a, b);
    l.rows[0].memory_byte_seconds *= 0.9;
    return l;
  });
  EXPECT_FALSE(r.met);
  EXPECT_FALSE(r.memory_within_bound);
}

TEST(SimulateScore, AFaultWindowIsUnknownNotError) {
  const auto s = Load(R"(faults:
  - {kind: call-error, call: nvmlDeviceGetComputeRunningProcesses_v3, gpu: 0, code: 999, from_s: 4.2, to_s: 4.6}
)");
  const auto r = ScoreRun(s, [](double a, double b) {
    auto l = Ledger(a, b);
    if (a == 4) l.rows[0].memory_byte_seconds = l.rows[0].compute_seconds = 0;  // hidden
    l.rows[2].compute_seconds = l.seconds - l.rows[0].compute_seconds - l.rows[1].compute_seconds;
    return l;
  });
  EXPECT_TRUE(r.met) << (r.misses.empty() ? "" : r.misses.front());
  for (const auto& c : r.containers) EXPECT_DOUBLE_EQ(c.unknown_s, 1) << c.container;
}

// An estimated split of busy fraction `busy` evenly between a and b, each with the bound
// `bound` × the interval (the honest one is busy / 2: either may have run none to all of it).
UnitLedger EvenSplit(double from, double to, double busy, double bound) {
  auto l = Ledger(from, to, busy / 2, busy / 2, Rule::kEvenSplitNoSamples);
  l.rows[0].compute_bound_seconds = l.rows[1].compute_bound_seconds = bound * (to - from);
  // Their memory traffic (busy / 4 each) is split the same way, with its honest bound.
  l.rows[0].memory_busy_bound_seconds = l.rows[1].memory_busy_bound_seconds =
      busy / 4 * (to - from);
  return l;
}

TEST(SimulateScore, EstimatesAreScoredApartAndJudgedByTheirTotalAndTheirBound) {
  const auto s = Load();
  // A wrong split that keeps the unit's total (truth a 30 %, b 20 %): reported on its own row;
  // within its honest bound in every interval, so not a miss.
  auto r = ScoreRun(s, [](double a, double b) { return EvenSplit(a, b, 0.5, 0.25); });
  EXPECT_TRUE(r.met) << (r.misses.empty() ? "" : r.misses.front());
  ASSERT_EQ(r.groups.count("time-slicing/estimate"), 1u);
  EXPECT_EQ(r.groups.count("time-slicing"), 0u);
  const auto& g = r.groups.at("time-slicing/estimate");
  EXPECT_NEAR(g.cpu_worst, 5, 0.01);
  EXPECT_EQ(g.bound_n, 20);  // two containers × ten intervals
  EXPECT_EQ(g.bound_within, 20);
  EXPECT_NEAR(g.bound_mean_width_pp, 25, 1e-9);
  for (const auto& c : r.containers) {
    EXPECT_EQ(c.bound_n, 10) << c.container;
    EXPECT_NEAR(c.bound_s, 2.5, 1e-9) << c.container;
  }
  // A bound narrower than the error (±2 pp against 5 pp off) claims what it cannot: a miss that
  // says how often the truth was outside.
  r = ScoreRun(s, [](double a, double b) { return EvenSplit(a, b, 0.5, 0.02); });
  EXPECT_FALSE(r.met);
  ASSERT_EQ(r.misses.size(), 1u);
  EXPECT_NE(r.misses[0].find("within the estimate's bound in 0 of 20"), std::string::npos)
      << r.misses[0];
  // An estimate row with no bound claims exactness, and is judged so.
  r = ScoreRun(s, [](double a, double b) { return EvenSplit(a, b, 0.5, 0); });
  EXPECT_FALSE(r.met);
  // An estimate that loses activity is a miss, whatever its bound.
  r = ScoreRun(s, [](double a, double b) { return EvenSplit(a, b, 0.25, 1); });
  EXPECT_FALSE(r.met);
}

}  // namespace
}  // namespace gpumeter::app
