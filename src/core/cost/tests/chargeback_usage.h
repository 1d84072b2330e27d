// Stored usage for the chargeback's tests: BuildChargeback's own (core/cost/tests) and its
// renderers' (sinks/report/tests), which read the same usage so that each asserts only its part.
// Two hours of: an H100 time-sliced by search/a and ads/b; a 3g MIG instance of an H200 held by
// search/c; and a GPU of a model with no price. The variants add what one case needs.
#pragma once

#include <string>
#include <vector>

#include "core/attribution/usage_record.h"
#include "core/cost/chargeback.h"
#include "core/cost/pricing.h"

namespace gpumeter::cost::test_support {

inline domain::Owner C(const std::string& ns, const std::string& pod) {
  return {domain::OwnerKind::kContainer, ns, pod, "c"};
}

inline std::vector<attribution::UnitRecord> Usage() {
  using domain::OwnerKind;
  const double s = 7200, gib = 1024.0 * 1024 * 1024;
  attribution::UnitRecord ts{{"node-a", "GPU-1", "GPU-1", "NVIDIA H100 80GB HBM3", "",
                              domain::SharingMode::kTimeSlicing, 1.0},
                             s,
                             80 * gib * s,
                             0,
                             0,
                             {}};
  ts.owners = {{C("search", "a"), 30 * gib * s, 0.5 * s, 1000, 0.5 * s},
               {C("ads", "b"), 10 * gib * s, 0.2 * s, 400, 0.5 * s},
               {{OwnerKind::kIdle, {}, {}, {}}, 36 * gib * s, 0.3 * s, 600, 0},
               {{OwnerKind::kSystem, {}, {}, {}}, 4 * gib * s, 0, 0, 0}};
  attribution::UnitRecord mig{
      {"node-a", "MIG-1", "GPU-2", "NVIDIA H200", "3g.71gb", domain::SharingMode::kMig, 3.0 / 7},
      s,
      71 * gib * s,
      0,
      0,
      {}};
  mig.owners = {{C("search", "c"), 71 * gib * s, 0.9 * s, 2000, 1.0 * s}};
  attribution::UnitRecord odd{
      {"node-b", "GPU-9", "GPU-9", "Future GPU X", "", domain::SharingMode::kExclusive, 1.0},
      s,
      10 * gib * s,
      0,
      0,
      {}};
  odd.owners = {{C("ads", "d"), 10 * gib * s, 1.0 * s, 0, 1.0 * s}};
  return {ts, mig, odd};
}

// A pricing file's prices, without the default table: the H100 at 4, the H200 at 7 per GPU-hour.
inline Pricing FilePrices() {
  return *Pricing::Parse("gpu_models: {H100: 4.0, H200: 7.0}\ndefaults: false\n", "p.yaml");
}

inline const GroupTotals* Group(const Chargeback& c, const std::vector<GroupValue>& key) {
  for (const auto& g : c.groups)
    if (g.key == key) return &g;
  return nullptr;
}

// search/c ran on its MIG instance for the two hours, but nothing measured its activity (as on
// an A100 without DCGM): its compute is unknown, not 0; the unknown time itself is
// unattributed's (attribution).
inline std::vector<attribution::UnitRecord> UnknownComputeUsage() {
  auto usage = Usage();
  auto& c = usage[1].owners[0];
  c.compute_seconds = 0;
  c.compute_unknown_seconds = 7200;
  usage[1].owners.push_back({{domain::OwnerKind::kUnattributed, {}, {}, {}}, 0, 7200, 0, 0});
  return usage;
}

// Memory traffic: search/a moved memory 40 % of 2 h on the whole H100 (0.8 GPU-h), ads/b 10 %
// (0.2), the rest idle; search/c 60 % of 2 h on a 3/7 instance (0.514 GPU-h), 20 % of it
// estimated (± 0.4 × 3/7 h); the unpriced GPU's traffic was not measured (2 h unknown).
inline std::vector<attribution::UnitRecord> MemoryTrafficUsage() {
  using domain::OwnerKind;
  auto usage = Usage();
  const double s = 7200;
  usage[0].owners[0].memory_busy_seconds = 0.4 * s;
  usage[0].owners[1].memory_busy_seconds = 0.1 * s;
  usage[0].owners[2].memory_busy_seconds = 0.5 * s;
  usage[1].owners[0].memory_busy_seconds = 0.6 * s;
  usage[1].owners[0].memory_busy_bound_seconds = 0.2 * s;
  usage[1].owners.push_back({{OwnerKind::kIdle, {}, {}, {}}, 0, 0.1 * s, 0, 0});
  usage[1].owners.back().memory_busy_seconds = 0.4 * s;
  usage[2].owners[0].memory_busy_unknown_seconds = s;
  usage[2].owners.push_back({{OwnerKind::kUnattributed, {}, {}, {}}, 0, 0, 0, 0});
  usage[2].owners.back().memory_busy_seconds = s;
  return usage;
}

// The time-sliced H100's split was an estimate (an even split, no per-process samples) for the
// first hour: a's 0.5 h ± 0.3 h and b's 0.2 h ± 0.3 h.
inline std::vector<attribution::UnitRecord> EstimatedSplitUsage() {
  auto usage = Usage();
  usage[0].owners[0].compute_bound_seconds = 1080;  // search/a
  usage[0].owners[1].compute_bound_seconds = 1080;  // ads/b
  return usage;
}

// search/a's energy was estimated inside DCGM collections: ±0.5 kWh.
inline std::vector<attribution::UnitRecord> EstimatedEnergyUsage() {
  auto usage = Usage();
  usage[0].owners[0].energy_bound_joules = 1.8e6;
  return usage;
}

}  // namespace gpumeter::cost::test_support
