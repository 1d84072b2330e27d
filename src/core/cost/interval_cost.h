// What one accounted interval cost, per unit and owner: the unit's price per GPU-hour (pricing
// file, node price by instance type, or the dated default table) × its share of the GPU × the
// interval's hours, split between its owners by the agent's policy and idle rule
// (cost/allocate.h) over that interval alone. Σ rows = the unit's cost, exactly as `report`
// splits a window (docs/pricing.md says where the two differ: idle placed per interval here).
// A unit the pricing has no price for has no cost, not a zero one (`price` unset). Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/attribution/attribute.h"
#include "core/cost/allocate.h"
#include "core/cost/pricing.h"

namespace gpumeter::cost {

struct IntervalCost {
  std::string uuid;                       // the unit
  std::optional<cost::PriceQuote> price;  // of a whole GPU; unset: no price, cost unknown
  double seconds = 0;                     // the ledger's
  double unit_cost = 0;               // price × gpu_fraction × seconds / 3600 (0 when unpriced)
  std::vector<cost::CostRow> rows;    // Σ cost = unit_cost
  std::vector<domain::Owner> owners;  // the ledger's: each has a known cost when priced
};

struct CostSettings {
  const cost::Pricing* pricing = nullptr;  // borrowed; null: nothing is priced
  cost::Policy policy;
  std::string instance_type;  // the node's, for node prices ("" : by model only)
  std::string region;         // the node's, named in a bundled price's source
};

// What pricing needs of a unit: its model, and its share of the GPU a price is quoted for.
struct PricedUnit {
  std::string uuid;  // GPU-… or MIG-…
  std::string model;
  double gpu_fraction = 1;  // of its physical GPU
};

// One entry per ledger, in its order. A ledger whose unit is not in `units` is unpriced (its
// model, hence its price, is not known).
std::vector<IntervalCost> CostOfInterval(const std::vector<attribution::UnitLedger>& ledgers,
                                         const std::vector<PricedUnit>& units,
                                         const CostSettings& settings);

}  // namespace gpumeter::cost
