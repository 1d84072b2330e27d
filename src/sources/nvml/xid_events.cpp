// The XID events of a pass: the watcher is started on the first pass that found GPUs (their
// handles are the pass's), and started again every kXidRetryPasses while it could not be; each
// pass takes what it received since into the device it names. An event whose GPU this pass did
// not list (its handle call failed: a GPU falling off the bus does that) waits for a pass that
// lists it, so the XID sent as it fell is not lost. A GPU that fell off the bus fails every wait on
// the set it is in: the watcher is then started again on the GPUs still there, with what the old
// one received kept, so the others' XIDs are seen again (those that came in between are not).
#include "sources/nvml/xid_events.h"

#include <algorithm>

namespace gpumeter::nvml {
namespace {
constexpr uint64_t kXidRetryPasses = 60;
}  // namespace

// Whether to start the watcher again: its set has a GPU that fell off the bus (every wait fails;
// at once, if some GPU is left to watch), or a GPU it does not watch is here now (one that came
// back, or came up late; every kXidRetryPasses).
bool XidEvents::Restart(const std::vector<nvmlDevice_t>& present) {
  if (!watcher_ || present.empty()) return false;
  if (watcher_->LastFailure() == NVML_ERROR_GPU_IS_LOST) return present != handles_;
  for (nvmlDevice_t d : present)
    if (std::find(handles_.begin(), handles_.end(), d) == handles_.end())
      return ++passes_since_try_ >= kXidRetryPasses;
  return false;
}

void XidEvents::Take(const std::vector<nvmlDevice_t>& handles, gpu::GpuSnapshot& snap) {
  std::vector<nvmlDevice_t> present;  // the GPUs of this pass that are not lost
  for (size_t i = 0; i < handles.size(); ++i)
    if (!snap.devices[i].lost) present.push_back(handles[i]);
  if (Restart(present)) {
    watcher_->Stop();  // joins its thread: nothing arrives after the Take
    for (auto& x : watcher_->Take())
      if (unmatched_.size() < XidWatcher::kMaxPending) unmatched_.push_back(x);
    watcher_.reset();
    tried_ = false;
  }
  if (!watcher_ && !present.empty() && (!tried_ || ++passes_since_try_ >= kXidRetryPasses)) {
    tried_ = true;
    passes_since_try_ = 0;
    handles_ = present;
    watcher_ = XidWatcher::Start(api_, present, wait_, wall_clock_us_, &unavailable_);
  }
  if (!tried_) return;
  if (watcher_) {
    const std::string error = watcher_->Error();
    snap.xid_watch_ok = error.empty();
    snap.xid_watch_error = error;
  } else {
    snap.xid_watch_ok = false;
    snap.xid_watch_error = unavailable_;
  }
  // Events kept from before (a GPU not listed then, a watcher started again) are delivered
  // whether or not a watcher runs now.
  std::vector<ReceivedXid> got = std::move(unmatched_);
  unmatched_.clear();
  if (watcher_)
    for (auto& x : watcher_->Take()) got.push_back(x);
  for (const auto& x : got) {
    size_t i = 0;
    while (i < handles.size() && handles[i] != x.device) ++i;
    if (i < handles.size()) {
      snap.devices[i].health.xid_events.push_back({x.xid, x.gpu_instance_id, x.seen_us});
    } else if (unmatched_.size() < XidWatcher::kMaxPending) {
      unmatched_.push_back(x);
    }
  }
}

}  // namespace gpumeter::nvml
