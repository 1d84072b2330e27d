#include "domain/gpu_types.h"

#include "common/enum_names.h"

namespace gpumeter::gpu {
namespace {

constexpr EnumName<ComputeMode> kComputeModeNames[] = {
    {ComputeMode::kDefault, "default"},
    {ComputeMode::kExclusiveProcess, "exclusive-process"},
    {ComputeMode::kProhibited, "prohibited"},
    {ComputeMode::kUnknown, "unknown"}};
static_assert(DistinctEnumNames(kComputeModeNames));

}  // namespace

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

const char* ToString(ComputeMode mode) { return EnumToString(kComputeModeNames, mode, "unknown"); }

std::optional<ComputeMode> ParseComputeMode(std::string_view name) {
  return EnumFromString(kComputeModeNames, name);
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
