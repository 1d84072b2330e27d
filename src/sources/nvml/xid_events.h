// The XID events of each pass, from an XidWatcher this starts on the first pass that found GPUs
// and starts again when its set of GPUs no longer fits (xid_events.cpp). Private to the NVML
// source. Not thread-safe: the sampling thread only (the watcher has a thread of its own).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "domain/gpu_types.h"
#include "sources/nvml/xid_watcher.h"

namespace gpumeter::nvml {

class XidEvents {
 public:
  // `api` must outlive this; `wall_clock_us` is called on the watcher's thread too. Each wait
  // lasts at most `wait`.
  XidEvents(const NvmlApi& api, std::chrono::milliseconds wait,
            std::function<uint64_t()> wall_clock_us)
      : api_(api), wait_(wait), wall_clock_us_(std::move(wall_clock_us)) {}
  // The events received since the last pass into the devices of `snap` (`handles`: theirs, in
  // order), and the watcher's state into snap.xid_watch_*.
  void Take(const std::vector<nvmlDevice_t>& handles, gpu::GpuSnapshot& snap);

 private:
  bool Restart(const std::vector<nvmlDevice_t>& present);

  const NvmlApi& api_;
  std::chrono::milliseconds wait_;
  std::function<uint64_t()> wall_clock_us_;
  std::unique_ptr<XidWatcher> watcher_;
  bool tried_ = false;
  uint64_t passes_since_try_ = 0;
  std::string unavailable_;
  std::vector<ReceivedXid> unmatched_;  // events of GPUs the last pass did not list
  std::vector<nvmlDevice_t> handles_;   // the GPUs the watcher registered
};

}  // namespace gpumeter::nvml
