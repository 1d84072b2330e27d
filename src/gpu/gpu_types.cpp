#include "gpu/gpu_types.h"

namespace gpumeter::gpu {

const char* ToString(ComputeMode mode) {
  switch (mode) {
    case ComputeMode::kDefault: return "default";
    case ComputeMode::kExclusiveProcess: return "exclusive-process";
    case ComputeMode::kProhibited: return "prohibited";
    case ComputeMode::kUnknown: return "unknown";
  }
  return "unknown";
}

}  // namespace gpumeter::gpu
