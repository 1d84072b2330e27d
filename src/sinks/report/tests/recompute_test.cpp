// Cost recomputed from the store under any policy equals cost computed from the same intervals
// held in memory ("live"): the store keeps usage, not cost, and its rollups lose nothing.
#include <gtest/gtest.h>

#include <algorithm>

#include <map>
#include <random>

#include "core/cost/chargeback.h"
#include "store/store.h"
#include "support/temp_dir.h"

namespace gpumeter::report {
namespace {

using domain::Owner;
using domain::OwnerKind;

TEST(Recompute, StoredUsageGivesTheLiveCostUnderEveryPolicy) {
  testing::TempDir dir("gpumeter-recompute");
  auto store = store::Store::Open((dir.path() / "usage.db").string());
  ASSERT_TRUE(store) << store.error().message;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> U(0, 1);
  const store::UnitKey units[] = {
      {"n", "GPU-1", "GPU-1", "NVIDIA H100 80GB HBM3", "", domain::SharingMode::kTimeSlicing, 1.0},
      {"n", "MIG-1", "GPU-2", "NVIDIA H200", "1g.18gb", domain::SharingMode::kMig, 1.0 / 7}};
  const Owner owners[] = {{OwnerKind::kContainer, "a", "p1", "c"},
                          {OwnerKind::kContainer, "b", "p2", "c"},
                          {OwnerKind::kIdle, {}, {}, {}},
                          {OwnerKind::kUnattributed, {}, {}, {}}};
  // Live: the same intervals summed in memory.
  std::map<store::UnitKey, store::UnitRecord> live;
  const int64_t t0 = 1'796'083'200 - 1234;
  for (int64_t t = t0; t < t0 + 5 * 3600; t += 13) {
    store::IntervalRecord rec;
    rec.end_unix_s = t;
    for (const auto& k : units) {
      store::UnitRecord u;
      u.unit = k;
      u.seconds = 13;
      u.memory_capacity_byte_seconds = 13 * 8e10;
      u.energy_joules = 13 * 300 * U(rng);
      double mem = 1, cmp = 1;
      for (const auto& o : owners) {
        const bool last = &o == &owners[3];
        const double m = last ? mem : mem * U(rng), c = last ? cmp : cmp * U(rng);
        mem -= m, cmp -= c;
        u.owners.push_back({o, m * 13 * 8e10, c * 13, 13 * U(rng),
                            o.kind == OwnerKind::kContainer ? 13 * 0.5 : 0});
      }
      rec.units.push_back(u);
      auto& l = live[k];
      l.unit = k;
      l.seconds += u.seconds;
      l.memory_capacity_byte_seconds += u.memory_capacity_byte_seconds;
      l.energy_joules += u.energy_joules;
      for (const auto& o : u.owners) {
        auto it = std::find_if(l.owners.begin(), l.owners.end(),
                               [&](const auto& x) { return x.owner == o.owner; });
        if (it == l.owners.end())
          l.owners.push_back(o);
        else {
          it->memory_byte_seconds += o.memory_byte_seconds;
          it->compute_seconds += o.compute_seconds;
          it->energy_joules += o.energy_joules;
          it->requested_share_seconds += o.requested_share_seconds;
        }
      }
    }
    ASSERT_TRUE((*store)->Write(rec));
  }
  std::vector<store::UnitRecord> live_units;
  for (auto& [k, u] : live) live_units.push_back(u);
  auto stored =
      (*store)->Usage(t0 - 3600, t0 + 7 * 3600);  // whole hours from rollups, edges from minutes
  ASSERT_TRUE(stored) << stored.error().message;
  const auto pricing = cost::Pricing::Defaults();
  for (auto basis :
       {cost::Basis::kMemory, cost::Basis::kCompute, cost::Basis::kBlend, cost::Basis::kRequest})
    for (auto idle : {cost::IdleRule::kShare, cost::IdleRule::kOwner, cost::IdleRule::kSeparate}) {
      const cost::Policy p{basis, 0.6, idle};
      const auto a = cost::BuildChargeback(live_units, {}, pricing, p, {"namespace"});
      const auto b = cost::BuildChargeback(*stored, {}, pricing, p, {"namespace"});
      ASSERT_EQ(a.groups.size(), b.groups.size()) << p.Name();
      EXPECT_NEAR(a.total.cost, b.total.cost, 1e-9 * a.total.cost) << p.Name();
      for (size_t i = 0; i < a.groups.size(); ++i) {
        EXPECT_EQ(a.groups[i].key, b.groups[i].key) << p.Name();
        EXPECT_NEAR(a.groups[i].cost, b.groups[i].cost, 1e-9 * a.total.cost) << p.Name();
        EXPECT_NEAR(a.groups[i].idle_cost, b.groups[i].idle_cost, 1e-9 * a.total.cost) << p.Name();
        EXPECT_NEAR(a.groups[i].compute_hours, b.groups[i].compute_hours, 1e-9) << p.Name();
      }
    }
}

}  // namespace
}  // namespace gpumeter::report
