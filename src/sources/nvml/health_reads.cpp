// The GPU's health calls (nvmlDeviceGetCurrentClocksEventReasons, nvmlDeviceGetTotalEccErrors,
// nvmlDeviceGetRemappedRows, nvmlDeviceGetRetiredPages): read on the physical GPU every pass, each
// unknown where the driver lacks it or the board does not support it (NOT_SUPPORTED is a
// capability, not an error).
#include "sources/nvml/device_readers.h"

namespace gpumeter::nvml {
namespace {

// The pages retired for each cause, counted with a zero-capacity call (as DCGM does): SUCCESS
// when there are none, INSUFFICIENT_SIZE with the count written when there are some. Both counts
// or neither; NOT_SUPPORTED (Ampere and later, boards without ECC) is unknown, not 0.
void ReadRetiredPages(const DeviceRead& r) {
  constexpr Sym kCall = Sym::nvmlDeviceGetRetiredPages;
  if (!r.nvml.Has<kCall>()) return;
  gpu::DeviceSample& dev = r.dev;
  gpu::GpuHealth::RetiredPages pages;
  for (const auto cause : {NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR,
                           NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS}) {
    unsigned int count = 0;
    unsigned long long* none = nullptr;
    const nvmlReturn_t rc = r.Call<kCall>(r.h, cause, &count, none);
    if (rc == NVML_ERROR_NOT_SUPPORTED) return;
    if (rc == NVML_ERROR_INSUFFICIENT_SIZE && count == 0) {  // "more than none", yet no count
      dev.errors.push_back({kNameOf<kCall>, rc, "INSUFFICIENT_SIZE without a page count"});
      return;
    }
    if (rc != NVML_ERROR_INSUFFICIENT_SIZE && !r.Check<kCall>(rc)) return;
    (cause == NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR ? pages.double_bit
                                                              : pages.single_bit) = count;
  }
  constexpr Sym kPending = Sym::nvmlDeviceGetRetiredPagesPendingStatus;
  if (r.nvml.Has<kPending>()) {
    nvmlEnableState_t pending = NVML_FEATURE_DISABLED;
    const nvmlReturn_t rc = r.Call<kPending>(r.h, &pending);
    if (rc != NVML_ERROR_NOT_SUPPORTED && r.Check<kPending>(rc))
      pages.pending = pending == NVML_FEATURE_ENABLED;
  }
  if (!dev.lost) dev.health.retired_pages = pages;
}

// Uncorrected first, each on its own: a failed read of one leaves the other known. ECC off (or a
// board without it): NOT_SUPPORTED, unknown rather than 0.
void ReadEcc(const DeviceRead& r) {
  constexpr Sym kCall = Sym::nvmlDeviceGetTotalEccErrors;
  if (!r.nvml.Has<kCall>()) return;
  for (const auto type : {NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_MEMORY_ERROR_TYPE_CORRECTED}) {
    unsigned long long n = 0;
    const nvmlReturn_t rc = r.Call<kCall>(r.h, type, NVML_VOLATILE_ECC, &n);
    if (rc == NVML_ERROR_NOT_SUPPORTED) break;  // ECC off: neither type
    if (!r.Check<kCall>(rc)) {
      if (r.dev.lost) break;
      continue;
    }
    (type == NVML_MEMORY_ERROR_TYPE_CORRECTED ? r.dev.health.ecc_corrected
                                              : r.dev.health.ecc_uncorrected) = n;
  }
}

}  // namespace

void ReadHealth(const DeviceRead& r) {
  gpu::DeviceSample& dev = r.dev;
  // The new name from 535.43.02; the old one, deprecated, still answers on every release. Bits
  // this build does not know are kept; only the known ones are named downstream.
  unsigned long long bits = 0;
  const bool reasons = r.nvml.Has<Sym::nvmlDeviceGetCurrentClocksEventReasons>()
                           ? r.Ok<Sym::nvmlDeviceGetCurrentClocksEventReasons>(r.h, &bits)
                           : r.nvml.Has<Sym::nvmlDeviceGetCurrentClocksThrottleReasons>() &&
                                 r.Ok<Sym::nvmlDeviceGetCurrentClocksThrottleReasons>(r.h, &bits);
  if (reasons) dev.health.clock_event_reasons = bits;
  if (dev.lost) return;
  ReadEcc(r);
  if (dev.lost) return;
  unsigned int corr = 0, unc = 0, pending = 0, failure = 0;
  if (r.nvml.Has<Sym::nvmlDeviceGetRemappedRows>() &&
      r.Ok<Sym::nvmlDeviceGetRemappedRows>(r.h, &corr, &unc, &pending, &failure))
    dev.health.remapped_rows = gpu::GpuHealth::RemappedRows{corr, unc, pending != 0, failure != 0};
  if (dev.lost) return;
  ReadRetiredPages(r);
}

}  // namespace gpumeter::nvml
