// The fake driver's health calls: clocks-event reasons, ECC counters and remapped rows, from the
// scenario's health events (sim/scenario/health_faults.h) at the fake's time. On a MIG device
// handle each is NOT_SUPPORTED (what a MIG handle answers is not confirmed; the agent asks the
// parent). Row remapping is Ampere's and later, and NOT_SUPPORTED while MIG is on.
#include <string>

#include "sim/fake_nvml/fake_driver.h"
#include "sim/scenario/health_faults.h"

namespace gpumeter::fake {
namespace {

// Boards before Ampere have no row remapper (they retire pages instead).
bool HasRowRemapper(const std::string& model) {
  for (const char* old : {"V100", "TITAN V", "T4", "Quadro RTX", "RTX 20", "GTX", "P100", "P40",
                          "P4", "M40", "M60", "K40", "K80"})
    if (model.find(old) != std::string::npos) return false;
  return true;
}

}  // namespace

nvmlReturn_t FakeDriver::ClockReasons(nvmlDevice_t d, unsigned long long* reasons) {
  if (!reasons) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  if (d->mig >= 0) return NVML_ERROR_NOT_SUPPORTED;
  const double t = NowLocked();
  const auto& g = GpuOf(d);
  *reasons = scenario::HealthAt(*scenario_, g.index, t).clock_event_reasons;
  // Nothing running: the driver says the clocks are dropping to idle.
  if (scenario::GpuBusyAt(*scenario_, g, t) <= 0) *reasons |= nvmlClocksEventReasonGpuIdle;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::EccErrors(nvmlDevice_t d, nvmlMemoryErrorType_t type,
                                   nvmlEccCounterType_t counter, unsigned long long* count) {
  if (!count ||
      (type != NVML_MEMORY_ERROR_TYPE_CORRECTED && type != NVML_MEMORY_ERROR_TYPE_UNCORRECTED) ||
      (counter != NVML_VOLATILE_ECC && counter != NVML_AGGREGATE_ECC))
    return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  if (d->mig >= 0) return NVML_ERROR_NOT_SUPPORTED;
  // The simulated driver loaded with the scenario: volatile and aggregate counts agree.
  const auto h = scenario::HealthAt(*scenario_, GpuOf(d).index, NowLocked());
  *count = type == NVML_MEMORY_ERROR_TYPE_UNCORRECTED ? h.ecc_uncorrected : h.ecc_corrected;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::RemappedRows(nvmlDevice_t d, unsigned int* corr, unsigned int* unc,
                                      unsigned int* pending, unsigned int* failure) {
  if (!corr || !unc || !pending || !failure) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  const auto& g = GpuOf(d);
  if (d->mig >= 0 || g.mig_enabled || !HasRowRemapper(g.model)) return NVML_ERROR_NOT_SUPPORTED;
  const auto h = scenario::HealthAt(*scenario_, g.index, NowLocked());
  *corr = h.remapped_correctable;
  *unc = h.remapped_uncorrectable;
  *pending = h.remap_pending ? 1 : 0;
  *failure = h.remap_failed ? 1 : 0;
  return NVML_SUCCESS;
}

}  // namespace gpumeter::fake
