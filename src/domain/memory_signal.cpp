#include "domain/memory_signal.h"

#include "common/enum_names.h"

namespace gpumeter::domain {
namespace {

constexpr EnumName<MemorySignal> kNames[] = {
    {MemorySignal::kNone, ""},
    {MemorySignal::kProcessMemUtil, "nvml-process-memutil"},
    {MemorySignal::kDeviceMemoryUtil, "nvml-utilization-memory"},
    {MemorySignal::kGpmDramBandwidth, "gpm-dram-bw"},
    {MemorySignal::kDcgmDramActive, "dcgm-dram-active"}};
static_assert(DistinctEnumNames(kNames));

}  // namespace

const char* ToString(MemorySignal s) { return EnumToString(kNames, s, ""); }

std::optional<MemorySignal> ParseMemorySignal(std::string_view name) {
  return EnumFromString(kNames, name);
}

bool MeasuresTime(MemorySignal s) {
  return s == MemorySignal::kProcessMemUtil || s == MemorySignal::kDeviceMemoryUtil;
}

}  // namespace gpumeter::domain
