#include "core/cost/interval_cost.h"

namespace gpumeter::cost {

std::vector<IntervalCost> CostOfInterval(const std::vector<attribution::UnitLedger>& ledgers,
                                         const std::vector<PricedUnit>& units,
                                         const CostSettings& settings) {
  std::vector<IntervalCost> out;
  out.reserve(ledgers.size());
  for (const auto& l : ledgers) {
    IntervalCost c;
    c.uuid = l.uuid;
    c.seconds = l.seconds;
    for (const auto& r : l.rows) c.owners.push_back(r.owner);
    const PricedUnit* unit = nullptr;
    for (const auto& u : units)
      if (u.uuid == l.uuid) unit = &u;
    if (unit && settings.pricing)
      c.price = settings.pricing->Quote(unit->model, settings.instance_type, settings.region);
    if (c.price && l.seconds > 0) {
      cost::UnitUsage usage;
      usage.seconds = l.seconds;
      usage.memory_capacity_byte_seconds = l.memory_capacity_byte_seconds;
      usage.cost = c.price->per_gpu_hour * unit->gpu_fraction * l.seconds / 3600;
      for (const auto& r : l.rows)
        usage.owners.push_back({r.owner, r.memory_byte_seconds, r.compute_seconds, r.energy_joules,
                                r.requested_share_seconds});
      c.unit_cost = usage.cost;
      c.rows = cost::Allocate(usage, settings.policy);
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace gpumeter::cost
