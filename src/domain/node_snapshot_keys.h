// Names the snapshot's serialized form shares between its writer and reader (node_snapshot_json.h).
#pragma once

#include <optional>
#include <string_view>

#include "common/enum_names.h"
#include "domain/gpu_types.h"

namespace gpumeter::domain::snapshot_keys {

inline constexpr const char* kFormat = "gpumeter.node-snapshot";

inline constexpr EnumName<gpu::ProcessType> kProcessTypeNames[] = {
    {gpu::ProcessType::kCompute, "compute"}, {gpu::ProcessType::kMps, "mps"}};
static_assert(DistinctEnumNames(kProcessTypeNames));

inline const char* ProcessTypeName(gpu::ProcessType t) {
  return EnumToString(kProcessTypeNames, t, "compute");
}
inline std::optional<gpu::ProcessType> ParseProcessType(std::string_view s) {
  return EnumFromString(kProcessTypeNames, s);
}
// The inverse of gpu::ToString(ComputeMode).
inline std::optional<gpu::ComputeMode> ParseComputeMode(std::string_view s) {
  return gpu::ParseComputeMode(s);
}

}  // namespace gpumeter::domain::snapshot_keys
