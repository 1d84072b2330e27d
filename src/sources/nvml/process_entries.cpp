#include "sources/nvml/process_entries.h"

#include <cstring>

#include "sources/nvml/nvml_abi.h"

namespace gpumeter::nvml::detail {

std::vector<gpu::GpuProcess> DecodeProcessEntries(const unsigned char* buf, size_t count,
                                                  size_t stride, gpu::ProcessType type) {
  std::vector<gpu::GpuProcess> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const unsigned char* e = buf + i * stride;
    unsigned int pid = 0;
    unsigned long long mem = 0;
    std::memcpy(&pid, e, sizeof pid);
    std::memcpy(&mem, e + 8, sizeof mem);
    gpu::GpuProcess p;
    p.pid = pid;
    p.type = type;
    if (mem != NVML_VALUE_NOT_AVAILABLE_ULL) p.used_memory_bytes = mem;
    if (stride >= 24) {
      unsigned int gi = 0, ci = 0;
      std::memcpy(&gi, e + 16, sizeof gi);
      std::memcpy(&ci, e + 20, sizeof ci);
      if (gi != NVML_VALUE_NOT_AVAILABLE_UINT) p.gpu_instance_id = gi;
      if (ci != NVML_VALUE_NOT_AVAILABLE_UINT) p.compute_instance_id = ci;
    }
    out.push_back(p);
  }
  return out;
}

size_t CountImplausible(const std::vector<gpu::GpuProcess>& entries, uint64_t device_total_bytes) {
  constexpr uint32_t kPidMax = 4194304;  // Linux PID_MAX_LIMIT
  constexpr uint32_t kMaxMigId = 64;
  size_t bad = 0;
  for (const auto& p : entries) {
    const bool implausible =
        p.pid == 0 || p.pid > kPidMax ||
        (p.used_memory_bytes && device_total_bytes && *p.used_memory_bytes > device_total_bytes) ||
        (p.gpu_instance_id && *p.gpu_instance_id > kMaxMigId) ||
        (p.compute_instance_id && *p.compute_instance_id > kMaxMigId);
    bad += implausible ? 1 : 0;
  }
  return bad;
}

}  // namespace gpumeter::nvml::detail
