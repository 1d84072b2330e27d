// The XID events of a pass: the watcher is started on the first pass that found GPUs (their
// handles are the pass's), and each pass takes what it received since into the device it names.
#include "sources/nvml/nvml_gpu_source.h"

namespace gpumeter::nvml {

void NvmlGpuSource::TakeXids(const std::vector<nvmlDevice_t>& handles, gpu::GpuSnapshot& snap) {
  if (!xid_tried_ && !handles.empty()) {
    xid_tried_ = true;
    xid_ = XidWatcher::Start(lib_->api(), handles, options_.xid_wait, options_.wall_clock_us,
                             &xid_unavailable_);
  }
  if (!xid_tried_) return;
  if (!xid_) {
    snap.xid_watch_ok = false;
    snap.xid_watch_error = xid_unavailable_;
    return;
  }
  const std::string error = xid_->Error();
  snap.xid_watch_ok = error.empty();
  snap.xid_watch_error = error;
  for (const auto& x : xid_->Take()) {
    size_t i = 0;
    while (i < handles.size() && handles[i] != x.device) ++i;
    if (i == handles.size()) continue;  // a GPU this pass did not list (it cannot be keyed)
    snap.devices[i].health.xid_events.push_back({x.xid, x.gpu_instance_id, x.seen_us});
  }
}

}  // namespace gpumeter::nvml
