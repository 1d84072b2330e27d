// MIG GPU-instance profiles of the GPUs that have MIG, from NVIDIA's MIG user guide ("Supported
// MIG Profiles"): each profile's fraction of the GPU's memory (in eighths) and of its compute
// (slices out of the model's total), and how many instances of it fit on one GPU. Rightsizing
// recommends from them; the scenario loader refuses instances no driver makes by them. Profiles
// with media extensions (+me, +me.all, -me) have the same memory and compute as their base and
// are found by it. Pure, immutable, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpumeter::domain {

struct MigProfile {
  std::string name;         // e.g. "1g.10gb"
  uint32_t memory_eighths;  // fraction of the GPU's memory: memory_eighths / 8 (8: the whole)
  uint32_t slices;          // compute slices out of MigModel::total_slices
  uint32_t max_instances;   // on one GPU
};

struct MigModel {
  // "A30 24GB", "A100 40GB", "A100 80GB", "H100 80GB", "H100 94GB", "H200 141GB", "B200 180GB"
  std::string model;
  uint32_t total_slices;             // 4 on an A30, 7 on the others
  std::vector<MigProfile> profiles;  // smallest first (by slices, then memory)
};

// Every model with a table.
const std::vector<MigModel>& MigModels();

// The table for an NVML device name ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB",
// "NVIDIA H100 NVL", "NVIDIA H200", "NVIDIA A30", "NVIDIA B200"), by its words; null when the GPU
// has no MIG or no table here.
const MigModel* MigModelFor(const std::string& nvml_name);

// The GPU-instance profile a driver's profile name is made on, in `model`: "3g.40gb", the same
// with a media extension ("1g.10gb+me", "2g.12gb+me.all", "1g.24gb-me") or a compute instance's
// name on it ("1c.3g.40gb"); null when the model has no such profile.
const MigProfile* FindMigProfile(const MigModel& model, std::string_view name);

}  // namespace gpumeter::domain
