// The health events of a scenario's `faults` list (ecc-error, row-remap, page-retire, throttle,
// xid): what the GPU's ECC counters, remapped rows, retired pages and clocks-event reasons show
// from a time on. Parsing here, the
// state at a time in HealthAt; the fake NVML serves it, the agent reads it back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/yaml/reader.h"
#include "sim/scenario/model.h"

namespace gpumeter::scenario {

// Fills `out` (kind set by the caller: a health event's kind) from `f`; fails on the
// field at fault. Call names are refused: a health event fails no call.
void ParseHealthFault(const yaml::Field& f, Fault& out);
void ParseHealthFields(const yaml::Field& f, Fault& out);  // ParseHealthFault less to_s

// A fault kind by its name in the file (call-error, gpu-lost, delay, bad-value, ecc-error,
// row-remap, page-retire, throttle, xid); process-exit is no Fault and has none.
std::optional<FaultKind> FaultKindFromName(const std::string& name);

// What the health calls of GPU `gpu_index` report at scenario time `t_s`.
struct GpuHealth {
  uint64_t ecc_corrected = 0, ecc_uncorrected = 0;  // since the driver loaded (volatile)
  uint32_t remapped_correctable = 0, remapped_uncorrectable = 0;
  bool remap_pending = false, remap_failed = false;
  uint64_t clock_event_reasons = 0;  // the throttle events' bits (not the idle bit)
  uint32_t retired_single_bit = 0, retired_double_bit = 0;  // pages (before Ampere)
  bool retire_pending = false;
};
GpuHealth HealthAt(const Scenario& s, uint32_t gpu_index, double t_s);

// "hw_thermal" -> its bit; 0 for an unknown name: the label values of
// gpumeter_gpu_clock_event_reason (gpu::ClockEventReasons).
uint64_t ClockEventReasonBit(const std::string& name);

}  // namespace gpumeter::scenario
