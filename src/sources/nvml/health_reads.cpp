// The GPU's health calls (nvmlDeviceGetCurrentClocksEventReasons, nvmlDeviceGetTotalEccErrors,
// nvmlDeviceGetRemappedRows, nvmlDeviceGetRetiredPages): read on the physical GPU every pass, each
// unknown where the driver lacks it or the board does not support it (NOT_SUPPORTED is a
// capability, not an error).
#include "sources/nvml/nvml_gpu_source.h"

namespace gpumeter::nvml {

void NvmlGpuSource::ReadHealth(nvmlDevice_t h, gpu::DeviceSample& dev) {
  const NvmlApi& api = lib_->api();
  // The new name from 535.43.02; the old one, deprecated, still answers on every release.
  const auto reasons_fn = api.nvmlDeviceGetCurrentClocksEventReasons
                              ? api.nvmlDeviceGetCurrentClocksEventReasons
                              : api.nvmlDeviceGetCurrentClocksThrottleReasons;
  const char* reasons_name = api.nvmlDeviceGetCurrentClocksEventReasons
                                 ? "nvmlDeviceGetCurrentClocksEventReasons"
                                 : "nvmlDeviceGetCurrentClocksThrottleReasons";
  if (reasons_fn) {
    unsigned long long bits = 0;
    // Bits this build does not know are kept; only the known ones are named downstream.
    if (Check(dev, reasons_name, Call(reasons_name, [&] { return reasons_fn(h, &bits); })))
      dev.health.clock_event_reasons = bits;
  }
  if (dev.lost) return;
  if (api.nvmlDeviceGetTotalEccErrors) {
    const char* name = "nvmlDeviceGetTotalEccErrors";
    // Uncorrected first, each on its own: a failed read of one leaves the other known. ECC off
    // (or a board without it): NOT_SUPPORTED, unknown rather than 0.
    for (const auto type : {NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_MEMORY_ERROR_TYPE_CORRECTED}) {
      unsigned long long n = 0;
      const nvmlReturn_t rc = Call(
          name, [&] { return api.nvmlDeviceGetTotalEccErrors(h, type, NVML_VOLATILE_ECC, &n); });
      if (rc == NVML_ERROR_NOT_SUPPORTED) break;  // ECC off: neither type
      if (!Check(dev, name, rc)) {
        if (dev.lost) break;
        continue;
      }
      (type == NVML_MEMORY_ERROR_TYPE_CORRECTED ? dev.health.ecc_corrected
                                                : dev.health.ecc_uncorrected) = n;
    }
  }
  if (dev.lost) return;
  if (api.nvmlDeviceGetRemappedRows) {
    unsigned int corr = 0, unc = 0, pending = 0, failure = 0;
    const char* name = "nvmlDeviceGetRemappedRows";
    if (Check(dev, name, Call(name, [&] {
                return api.nvmlDeviceGetRemappedRows(h, &corr, &unc, &pending, &failure);
              })))
      dev.health.remapped_rows =
          gpu::GpuHealth::RemappedRows{corr, unc, pending != 0, failure != 0};
  }
  if (dev.lost) return;
  ReadRetiredPages(h, dev);
}

// The pages retired for each cause, counted with a zero-capacity call (as DCGM does): SUCCESS
// when there are none, INSUFFICIENT_SIZE with the count written when there are some. Both counts
// or neither; NOT_SUPPORTED (Ampere and later, boards without ECC) is unknown, not 0.
void NvmlGpuSource::ReadRetiredPages(nvmlDevice_t h, gpu::DeviceSample& dev) {
  const NvmlApi& api = lib_->api();
  if (!api.nvmlDeviceGetRetiredPages) return;
  const char* name = "nvmlDeviceGetRetiredPages";
  gpu::GpuHealth::RetiredPages pages;
  for (const auto cause : {NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR,
                           NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS}) {
    unsigned int count = 0;
    const nvmlReturn_t rc =
        Call(name, [&] { return api.nvmlDeviceGetRetiredPages(h, cause, &count, nullptr); });
    if (rc == NVML_ERROR_NOT_SUPPORTED) return;
    if (rc == NVML_ERROR_INSUFFICIENT_SIZE && count == 0) {  // "more than none", yet no count
      dev.errors.push_back({name, rc, "INSUFFICIENT_SIZE without a page count"});
      return;
    }
    if (rc != NVML_ERROR_INSUFFICIENT_SIZE && !Check(dev, name, rc)) return;
    (cause == NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR ? pages.double_bit
                                                              : pages.single_bit) = count;
  }
  if (api.nvmlDeviceGetRetiredPagesPendingStatus) {
    const char* pending_name = "nvmlDeviceGetRetiredPagesPendingStatus";
    nvmlEnableState_t pending = NVML_FEATURE_DISABLED;
    const nvmlReturn_t rc =
        Call(pending_name, [&] { return api.nvmlDeviceGetRetiredPagesPendingStatus(h, &pending); });
    if (rc != NVML_ERROR_NOT_SUPPORTED && Check(dev, pending_name, rc))
      pages.pending = pending == NVML_FEATURE_ENABLED;
  }
  if (!dev.lost) dev.health.retired_pages = pages;
}

}  // namespace gpumeter::nvml
