// What the NVML source keeps about one physical GPU between passes (keyed by its UUID), and the
// context one device's reads share in a pass or a drain. Private to the NVML source; used on the
// sampling thread only. Every field's zero or empty value means "not learnt yet".
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "domain/gpu_types.h"
#include "sources/nvml/gpm_sample.h"
#include "sources/nvml/nvml_call.h"

namespace gpumeter::nvml {

// What Drain() read since the last pass that took it (buffer_drain.cpp).
struct Drained {
  std::optional<uint64_t> window_start_us;  // the first drained window's start
  uint64_t uncovered_us = 0;                // Σ of the drained windows' uncovered parts
  std::vector<gpu::ProcessUtilSample> util;
  std::vector<gpu::PowerSample> power;
  std::vector<gpu::CallError> errors;
};

struct GpuState {
  // Per-process utilization (process_utilization.cpp). The next window's start, epoch µs; none
  // before the first read that closed a window.
  std::optional<uint64_t> util_last_seen_us;
  uint64_t util_period_us = 0;  // the driver's sample period
  uint64_t util_span_us = 0;    // the buffer's span seen
  uint64_t util_oldest_us = 0;  // its oldest stamp at the last whole read
  // Board power samples: the newest read, epoch µs (power_samples.cpp).
  uint64_t power_last_seen_us = 0;
  // GPM (gpm_metrics.cpp): whether the GPU supports it, asked once; the last sample of the whole
  // GPU and of each MIG GPU instance (by its ID), the start of the next ratio.
  std::optional<bool> gpm_supported;
  std::unique_ptr<GpmSample> gpm_prev;
  std::map<unsigned int, std::unique_ptr<GpmSample>> gpm_prev_by_instance;
  // MIG (mig_instances.cpp): compute slices by GPU instance profile ID, read once; by MIG UUID.
  std::optional<std::map<unsigned int, unsigned int>> gi_profile_slices;
  std::map<std::string, uint32_t> mig_slices;
  std::optional<Drained> drained;  // none: nothing drained since the last pass took it
};

// One device's reads in one pass (or one drain): the calls, the GPU's handle and state, and the
// sample its readings go into and its failures are recorded on. Borrows all of them.
struct DeviceRead {
  const NvmlCalls& nvml;
  nvmlDevice_t h;
  GpuState& gpu;
  gpu::DeviceSample& dev;

  const NvmlApi& api() const { return nvml.api(); }
  template <Sym S, Sym Named = S, typename... Args>
  nvmlReturn_t Call(Args... args) const {
    return nvml.Call<S, Named>(args...);
  }
  template <Sym S, typename... Args>
  bool Ok(Args... args) const {
    return nvml.Ok<S>(dev, args...);
  }
  template <Sym S>
  bool Check(nvmlReturn_t rc) const {
    return nvml.Check<S>(dev, rc);
  }
  bool Check(const char* call, nvmlReturn_t rc) const { return nvml.Check(dev, call, rc); }
};

}  // namespace gpumeter::nvml
