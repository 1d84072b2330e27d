// The per-feature readers of one device, each over the GPU's state (gpu_state.h), each in a file
// of its own. Private to the NVML source; sampling thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "domain/gpu_types.h"
#include "sources/nvml/gpu_state.h"
#include "sources/nvml/process_lists.h"

namespace gpumeter::nvml {

// The memory of a GPU or MIG instance behind `h`, through _v2 where the driver takes it; failures
// recorded on `dev` (nvml_gpu_source.cpp).
std::optional<gpu::MemoryInfo> ReadMemory(const NvmlCalls& nvml, nvmlDevice_t h,
                                          gpu::DeviceSample& dev);

// Per-process utilization samples since the GPU's window start into r.dev, which it closes;
// false when the read failed (the window stays open for the next read). The first read reaches
// `first_lookback_us` back from `now_us` (process_utilization.cpp).
bool ReadProcessUtilization(const DeviceRead& r, uint64_t now_us, uint64_t first_lookback_us);

// Board power samples from the per-process window's start (the newest read where there is none)
// into r.dev.power_samples (power_samples.cpp).
void ReadPowerSamples(const DeviceRead& r);

// Clocks-event reasons, ECC counters, remapped rows, retired pages into r.dev.health
// (health_reads.cpp).
void ReadHealth(const DeviceRead& r);

// GPM ratios of the whole GPU, or of its GPU instance `gi`, over the time since its last sample,
// in [0, 1]: SM activity and the share of peak DRAM bandwidth; each unknown where the driver did
// not give it. Only where Capabilities::gpm (gpm_metrics.cpp).
struct GpmReading {
  std::optional<double> sm, dram_bw;
};
GpmReading GpmActivity(const DeviceRead& r, std::optional<unsigned int> gi);

// The MIG instances of a MIG-enabled GPU into r.dev.mig_instances, and its total slices
// (mig_instances.cpp).
void ReadMigInstances(const DeviceRead& r, ProcessLists& procs, const gpu::Capabilities& caps);

// Draining (buffer_drain.cpp). DrainGpu reads the GPU's buffers into r.gpu.drained (board power
// only with `power_only`) and appends the PIDs of the per-process samples it read to `pids`;
// r.dev is scratch. TakeDrained merges them into the pass's r.dev, whose window it extends back
// to the first drained window's start; with `window_closed` false (the pass's read failed) only
// the errors are taken and the samples wait with the open window. TakeDrainedPower: the power
// samples only, before the pass's own (MIG-enabled GPUs, which have no per-process window).
void DrainGpu(const DeviceRead& r, bool power_only, uint64_t now_us, uint64_t first_lookback_us,
              std::vector<uint32_t>& pids);
void TakeDrained(GpuState& gpu, gpu::DeviceSample& dev, bool window_closed);
void TakeDrainedPower(GpuState& gpu, gpu::DeviceSample& dev);

}  // namespace gpumeter::nvml
