// The running processes of a GPU or MIG instance (nvmlDeviceGetComputeRunningProcesses and its
// MPS twin), through the newest version the driver has, whose entry stride it learns (docs/nvml.md
// §3.3). Private to the NVML source. Not thread-safe: the sampling thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "domain/gpu_types.h"
#include "sources/nvml/nvml_call.h"

namespace gpumeter::nvml {

class ProcessLists {
 public:
  // Picks the newest entry points `api` has; returns what it picked, for
  // Capabilities::process_api ("" when the driver has none).
  std::string Detect(const NvmlApi& api);
  // Compute then MPS processes on `h`; failures recorded on `dev`. `total_bytes`: the device's
  // memory, to tell implausible entries (0: unknown).
  std::vector<gpu::GpuProcess> Read(const NvmlCalls& nvml, nvmlDevice_t h, gpu::DeviceSample& dev,
                                    uint64_t total_bytes);

 private:
  void ReadList(const NvmlCalls& nvml, nvmlDevice_t h, gpu::DeviceSample& dev, bool mps,
                uint64_t total_bytes, std::vector<gpu::GpuProcess>& out);

  NvmlApi::nvmlDeviceGetComputeRunningProcesses_v3_fn compute_ = nullptr;
  NvmlApi::nvmlDeviceGetMPSComputeRunningProcesses_v3_fn mps_ = nullptr;
  size_t stride_ = 0;  // bytes per entry
};

}  // namespace gpumeter::nvml
