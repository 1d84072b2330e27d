// Attributed usage as it is kept and read back over time: a unit described for pricing and
// grouping, and its ledger (attribute.h) summed over an interval, a minute, an hour or a window,
// without the rules. Written by the usage store (store/), read by reports and by the usage
// histories of rightsizing (core/rightsize); here, below both, so that neither depends on the
// other for its vocabulary. Plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/attribution/attribute.h"
#include "domain/sharing_mode.h"
#include "domain/unit_kind.h"

namespace gpumeter::attribution {

// What a unit is, for pricing and grouping. A unit whose mode or size changes is a new key.
struct UnitKey {
  // mig_profile: the unit's label (domain/unit_kind.h): "" for a whole GPU, a MIG instance's
  // profile, or "unpartitioned".
  std::string node, uuid, gpu_uuid, model, mig_profile;
  // nullopt: the reader was not told (a unit Prometheus has counters for but no info series).
  std::optional<domain::SharingMode> mode;
  double fraction = 1;  // of the physical GPU (MIG: its compute slices / the GPU's)
  auto operator<=>(const UnitKey&) const = default;
  // A key is stored and read back as its label alone, so its kind is the label's.
  domain::UnitKind Kind() const { return domain::UnitKindOfLabel(mig_profile); }
};

struct OwnerAmounts {
  Owner owner;
  double memory_byte_seconds = 0, compute_seconds = 0, energy_joules = 0,
         requested_share_seconds = 0;
  // Time in which the owner's compute was unknown (attribution::Row): compute_seconds is a lower
  // bound, compute_seconds + compute_unknown_seconds an upper one.
  double compute_unknown_seconds = 0;
  // The ± of compute_seconds where some of it was estimated (attribution::Row): the truth lies
  // within compute_seconds ± compute_bound_seconds. 0: measured.
  double compute_bound_seconds = 0;
  // Memory busy time (attribution::Row::memory_busy_seconds), its unknown time and its ±: as
  // compute.
  double memory_busy_seconds = 0, memory_busy_unknown_seconds = 0, memory_busy_bound_seconds = 0;
  // The ± of energy_joules where its split was estimated (attribution::Row): the truth lies within
  // energy_joules ± energy_bound_joules. 0: measured, or recorded before bounds were stored.
  double energy_bound_joules = 0;
};

// One unit over one interval, or summed over a window.
struct UnitRecord {
  UnitKey unit;
  double seconds = 0;
  double memory_capacity_byte_seconds = 0;
  double energy_joules = 0;  // of the time its energy was known
  double energy_unknown_seconds = 0;
  std::vector<OwnerAmounts> owners;
};

// A node as the agent saw it under one cloud identity, for matching a cloud bill's lines to it
// (core/cost/bill_match.h): the Node object's facts and the span of intervals recorded with them.
struct NodeRecord {
  std::string name;
  std::string provider_id;  // spec.providerID; "" when the node has none (kind, bare metal)
  std::string instance_id;  // GKE's container.googleapis.com/instance_id annotation, or ""
  std::string instance_type, region, zone, capacity_type;
  std::optional<int> gpu_count;  // the nvidia.com/gpu.count label, when the node carries one
  int64_t first_seen_unix_s = 0, last_seen_unix_s = 0;
};

}  // namespace gpumeter::attribution
