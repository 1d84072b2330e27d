// MIG GPU-instance profiles of the GPUs that rightsizing can recommend for, from NVIDIA's MIG
// user guide ("Supported MIG Profiles"): each profile's fraction of the GPU's memory (in eighths)
// and of its compute (slices out of 7), and how many instances of it fit on one GPU. Profiles with
// media extensions (+me) have the same memory and compute and are left out. Pure, immutable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpumeter::rightsize {

struct MigProfile {
  std::string name;         // e.g. "1g.10gb"
  uint32_t memory_eighths;  // fraction of the GPU's memory: memory_eighths / 8 (8: the whole)
  uint32_t slices;          // compute slices out of kMigSlices
  uint32_t max_instances;   // on one GPU
};

inline constexpr uint32_t kMigSlices = 7;

// A real instance holds a little less than its fraction of the GPU's memory (the driver's
// reservation per instance: in the sizes we know, 94-99 %). An instance is counted at this much
// of its fraction, so that a target that fits the count fits the instance.
inline constexpr double kMigMemoryUsable = 0.93;

// The memory counted for profile `p` on a GPU of `gpu_memory_bytes`.
inline double MigProfileMemory(const MigProfile& p, double gpu_memory_bytes) {
  return p.memory_eighths / 8.0 * gpu_memory_bytes * kMigMemoryUsable;
}

struct MigModel {
  std::string model;  // "A100-SXM4-40GB", "A100 80GB", "H100 80GB", "H100 94GB", "H200 141GB"
  std::vector<MigProfile> profiles;  // smallest first (by slices, then memory)
};

// Every model with a table.
const std::vector<MigModel>& MigModels();

// The table for an NVML device name ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB",
// "NVIDIA H100 NVL", "NVIDIA H200"), by its words; null when the GPU has no MIG or no table here.
const MigModel* MigModelFor(const std::string& nvml_name);

}  // namespace gpumeter::rightsize
