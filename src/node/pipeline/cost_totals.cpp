#include "node/pipeline/cost_totals.h"

namespace gpumeter::node {
namespace {

void AddToTotals(const std::vector<cost::IntervalCost>& costs, NodeState& next) {
  for (const auto& c : costs) {
    auto& ut = next.unit_totals[c.uuid];
    if (!c.price) {
      ut.unpriced_seconds += c.seconds;
      continue;
    }
    ut.price = c.price;
    ut.cost += c.unit_cost;
    for (const auto& r : c.rows) {
      auto& t = next.totals[{c.uuid, r.owner}];
      t.cost += r.cost;
      t.idle_cost += r.idle_cost;
      t.priced = true;
      // Every row has an owner of this interval's ledger, or is the idle row Allocate made (idle
      // cost kept apart, the ledger had none): current either way.
      t.last_interval = next.intervals;
    }
    for (const auto& o : c.owners) next.totals[{c.uuid, o}].priced = true;
  }
}

}  // namespace

void AddIntervalCost(const std::vector<attribution::UnitLedger>& ledgers,
                     const cost::CostSettings& settings, NodeState& next) {
  std::vector<cost::PricedUnit> units;
  units.reserve(next.units.size());
  for (const auto& u : next.units) units.push_back({u.uuid, u.model, u.gpu_fraction});
  AddToTotals(cost::CostOfInterval(ledgers, units, settings), next);
}

}  // namespace gpumeter::node
