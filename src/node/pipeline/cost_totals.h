// The running cost totals of a NodeState, from what each accounted interval cost
// (core/cost/interval_cost.h). Pure.
#pragma once

#include <vector>

#include "core/attribution/attribute.h"
#include "core/cost/interval_cost.h"
#include "node/state/node_state.h"

namespace gpumeter::node {

// Prices the interval's ledgers by `next.units` (a unit it does not list is unpriced) and adds
// the costs to the running totals: each unit's cost (or its unpriced time) and latest price, each
// row's cost and idle cost on its owner (creating the `idle` row's totals); the ledger's owners
// without a row cost 0 in it, which is known.
// Call after the interval's ledgers were added, with its NodeState::intervals.
void AddIntervalCost(const std::vector<attribution::UnitLedger>& ledgers,
                     const cost::CostSettings& settings, NodeState& next);

}  // namespace gpumeter::node
