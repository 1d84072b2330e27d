// Splits what a unit (a GPU or MIG instance) cost over a window between its owners, under a named
// policy. Pure. The unit's cost is price per GPU-hour × its fraction of the GPU × the hours it
// was accounted; every row of the result records the policy, and the rows add up to that cost
// (relative error ≤ 1e-9), whatever the policy: nothing is dropped and nothing is counted twice.
//
// Basis (what a container's *used* cost follows): memory (byte-seconds over the unit's memory
// capacity), compute (compute-seconds over the unit's seconds), blend:α (α × compute + (1 − α) ×
// memory) or request (the share it held × seconds). What no container used — idle, system,
// unattributed, or unrequested for `request` — is the unit's idle cost, which the idle rule
// places: share (over the containers in proportion to their used cost; when no container used
// the unit, over those that held it, by the share they held), owner (over the containers that
// held the unit, in proportion to the share they held) or separate (an `idle` row). With nobody
// to place it on (no user, no holder), idle cost stays on the `idle` row under every rule.
// Docs: docs/pricing.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "core/attribution/attribute.h"

namespace gpumeter::cost {

enum class Basis { kMemory, kCompute, kBlend, kRequest };
enum class IdleRule { kShare, kOwner, kSeparate };

struct Policy {
  Basis basis = Basis::kMemory;
  double alpha = 0.5;  // kBlend: weight of compute
  IdleRule idle = IdleRule::kShare;
  std::string Name() const;  // "memory", "blend:0.7", … with "/idle=share"
};

// "memory" | "compute" | "request" | "blend:α" (α in [0, 1]); errors name the text.
Expected<Basis> ParseBasis(std::string_view text, double* alpha);
// "share" | "owner" | "separate".
Expected<IdleRule> ParseIdleRule(std::string_view text);

// One owner's usage of the unit over the window (sums of the attribution rows).
struct OwnerUsage {
  domain::Owner owner;
  double memory_byte_seconds = 0, compute_seconds = 0, energy_joules = 0,
         requested_share_seconds = 0;
};

struct UnitUsage {
  double seconds = 0;                       // time the unit was accounted in the window
  double memory_capacity_byte_seconds = 0;  // Σ capacity × seconds
  double cost = 0;                          // price × fraction × seconds / 3600
  std::vector<OwnerUsage> owners;           // containers, idle, system, unattributed
};

struct CostRow {
  domain::Owner owner;
  double cost = 0;       // used cost plus the idle cost placed on this owner
  double idle_cost = 0;  // the part of `cost` that is idle placed here (all of it on `idle` rows)
};

// The cost rows of a unit: one per container with a cost or a holding, and an `idle` row when
// idle cost stays unplaced. Σ cost = unit.cost; a negative cost (a refund on a bill) is split as
// its magnitude would be, every row negative.
std::vector<CostRow> Allocate(const UnitUsage& unit, const Policy& policy);

}  // namespace gpumeter::cost
