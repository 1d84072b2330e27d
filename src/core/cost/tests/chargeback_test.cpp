// The chargeback from stored usage: groups add up to Σ unit cost under every policy, MIG units
// cost their fraction, unpriced models are counted in hours but not cost, and unknown use,
// estimated splits and memory traffic carry their unknown hours and bounds into every group and
// the total. How each format renders them: sinks/report/tests/chargeback_test.cpp.
#include "core/cost/chargeback.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/cost/tests/chargeback_usage.h"

namespace gpumeter::cost {
namespace {

using domain::OwnerKind;
using test_support::FilePrices;
using test_support::Group;
using test_support::Usage;

TEST(Chargeback, HandComputedByNamespace) {
  const auto c = BuildChargeback(Usage(), {}, FilePrices(),
                                 {Basis::kMemory, 0.5, IdleRule::kSeparate}, {"namespace"});
  // H100: 2 h × $4 = $8: search 30/80 → 3, ads 10/80 → 1, idle (idle 36 + system 4) → 4.
  // H200 MIG 3/7: 2 h × $7 × 3/7 = $6, all search/c (memory full).
  ASSERT_NE(Group(c, {"search"}), nullptr);
  EXPECT_NEAR(Group(c, {"search"})->cost, 3 + 6, 1e-9);
  EXPECT_NEAR(Group(c, {"ads"})->cost, 1, 1e-9);
  EXPECT_NEAR(Group(c, {GroupValue::Idle()})->cost, 4, 1e-9);
  EXPECT_EQ(Group(c, {"__idle__"}), nullptr) << "idle is no name, though written as one";
  EXPECT_NEAR(c.total.cost, 14, 1e-9);
  // Hours held are GPU-equivalents: search 0.5 × 2 h + 1 × 2 h × 3/7.
  EXPECT_NEAR(Group(c, {"search"})->gpu_hours_held, 1 + 6.0 / 7, 1e-9);
  EXPECT_NEAR(Group(c, {"search"})->compute_hours, 0.5 * 2 + 0.9 * 2 * 3 / 7, 1e-9);
  EXPECT_NEAR(Group(c, {"ads"})->gpu_hours_held, 1 + 2, 1e-9)
      << "the unpriced GPU's hours still count";
  ASSERT_EQ(c.unpriced_models, std::vector<std::string>{"Future GPU X"});
  EXPECT_NEAR(Group(c, {"search"})->energy_kwh, 3000 / 3.6e6, 1e-15);
}

TEST(Chargeback, GroupsAddUpUnderEveryPolicyAndGrouping) {
  const auto pricing = Pricing::Defaults();
  const Labels labels{{{"search", "a"}, {{"team", "blue"}}}, {{"ads", "b"}, {{"team", "red"}}}};
  for (auto basis : {Basis::kMemory, Basis::kCompute, Basis::kBlend, Basis::kRequest})
    for (auto idle : {IdleRule::kShare, IdleRule::kOwner, IdleRule::kSeparate})
      for (const auto& by : std::vector<std::vector<std::string>>{{"namespace"},
                                                                  {"pod"},
                                                                  {"container"},
                                                                  {"label:team"},
                                                                  {"gpu_model"},
                                                                  {"node"},
                                                                  {"namespace", "gpu_model"}}) {
        const Policy p{basis, 0.3, idle};
        const auto c = BuildChargeback(Usage(), labels, pricing, p, by);
        double sum = 0;
        for (const auto& g : c.groups) sum += g.cost;
        EXPECT_NEAR(sum, c.total.cost, 1e-9 * c.total.cost) << p.Name();
        EXPECT_NEAR(c.total.cost, 2 * 6.88 + 2 * 7.91 * 3 / 7, 1e-9)
            << p.Name() << ": Σ unit cost = price × time";
      }
}

TEST(Chargeback, GroupByTexts) {
  EXPECT_EQ(*ParseGroupBy("namespace,label:team"),
            (std::vector<std::string>{"namespace", "label:team"}));
  for (const char* bad : {"team", "namespace,", "label:", ""}) {
    const auto g = ParseGroupBy(bad);
    ASSERT_FALSE(g) << bad;
    EXPECT_NE(g.error().message.find("--by"), std::string::npos);
  }
}

// search/c's compute on its MIG instance was never measured: unknown, not 0, so its efficiency
// is a range, never a zero.
TEST(Chargeback, UnknownComputeIsARangeNeverZeroEfficiency) {
  const auto cb = BuildChargeback(test_support::UnknownComputeUsage(), {}, FilePrices(),
                                  {Basis::kMemory, 0.5, IdleRule::kShare}, {"pod"});
  const GroupTotals* g = Group(cb, {"search/c"});
  ASSERT_NE(g, nullptr);
  EXPECT_FALSE(g->efficiency().has_value());
  ASSERT_TRUE(g->efficiency_bounds().has_value());
  EXPECT_DOUBLE_EQ(g->efficiency_bounds()->first, 0.0);
  EXPECT_DOUBLE_EQ(g->efficiency_bounds()->second, 1.0);
  EXPECT_NEAR(g->compute_unknown_hours, 2 * 3.0 / 7, 1e-12) << "GPU-equivalents, as compute";
  EXPECT_NEAR(cb.total.compute_unknown_hours, 2 * 3.0 / 7, 1e-12);
  EXPECT_FALSE(cb.total.efficiency().has_value()) << "the total hides the same unknown";
}

// Memory traffic in GPU-equivalent hours, containers only, with its unknown and its bound
// (test_support::MemoryTrafficUsage has the hand computation).
TEST(Chargeback, MemoryTrafficAddsUpWithItsUnknownAndBound) {
  const auto cb = BuildChargeback(test_support::MemoryTrafficUsage(), {}, FilePrices(),
                                  {Basis::kMemory, 0.5, IdleRule::kShare}, {"pod"});
  const auto* a = Group(cb, {"search/a"});
  const auto* c = Group(cb, {"search/c"});
  const auto* d = Group(cb, {"ads/d"});
  ASSERT_TRUE(a && c && d);
  EXPECT_NEAR(a->memory_busy_hours, 0.8, 1e-12);
  EXPECT_NEAR(c->memory_busy_hours, 1.2 * 3 / 7, 1e-12);
  EXPECT_NEAR(c->memory_busy_bound_hours, 0.4 * 3 / 7, 1e-12);
  EXPECT_EQ(d->memory_busy_hours, 0.0);
  EXPECT_NEAR(d->memory_busy_unknown_hours, 2.0, 1e-12) << "unknown, not 0";
  EXPECT_NEAR(cb.total.memory_busy_hours, 0.8 + 0.2 + 1.2 * 3 / 7, 1e-12) << "containers only";
  EXPECT_NEAR(cb.total.memory_busy_unknown_hours, 2.0, 1e-12);
}

// An estimated split carries its ± into its group and the total, and widens efficiency's range
// by it; units without an estimate have none.
TEST(Chargeback, EstimatedSplitsCarryTheirBound) {
  const auto cb = BuildChargeback(test_support::EstimatedSplitUsage(), {}, FilePrices(),
                                  {Basis::kMemory, 0.5, IdleRule::kShare}, {"pod"});
  const auto* a = Group(cb, {"search/a"});
  const auto* b = Group(cb, {"ads/b"});
  const auto* c = Group(cb, {"search/c"});
  ASSERT_TRUE(a && b && c);
  EXPECT_NEAR(a->compute_bound_hours, 0.3, 1e-12);
  EXPECT_EQ(c->compute_bound_hours, 0.0);
  EXPECT_NEAR(cb.total.compute_bound_hours, 0.6, 1e-12) << "a sum's bound is its parts'";
  ASSERT_TRUE(a->efficiency().has_value()) << "an estimate is still a value";
  EXPECT_NEAR(*a->efficiency(), 1.0, 1e-12);
  EXPECT_NEAR(a->efficiency_bounds()->first, 0.7, 1e-12);   // (1 - 0.3) / 1 GPU-h held
  EXPECT_NEAR(a->efficiency_bounds()->second, 1.3, 1e-12);  // (1 + 0.3) / 1
  EXPECT_NEAR(b->efficiency_bounds()->first, 0.1, 1e-12);   // (0.4 - 0.3) / 1 GPU-h held
}

// Energy estimated inside DCGM collections carries its ± into its group; the total, the units'
// measured energy, has none (the busy rows' and idle's bounds cancel).
TEST(Chargeback, EstimatedEnergyCarriesItsBound) {
  const auto cb = BuildChargeback(test_support::EstimatedEnergyUsage(), {}, FilePrices(),
                                  {Basis::kMemory, 0.5, IdleRule::kShare}, {"pod"});
  const auto* a = Group(cb, {"search/a"});
  const auto* c = Group(cb, {"search/c"});
  ASSERT_TRUE(a && c);
  EXPECT_NEAR(a->energy_bound_kwh, 0.5, 1e-12);
  EXPECT_EQ(c->energy_bound_kwh, 0.0);
  EXPECT_EQ(cb.total.energy_bound_kwh, 0.0);
}

// Two tenants of a time-sliced GPU whose split went unmeasured for half an hour: each one's use
// is unknown for that half hour, but the GPU had only one half hour: a group holding both, and
// the total, count it once; each alone may have used it all (its bound is not capped at 1).
TEST(Chargeback, OneUnknownTimeSharedByTenantsIsCountedOnce) {
  auto usage = Usage();
  auto& ts = usage[0];
  ts.owners[0].compute_unknown_seconds = 1800;  // search/a
  ts.owners[1].compute_unknown_seconds = 1800;  // ads/b
  ts.owners.push_back({{OwnerKind::kUnattributed, {}, {}, {}}, 0, 1800, 0, 0});
  ts.owners[2].compute_seconds -= 1800;  // idle gives the half hour up
  const auto pricing = FilePrices();
  const auto by_pod =
      BuildChargeback(usage, {}, pricing, {Basis::kMemory, 0.5, IdleRule::kShare}, {"pod"});
  EXPECT_NEAR(by_pod.total.compute_unknown_hours, 0.5, 1e-12) << "not 1.0";
  for (const auto& g : by_pod.groups)
    if (g.key[0] == "search/a" || g.key[0] == "ads/b") {
      EXPECT_NEAR(g.compute_unknown_hours, 0.5, 1e-12) << g.key[0].label();
      // Held 0.5 × 2 h = 1 GPU-h; used ≥ 1 h (a) or 0.4 h (b), and up to half an hour more.
      ASSERT_TRUE(g.efficiency_bounds()) << g.key[0].label();
      EXPECT_NEAR(g.efficiency_bounds()->second - g.efficiency_bounds()->first, 0.5, 1e-12);
    }
  for (const auto& g : by_pod.groups)
    if (g.key[0] == "search/a") {
      EXPECT_NEAR(g.efficiency_bounds()->second, 1.5, 1e-12) << "above 1";
    }
  // Both tenants in one group (the node): once.
  const auto by_node =
      BuildChargeback(usage, {}, pricing, {Basis::kMemory, 0.5, IdleRule::kShare}, {"node"});
  for (const auto& g : by_node.groups)
    if (g.key[0] == "node-a") {
      EXPECT_NEAR(g.compute_unknown_hours, 0.5, 1e-12);
    }
}

}  // namespace
}  // namespace gpumeter::cost
