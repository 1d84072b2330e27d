// Which signal gave a unit's memory busy time ("bandwidth") in an interval. They measure two
// different things, and no NVIDIA source converts one into the other (docs/attribution.md,
// "Definitions of use"): the part of the time device memory was read or written (NVML's
// per-process memUtil and utilization.memory), or the share of the memory's peak bandwidth used
// (GPM DRAM_BW_UTIL, DCGM DRAM_ACTIVE). A unit's rows always come from one signal.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpumeter::domain {

enum class MemorySignal : uint8_t {
  kNone,              // unknown: no signal this interval
  kProcessMemUtil,    // per-process memUtil samples (time with memory access)
  kDeviceMemoryUtil,  // utilization.memory of the driver's last period (time; one instant)
  kGpmDramBandwidth,  // GPM DRAM_BW_UTIL (share of peak bandwidth)
  kDcgmDramActive,    // DCGM DRAM_ACTIVE (share of cycles the memory interface moved data)
};

// "" for kNone; else "nvml-process-memutil", "nvml-utilization-memory", "gpm-dram-bw",
// "dcgm-dram-active". A static string.
const char* ToString(MemorySignal s);
std::optional<MemorySignal> ParseMemorySignal(std::string_view name);
// True for the signals that measure time with memory access, false for shares of bandwidth.
bool MeasuresTime(MemorySignal s);

}  // namespace gpumeter::domain
