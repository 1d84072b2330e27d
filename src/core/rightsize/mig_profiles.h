// What rightsizing counts of a MIG profile (the table itself: domain/mig_profiles.h). Pure.
#pragma once

#include "domain/mig_profiles.h"

namespace gpumeter::rightsize {

using domain::MigModel;
using domain::MigModelFor;
using domain::MigModels;
using domain::MigProfile;

// A real instance holds a little less than its fraction of the GPU's memory (the driver's
// reservation per instance: in the sizes we know, 94-99 %). An instance is counted at this much
// of its fraction, so that a target that fits the count fits the instance.
inline constexpr double kMigMemoryUsable = 0.93;

// The memory counted for profile `p` on a GPU of `gpu_memory_bytes`.
inline double MigProfileMemory(const MigProfile& p, double gpu_memory_bytes) {
  return p.memory_eighths / 8.0 * gpu_memory_bytes * kMigMemoryUsable;
}

// Profile `p`'s share of the GPU's compute in `model`.
inline double MigComputeShare(const MigModel& model, const MigProfile& p) {
  return static_cast<double>(p.slices) / model.total_slices;
}

}  // namespace gpumeter::rightsize
