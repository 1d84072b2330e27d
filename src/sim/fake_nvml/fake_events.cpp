// The fake driver's event sets: XID events from the scenario's `xid` faults, delivered once per
// set to a set that registered the GPU before the event (as NVML records only later events).
// Wait blocks up to its timeout in real time, re-checking the fake's clock, so a demo at any
// speed-up delivers each event within a timeout of its scenario time.
#include <algorithm>
#include <thread>

#include "sim/fake_nvml/fake_driver.h"

namespace gpumeter::fake {
namespace {

// What a simulated GPU supports: ECC events, P-state changes and XIDs.
constexpr unsigned long long kSupportedEvents = 0x1 | 0x2 | 0x4 | nvmlEventTypeXidCriticalError;

}  // namespace

nvmlReturn_t FakeDriver::EventSetCreate(nvmlEventSet_t* set) {
  if (!set) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(mu_);
  event_sets_.emplace_back();
  *set = &event_sets_.back();
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::EventSetFree(nvmlEventSet_t set) {
  std::lock_guard lock(mu_);
  for (auto& s : event_sets_)
    if (&s == set && !s.freed) {
      s.freed = true;
      return NVML_SUCCESS;
    }
  return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t FakeDriver::SupportedEvents(nvmlDevice_t d, unsigned long long* types) {
  if (!types) return NVML_ERROR_INVALID_ARGUMENT;
  if (d->mig >= 0) return NVML_ERROR_NOT_SUPPORTED;  // register the parent
  *types = kSupportedEvents;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::RegisterEvents(nvmlDevice_t d, unsigned long long types,
                                        nvmlEventSet_t set) {
  std::lock_guard lock(mu_);
  if (d->mig >= 0) return NVML_ERROR_NOT_SUPPORTED;
  const bool known = std::any_of(event_sets_.begin(), event_sets_.end(),
                                 [&](const nvmlEventSet_st& s) { return &s == set && !s.freed; });
  if (!known) return NVML_ERROR_INVALID_ARGUMENT;
  // Any bit the GPU does not support: nothing is registered.
  if (types & ~kSupportedEvents) return NVML_ERROR_NOT_SUPPORTED;
  if (types & nvmlEventTypeXidCriticalError) set->registered[d->gpu] = NowLocked();
  return NVML_SUCCESS;
}

nvmlReturn_t FakeDriver::EventWait(nvmlEventSet_t set, nvmlEventData_t* data,
                                   unsigned int timeout_ms, bool v2) {
  if (!data) return NVML_ERROR_INVALID_ARGUMENT;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (refcount_ == 0) return NVML_ERROR_UNINITIALIZED;
      if (set->freed) return NVML_ERROR_INVALID_ARGUMENT;
      const double now = NowLocked();
      for (size_t i = 0; i < scenario_->faults.size(); ++i) {
        const auto& f = scenario_->faults[i];
        if (f.kind == scenario::FaultKind::kGpuLost && f.gpu_index && now >= f.from_s &&
            (!f.to_s || now < *f.to_s))
          for (const auto& [gpu, since] : set->registered)
            if (scenario_->gpus[gpu].index == *f.gpu_index) return NVML_ERROR_GPU_IS_LOST;
      }
      for (size_t i = 0; i < scenario_->faults.size(); ++i) {
        const auto& f = scenario_->faults[i];
        if (f.kind != scenario::FaultKind::kXid || f.from_s > now || set->delivered.count(i))
          continue;
        for (const auto& [gpu, since] : set->registered) {
          if (scenario_->gpus[gpu].index != *f.gpu_index || f.from_s < since) continue;
          set->delivered.insert(i);
          data->device = ParentHandleLocked(gpu);
          data->eventType = nvmlEventTypeXidCriticalError;
          data->eventData = f.xid;
          // The plain call writes the first three fields only (24 bytes, the 440 layout).
          if (v2) {
            data->gpuInstanceId = f.gpu_instance_id.value_or(kNvmlNoInstanceId);
            data->computeInstanceId = kNvmlNoInstanceId;
          }
          return NVML_SUCCESS;
        }
      }
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return NVML_ERROR_TIMEOUT;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        deadline - now, std::chrono::milliseconds(10)));
  }
}

}  // namespace gpumeter::fake
