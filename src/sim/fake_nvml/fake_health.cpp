// The fake driver's health calls: clocks-event reasons, ECC counters and remapped rows, from the
// scenario's health events (sim/scenario/health_faults.h) at the fake's time. On a MIG device
// handle each is NOT_SUPPORTED (what a MIG handle answers is not confirmed; the agent asks the
// parent). Row remapping is Ampere's and later, and NOT_SUPPORTED while MIG is on; page
// retirement is the older boards' (NOT_SUPPORTED from Ampere on: unconfirmed, see docs/nvml.md).
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

// Page retirement: boards before Ampere with ECC memory (Tesla, Quadro GV100 and later data-
// center parts); GeForce boards have no ECC, so nothing to retire.
bool HasPageRetirement(const std::string& model) {
  for (const char* geforce : {"GeForce", "GTX", "RTX 20", "TITAN"})
    if (model.find(geforce) != std::string::npos) return false;
  return !HasRowRemapper(model);
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

// The sizing protocol of the list calls: with *count below the pages, write the count and return
// INSUFFICIENT_SIZE; NULL addresses only with a zero capacity.
nvmlReturn_t FakeDriver::RetiredPages(nvmlDevice_t d, nvmlPageRetirementCause_t cause,
                                      unsigned int* count, unsigned long long* addresses) {
  if (!count || (*count > 0 && !addresses) ||
      (cause != NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS &&
       cause != NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR))
    return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  const auto& g = GpuOf(d);
  if (d->mig >= 0 || !HasPageRetirement(g.model)) return NVML_ERROR_NOT_SUPPORTED;
  const auto h = scenario::HealthAt(*scenario_, g.index, NowLocked());
  const bool dbe = cause == NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR;
  const unsigned int pages = dbe ? h.retired_double_bit : h.retired_single_bit;
  if (*count < pages) {
    *count = pages;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  // Made-up 4 KiB-aligned frame addresses, apart per cause (the agent counts, never reads them).
  for (unsigned int i = 0; i < pages; ++i)
    addresses[i] = (dbe ? 0x200000000ull : 0x100000000ull) + 0x1000ull * i;
  *count = pages;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::RetiredPagesPending(nvmlDevice_t d, nvmlEnableState_t* pending) {
  if (!pending) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  const auto& g = GpuOf(d);
  if (d->mig >= 0 || !HasPageRetirement(g.model)) return NVML_ERROR_NOT_SUPPORTED;
  *pending = scenario::HealthAt(*scenario_, g.index, NowLocked()).retire_pending
                 ? NVML_FEATURE_ENABLED
                 : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

}  // namespace gpumeter::fake
