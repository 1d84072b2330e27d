// What the DCGM activity source reads from a dcgm-exporter page (docs/attribution.md, "DCGM"):
// the graphics-engine activity of each GPU and MIG GPU instance, and a fingerprint of each GPU's
// series that changes when the exporter collects again. Pure; plain values.
//
// And each one's memory traffic, DCGM_FI_PROF_DRAM_ACTIVE (DCGM_FI_PROF_DRAM_UTIL_RATIO in 4.x).
// The field is DCGM_FI_PROF_GR_ENGINE_ACTIVE, renamed DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO in DCGM
// 4.6 (both are read; the new name wins where a page has both). A series is keyed by its `UUID`
// label (`uuid` with the exporter's -o flag), the parent GPU on MIG, and `GPU_I_ID`: absent means
// the whole GPU. The host is `Hostname` before dcgm-exporter PR #655 (2026-05), `hostname` after.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/prom/prom_text.h"

namespace gpumeter::dcgm {

// A GPU (gpu_instance_id empty) or one of its MIG GPU instances; `dram`: its DRAM_ACTIVE series
// rather than its GR engine activity.
struct DcgmKey {
  std::string gpu_uuid;  // "GPU-…": the parent on MIG
  std::optional<uint32_t> gpu_instance_id;
  bool dram = false;
  auto operator<=>(const DcgmKey&) const = default;
};

struct DcgmPage {
  // GR engine activity, [0, 1] (clamped: DCGM's profiling ratios can overshoot on MIG).
  std::map<DcgmKey, double> gr_active;
  // DRAM_ACTIVE (ratio of cycles the memory interface moved data), [0, 1]; keys without `dram`.
  std::map<DcgmKey, double> dram_active;
  // Per GPU UUID, a hash of every series of that GPU on the page (any field): equal hashes on
  // two reads mean the exporter did not collect in between.
  std::map<std::string, uint64_t> gpu_fingerprint;
  std::set<std::string> hosts;  // the `hostname`/`Hostname` labels seen
  size_t samples = 0;
  // Series of the activity field skipped: no UUID, a GPU_I_ID that is not a number, or a value
  // that is NaN, ±Inf or negative. The first few as "line N: why", for doctor and logs.
  size_t skipped = 0;
  std::vector<std::string> skipped_why;
};

// The activity field under its two names: the DCGM ≥ 4.6 name first.
inline constexpr const char* kGrEngineUtilRatio = "DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO";
inline constexpr const char* kGrEngineActive = "DCGM_FI_PROF_GR_ENGINE_ACTIVE";
// Memory traffic under its two names (nvml-health.md §7): DCGM 4.x's first.
inline constexpr const char* kDramUtilRatio = "DCGM_FI_PROF_DRAM_UTIL_RATIO";
inline constexpr const char* kDramActive = "DCGM_FI_PROF_DRAM_ACTIVE";

DcgmPage ReadDcgmPage(const prom::PromPage& page);

}  // namespace gpumeter::dcgm
