#include "domain/gpu_types.h"

namespace gpumeter::gpu {

const std::vector<ClockEventReason>& ClockEventReasons() {
  // The bits of nvmlClocksEventReason* / nvmlClocksThrottleReason* (docs/nvml.md, "Health").
  static const std::vector<ClockEventReason> reasons{
      {0x1, "gpu_idle", false},       {0x2, "applications_clocks", false},
      {0x4, "sw_power_cap", false},   {0x8, "hw_slowdown", true},
      {0x10, "sync_boost", false},    {0x20, "sw_thermal", true},
      {0x40, "hw_thermal", true},     {0x80, "hw_power_brake", true},
      {0x100, "display_clock", false}};
  return reasons;
}

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
