#include "sources/nvml/xid_watcher.h"

#include <string>

namespace gpumeter::nvml {

std::unique_ptr<XidWatcher> XidWatcher::Start(const NvmlApi& api,
                                              const std::vector<nvmlDevice_t>& devices,
                                              std::chrono::milliseconds timeout,
                                              std::function<uint64_t()> wall_clock_us,
                                              std::string* why) {
  const auto wait = api.nvmlEventSetWait_v2 ? api.nvmlEventSetWait_v2 : api.nvmlEventSetWait;
  if (!api.nvmlEventSetCreate || !api.nvmlEventSetFree || !api.nvmlDeviceRegisterEvents || !wait) {
    *why = "the driver has no event API";
    return nullptr;
  }
  nvmlEventSet_t set = nullptr;
  if (const nvmlReturn_t rc = api.nvmlEventSetCreate(&set); rc != NVML_SUCCESS) {
    *why = "nvmlEventSetCreate failed (" + std::to_string(rc) + ")";
    return nullptr;
  }
  size_t registered = 0;
  for (nvmlDevice_t d : devices) {
    // A bit the GPU lacks fails the whole registration: ask only where it is supported.
    unsigned long long supported = nvmlEventTypeXidCriticalError;
    if (api.nvmlDeviceGetSupportedEventTypes &&
        api.nvmlDeviceGetSupportedEventTypes(d, &supported) != NVML_SUCCESS)
      continue;
    if (!(supported & nvmlEventTypeXidCriticalError)) continue;
    registered +=
        api.nvmlDeviceRegisterEvents(d, nvmlEventTypeXidCriticalError, set) == NVML_SUCCESS;
  }
  if (registered == 0) {
    api.nvmlEventSetFree(set);
    *why = "no GPU takes XID events";
    return nullptr;
  }
  std::unique_ptr<XidWatcher> w(new XidWatcher(api, set, timeout, std::move(wall_clock_us)));
  w->thread_ = std::thread([p = w.get()] { p->Run(); });
  return w;
}

XidWatcher::XidWatcher(const NvmlApi& api, nvmlEventSet_t set, std::chrono::milliseconds timeout,
                       std::function<uint64_t()> wall_clock_us)
    : api_(api), set_(set), timeout_(timeout), wall_clock_us_(std::move(wall_clock_us)) {}

void XidWatcher::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();  // the wait in flight returns within its timeout
}

XidWatcher::~XidWatcher() {
  Stop();
  api_.nvmlEventSetFree(set_);  // only once nothing waits on it
}

void XidWatcher::Run() {
  const auto wait = api_.nvmlEventSetWait_v2 ? api_.nvmlEventSetWait_v2 : api_.nvmlEventSetWait;
  const auto timeout_ms = static_cast<unsigned int>(timeout_.count());
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stop_) return;
    }
    nvmlEventData_t data{};
    data.gpuInstanceId = data.computeInstanceId = kNvmlNoInstanceId;  // the plain call leaves them
    const nvmlReturn_t rc = wait(set_, &data, timeout_ms);
    std::unique_lock lock(mu_);
    if (rc == NVML_SUCCESS) {
      error_.clear();
      last_failure_ = NVML_SUCCESS;
      if (!(data.eventType & nvmlEventTypeXidCriticalError)) continue;
      if (pending_.size() >= kMaxPending) {
        ++dropped_;
        continue;
      }
      ReceivedXid x;
      x.device = data.device;
      x.xid = data.eventData;
      if (data.gpuInstanceId != kNvmlNoInstanceId) x.gpu_instance_id = data.gpuInstanceId;
      x.seen_us = wall_clock_us_();
      pending_.push_back(x);
    } else if (rc == NVML_ERROR_TIMEOUT) {
      error_.clear();
      last_failure_ = NVML_SUCCESS;
    } else {
      // A GPU off the bus, a driver fault: say so, and do not spin on it.
      error_ = "nvmlEventSetWait failed (" + std::to_string(rc) + ")";
      last_failure_ = rc;
      if (cv_.wait_for(lock, timeout_, [this] { return stop_; })) return;
    }
  }
}

std::vector<ReceivedXid> XidWatcher::Take() {
  std::lock_guard lock(mu_);
  std::vector<ReceivedXid> out;
  out.swap(pending_);
  return out;
}

uint64_t XidWatcher::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

std::string XidWatcher::Error() const {
  std::lock_guard lock(mu_);
  return error_;
}

nvmlReturn_t XidWatcher::LastFailure() const {
  std::lock_guard lock(mu_);
  return last_failure_;
}

}  // namespace gpumeter::nvml
