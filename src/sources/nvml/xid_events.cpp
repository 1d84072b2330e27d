// The XID events of a pass: the watcher is started on the first pass that found GPUs (their
// handles are the pass's), and started again every kXidRetryPasses while it could not be; each
// pass takes what it received since into the device it names. An event whose GPU this pass did
// not list (its handle call failed: a GPU falling off the bus does that) waits for a pass that
// lists it, so the XID sent as it fell is not lost. A GPU that fell off the bus fails every wait on
// the set it is in: the watcher is then started again on the GPUs still there, with what the old
// one received kept, so the others' XIDs are seen again (those that came in between are not).
#include <algorithm>

#include "sources/nvml/nvml_gpu_source.h"

namespace gpumeter::nvml {
namespace {
constexpr uint64_t kXidRetryPasses = 60;
}  // namespace

// Whether to start the watcher again: its set has a GPU that fell off the bus (every wait fails;
// at once, if some GPU is left to watch), or a GPU it does not watch is here now (one that came
// back, or came up late; every kXidRetryPasses).
bool NvmlGpuSource::RestartXidWatch(const std::vector<nvmlDevice_t>& present) {
  if (!xid_ || present.empty()) return false;
  if (xid_->LastFailure() == NVML_ERROR_GPU_IS_LOST) return present != xid_handles_;
  for (nvmlDevice_t d : present)
    if (std::find(xid_handles_.begin(), xid_handles_.end(), d) == xid_handles_.end())
      return ++xid_passes_since_try_ >= kXidRetryPasses;
  return false;
}

void NvmlGpuSource::TakeXids(const std::vector<nvmlDevice_t>& handles, gpu::GpuSnapshot& snap) {
  std::vector<nvmlDevice_t> present;  // the GPUs of this pass that are not lost
  for (size_t i = 0; i < handles.size(); ++i)
    if (!snap.devices[i].lost) present.push_back(handles[i]);
  if (RestartXidWatch(present)) {
    xid_->Stop();  // joins its thread: nothing arrives after the Take
    for (auto& x : xid_->Take())
      if (xid_unmatched_.size() < XidWatcher::kMaxPending) xid_unmatched_.push_back(x);
    xid_.reset();
    xid_tried_ = false;
  }
  if (!xid_ && !present.empty() && (!xid_tried_ || ++xid_passes_since_try_ >= kXidRetryPasses)) {
    xid_tried_ = true;
    xid_passes_since_try_ = 0;
    xid_handles_ = present;
    xid_ = XidWatcher::Start(lib_->api(), present, options_.xid_wait, options_.wall_clock_us,
                             &xid_unavailable_);
  }
  if (!xid_tried_) return;
  if (xid_) {
    const std::string error = xid_->Error();
    snap.xid_watch_ok = error.empty();
    snap.xid_watch_error = error;
  } else {
    snap.xid_watch_ok = false;
    snap.xid_watch_error = xid_unavailable_;
  }
  // Events kept from before (a GPU not listed then, a watcher started again) are delivered
  // whether or not a watcher runs now.
  std::vector<ReceivedXid> got = std::move(xid_unmatched_);
  xid_unmatched_.clear();
  if (xid_)
    for (auto& x : xid_->Take()) got.push_back(x);
  for (const auto& x : got) {
    size_t i = 0;
    while (i < handles.size() && handles[i] != x.device) ++i;
    if (i < handles.size()) {
      snap.devices[i].health.xid_events.push_back({x.xid, x.gpu_instance_id, x.seen_us});
    } else if (xid_unmatched_.size() < XidWatcher::kMaxPending) {
      xid_unmatched_.push_back(x);
    }
  }
}

}  // namespace gpumeter::nvml
