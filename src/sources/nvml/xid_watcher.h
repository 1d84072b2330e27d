// Waits for NVML's XID events on a thread of its own: registers nvmlEventTypeXidCriticalError on
// each GPU (on the parent of MIG instances; only where the GPU supports it), then calls
// nvmlEventSetWait_v2 (the plain nvmlEventSetWait on drivers before 450.51) with a bounded
// timeout, so Stop (and the destructor) joins within one timeout; the event set is freed after
// the thread is out. Its calls do not go through the sampler's call watch (a wait blocks by
// design). NVML is thread-safe; the sampler thread keeps calling it meanwhile.
// Thread-safe: Take and Health from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sources/nvml/nvml_library.h"

namespace gpumeter::nvml {

struct ReceivedXid {
  nvmlDevice_t device = nullptr;  // the GPU the event names
  uint64_t xid = 0;
  std::optional<uint32_t> gpu_instance_id;
  uint64_t seen_us = 0;  // wall clock at receipt, Unix epoch µs
};

class XidWatcher {
 public:
  // Null, with the reason in `why`, when the driver has no event API or no GPU takes XID events.
  // `api` and the library behind it must outlive the watcher.
  static std::unique_ptr<XidWatcher> Start(const NvmlApi& api,
                                           const std::vector<nvmlDevice_t>& devices,
                                           std::chrono::milliseconds timeout,
                                           std::function<uint64_t()> wall_clock_us,
                                           std::string* why);
  ~XidWatcher();  // Stop, then the set is freed
  // Ends the waits and joins the thread (within one wait): nothing is received after it returns,
  // and Take still hands over what was. Idempotent.
  void Stop();
  XidWatcher(const XidWatcher&) = delete;
  XidWatcher& operator=(const XidWatcher&) = delete;

  // The events received since the last call, oldest first. At most kMaxPending are kept between
  // calls; more are counted in dropped().
  std::vector<ReceivedXid> Take();
  uint64_t dropped() const;
  // Empty while waiting works; else why it does not (the last failed wait's code).
  std::string Error() const;
  // The last wait's failure; NVML_SUCCESS while waiting works. GPU_IS_LOST: a GPU of the set fell
  // off the bus, and every wait on the set fails from then on.
  nvmlReturn_t LastFailure() const;
  static constexpr size_t kMaxPending = 4096;

 private:
  XidWatcher(const NvmlApi& api, nvmlEventSet_t set, std::chrono::milliseconds timeout,
             std::function<uint64_t()> wall_clock_us);
  void Run();

  const NvmlApi& api_;
  nvmlEventSet_t set_;
  std::chrono::milliseconds timeout_;
  std::function<uint64_t()> wall_clock_us_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<ReceivedXid> pending_;
  uint64_t dropped_ = 0;
  std::string error_;
  nvmlReturn_t last_failure_ = NVML_SUCCESS;
  std::thread thread_;
};

}  // namespace gpumeter::nvml
