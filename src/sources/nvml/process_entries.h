// Decoding of NVML running-process buffers, whose entry stride depends on the driver (16 bytes
// for v1, 24 for _v2/_v3, 32 for _v3 on drivers 535.43–535.86; docs/nvml.md §3.3).
// Pure functions, exposed for unit tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "domain/gpu_types.h"

namespace gpumeter::nvml::detail {

// Decodes `count` entries of `stride` bytes (16, 24 or 32) from `buf`.
std::vector<gpu::GpuProcess> DecodeProcessEntries(const unsigned char* buf, size_t count,
                                                  size_t stride, gpu::ProcessType type);

// Entries that cannot be real: pid 0 or above pid_max, memory above the device's total, or MIG
// ids that are neither "not MIG" (0xFFFFFFFF) nor small. Two or more suggest a wrong stride.
size_t CountImplausible(const std::vector<gpu::GpuProcess>& entries, uint64_t device_total_bytes);

}  // namespace gpumeter::nvml::detail
