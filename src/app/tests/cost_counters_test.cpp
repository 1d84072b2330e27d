// The agent's cost counters (each interval split on its own) against `report`'s chargeback (the
// window split at once) over the same usage, node-8gpu from scenario second 80 to 150 at
// irregular steps (ctr-0 stops at 100 s, the debug shell and the MPS pair change), for every
// basis and idle rule the agent can be given. Under --idle separate each namespace agrees to
// 1e-9 of the total; under share and owner only the total must, and the per-namespace difference
// is measured and printed (docs/pricing.md, "Per interval, not per window").
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <map>

#include "app/tests/scenario_pipeline.h"
#include "core/cost/chargeback.h"

namespace gpumeter::app {
namespace {

// The state's running totals as the store would hand them to `report`: one record per unit.
std::vector<attribution::UnitRecord> Records(const node::NodeState& s) {
  std::vector<attribution::UnitRecord> out;
  for (const auto& [uuid, ut] : s.unit_totals) {
    const auto* u = s.FindUnit(uuid);
    if (!u) continue;
    attribution::UnitRecord r;
    r.unit = {s.node, uuid, u->gpu_uuid, u->model, u->mig_profile, u->mode, u->gpu_fraction};
    r.seconds = ut.seconds;
    r.memory_capacity_byte_seconds = ut.memory_capacity_byte_seconds;
    for (const auto& [key, t] : s.totals)
      if (key.first == uuid)
        r.owners.push_back({key.second, t.memory_byte_seconds, t.compute_seconds, t.energy_joules,
                            t.requested_share_seconds, t.compute_unknown_seconds});
    out.push_back(std::move(r));
  }
  return out;
}

TEST(CostCounters, EqualTheChargebackUnderSeparateAndInTotalUnderEveryRule) {
  const auto pricing = cost::Pricing::Defaults();
  for (const char* basis : {"memory", "compute", "blend:0.3", "request"})
    for (const auto idle :
         {cost::IdleRule::kSeparate, cost::IdleRule::kShare, cost::IdleRule::kOwner}) {
      cost::Policy policy;
      policy.basis = *cost::ParseBasis(basis, &policy.alpha);
      policy.idle = idle;
      testing::ScenarioPipeline run(gpumeter::testing::ScenarioPath("node-8gpu"), 80,
                                    [&](node::PipelineOptions& po) {
                                      po.pricing = &pricing;
                                      po.cost_policy = policy;
                                    });
      ASSERT_TRUE(run.ok());
      double t = 80;
      for (int k = 0; t < 150; ++k, t += 0.37 + 0.11 * (k % 7)) run.Pass(t);
      const auto s = run.Latest();
      std::map<std::string, double> counters;  // by namespace, containers only
      double counters_total = 0;
      for (const auto& [key, v] : s->totals) {
        ASSERT_TRUE(v.priced) << key.second.pod;
        counters_total += v.cost;
        if (key.second.kind == domain::OwnerKind::kContainer) counters[key.second.ns] += v.cost;
      }
      const auto cb = cost::BuildChargeback(Records(*s), {}, pricing, policy, {"namespace"});
      ASSERT_GT(cb.total.cost, 0);
      EXPECT_NEAR(counters_total, cb.total.cost, 1e-9 * cb.total.cost) << policy.Name();
      double worst = 0;
      std::string worst_ns;
      for (const auto& g : cb.groups) {
        const std::string& ns = g.key[0].label();
        const auto it = counters.find(ns);
        if (it == counters.end()) continue;  // idle, system, unattributed
        const double d = std::abs(it->second - g.cost) / cb.total.cost;
        if (d > worst) worst = d, worst_ns = ns;
        if (idle == cost::IdleRule::kSeparate) {
          EXPECT_NEAR(it->second, g.cost, 1e-9 * cb.total.cost) << policy.Name() << " " << ns;
        }
      }
      std::cout << "  " << policy.Name() << ": largest namespace difference " << worst * 100
                << " % of the total (" << (worst_ns.empty() ? "-" : worst_ns) << ")\n";
    }
}

}  // namespace
}  // namespace gpumeter::app
