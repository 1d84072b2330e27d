#include "domain/memory_signal.h"

namespace gpumeter::domain {

const char* ToString(MemorySignal s) {
  switch (s) {
    case MemorySignal::kNone:
      return "";
    case MemorySignal::kProcessMemUtil:
      return "nvml-process-memutil";
    case MemorySignal::kDeviceMemoryUtil:
      return "nvml-utilization-memory";
    case MemorySignal::kGpmDramBandwidth:
      return "gpm-dram-bw";
    case MemorySignal::kDcgmDramActive:
      return "dcgm-dram-active";
  }
  return "";
}

std::optional<MemorySignal> ParseMemorySignal(std::string_view name) {
  for (auto s :
       {MemorySignal::kNone, MemorySignal::kProcessMemUtil, MemorySignal::kDeviceMemoryUtil,
        MemorySignal::kGpmDramBandwidth, MemorySignal::kDcgmDramActive})
    if (name == ToString(s)) return s;
  return std::nullopt;
}

bool MeasuresTime(MemorySignal s) {
  return s == MemorySignal::kProcessMemUtil || s == MemorySignal::kDeviceMemoryUtil;
}

}  // namespace gpumeter::domain
