#include "domain/gpu_types.h"

namespace gpumeter::gpu {

const char* ToString(ComputeMode mode) {
  switch (mode) {
    case ComputeMode::kDefault:
      return "default";
    case ComputeMode::kExclusiveProcess:
      return "exclusive-process";
    case ComputeMode::kProhibited:
      return "prohibited";
    case ComputeMode::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::map<uint32_t, uint32_t> LatestSmPercent(const DeviceSample& device) {
  std::map<uint32_t, uint32_t> sm;
  std::map<uint32_t, uint64_t> newest;
  for (const auto& s : device.process_util) {
    auto [it, fresh] = newest.try_emplace(s.pid, s.timestamp_us);
    if (fresh || s.timestamp_us >= it->second) {
      it->second = s.timestamp_us;
      sm[s.pid] = s.sm_percent;
    }
  }
  return sm;
}

}  // namespace gpumeter::gpu
