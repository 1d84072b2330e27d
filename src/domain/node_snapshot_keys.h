// Names the snapshot's serialized form shares between its writer and reader (node_snapshot_json.h).
#pragma once

#include <optional>
#include <string_view>

#include "domain/gpu_types.h"

namespace gpumeter::domain::snapshot_keys {

inline constexpr const char* kFormat = "gpumeter.node-snapshot";

inline const char* ProcessTypeName(gpu::ProcessType t) {
  return t == gpu::ProcessType::kMps ? "mps" : "compute";
}
inline std::optional<gpu::ProcessType> ParseProcessType(std::string_view s) {
  if (s == "compute") return gpu::ProcessType::kCompute;
  if (s == "mps") return gpu::ProcessType::kMps;
  return std::nullopt;
}
// The inverse of gpu::ToString(ComputeMode).
inline std::optional<gpu::ComputeMode> ParseComputeMode(std::string_view s) {
  for (const auto m : {gpu::ComputeMode::kDefault, gpu::ComputeMode::kExclusiveProcess,
                       gpu::ComputeMode::kProhibited, gpu::ComputeMode::kUnknown})
    if (s == gpu::ToString(m)) return m;
  return std::nullopt;
}

}  // namespace gpumeter::domain::snapshot_keys
