#include "sources/nvml/process_lists.h"

#include "sources/nvml/nvml_gpu_source.h"
#include "sources/nvml/process_entries.h"

namespace gpumeter::nvml {
namespace {
constexpr int kMaxSizeRetries = 8;  // the list can grow between the two calls of the pattern
}  // namespace

std::string ProcessLists::Detect(const NvmlApi& api) {
  // _v3 wrote 32-byte entries only on 535.43–535.86, the drivers that had ConfComputeMemSizeInfo
  // but not yet RunningProcessDetailList (nvitop PR #94). Later drivers: 24 bytes again.
  if (api.nvmlDeviceGetComputeRunningProcesses_v3) {
    const bool wide =
        api.nvmlDeviceGetConfComputeMemSizeInfo && !api.nvmlDeviceGetRunningProcessDetailList;
    compute_ = api.nvmlDeviceGetComputeRunningProcesses_v3;
    mps_ = api.nvmlDeviceGetMPSComputeRunningProcesses_v3;
    stride_ = wide ? sizeof(nvmlProcessDetail_v1_t) : sizeof(nvmlProcessInfo_v2_t);
    return std::string(kNameOf<Sym::nvmlDeviceGetComputeRunningProcesses_v3>) + " (" +
           (wide ? "32" : "24") + "-byte entries)";
  }
  if (api.nvmlDeviceGetComputeRunningProcesses_v2) {
    compute_ = api.nvmlDeviceGetComputeRunningProcesses_v2;
    mps_ = api.nvmlDeviceGetMPSComputeRunningProcesses_v2;
    stride_ = sizeof(nvmlProcessInfo_v2_t);
    return std::string(kNameOf<Sym::nvmlDeviceGetComputeRunningProcesses_v2>) +
           " (24-byte entries)";
  }
  if (api.nvmlDeviceGetComputeRunningProcesses) {
    compute_ = api.nvmlDeviceGetComputeRunningProcesses;
    mps_ = api.nvmlDeviceGetMPSComputeRunningProcesses;
    stride_ = sizeof(nvmlProcessInfo_v1_t);
    return std::string(kNameOf<Sym::nvmlDeviceGetComputeRunningProcesses>) + " (16-byte entries)";
  }
  return "";
}

std::vector<gpu::GpuProcess> ProcessLists::Read(const NvmlCalls& nvml, nvmlDevice_t h,
                                                gpu::DeviceSample& dev, uint64_t total_bytes) {
  std::vector<gpu::GpuProcess> out;
  if (!compute_) return out;
  ReadList(nvml, h, dev, false, total_bytes, out);
  if (mps_ && !dev.lost) ReadList(nvml, h, dev, true, total_bytes, out);
  return out;
}

// Whichever version was picked, the call is named by its base entry.
void ProcessLists::ReadList(const NvmlCalls& nvml, nvmlDevice_t h, gpu::DeviceSample& dev, bool mps,
                            uint64_t total_bytes, std::vector<gpu::GpuProcess>& out) {
  const auto fn = mps ? mps_ : compute_;
  const char* name = mps ? kNameOf<Sym::nvmlDeviceGetMPSComputeRunningProcesses>
                         : kNameOf<Sym::nvmlDeviceGetComputeRunningProcesses>;
  const auto type = mps ? gpu::ProcessType::kMps : gpu::ProcessType::kCompute;
  unsigned int count = 0;
  nvmlReturn_t rc = nvml.Invoke(name, fn, h, &count, nullptr);
  std::vector<unsigned char> buf;
  for (int attempt = 0; rc == NVML_ERROR_INSUFFICIENT_SIZE && attempt < kMaxSizeRetries;
       ++attempt) {
    // Headroom: the list can grow between calls.
    count = static_cast<unsigned int>(DriverListEntries(count, count + 5ull, 5));
    buf.assign(static_cast<size_t>(count) * stride_, 0);
    rc = nvml.Invoke(name, fn, h, &count, static_cast<void*>(buf.data()));
  }
  if (rc == NVML_SUCCESS && buf.empty()) return;  // no processes
  if (!nvml.Check(dev, name, rc)) return;
  auto entries = detail::DecodeProcessEntries(buf.data(), count, stride_, type);
  // Some drivers wrote a different stride than their header declared (docs/nvml.md §3.3).
  if (detail::CountImplausible(entries, total_bytes) >= 2 &&
      stride_ != sizeof(nvmlProcessInfo_v1_t)) {
    const size_t other = stride_ == sizeof(nvmlProcessInfo_v2_t) ? sizeof(nvmlProcessDetail_v1_t)
                                                                 : sizeof(nvmlProcessInfo_v2_t);
    if (static_cast<size_t>(count) * other <= buf.size()) {
      auto alt = detail::DecodeProcessEntries(buf.data(), count, other, type);
      if (detail::CountImplausible(alt, total_bytes) == 0) {
        stride_ = other;
        entries = std::move(alt);
      }
    }
  }
  for (auto& e : entries) out.push_back(e);
}

}  // namespace gpumeter::nvml
