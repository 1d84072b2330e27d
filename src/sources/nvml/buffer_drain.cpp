// Reading the driver's sample buffers between passes (NvmlGpuSource::Drain), and merging what was
// read into the next pass's window. NVML keeps per-process utilization and power samples in a
// ring of a fixed number of driver periods; a poll later than the ring's span loses the oldest
// (the source then reports that part as uncovered, and attribution estimates it). Draining keeps
// every period at any sampling interval: each drain is a window of its own, read and checked for
// loss exactly as a pass's, so the pass's window is the drains' windows and its own, end to end.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "domain/power_trace.h"
#include "sources/nvml/nvml_gpu_source.h"

namespace gpumeter::nvml {
namespace {

// Drained power samples before the pass's own, sorted, one per stamp.
void MergePower(std::vector<gpu::PowerSample> drained, std::vector<gpu::PowerSample>& into) {
  into = domain::MergePowerSamples(std::move(drained), into);
}

// One entry per failing call: a call that fails at every drain and at the pass is one failure of
// the pass (gpumeter_nvml_call_failed has a series per call and code).
void MergeErrors(const std::vector<gpu::CallError>& drained, std::vector<gpu::CallError>& into) {
  for (const auto& e : drained)
    if (std::none_of(into.begin(), into.end(),
                     [&](const gpu::CallError& x) { return x.call == e.call && x.code == e.code; }))
      into.push_back(e);
}

}  // namespace

std::vector<uint32_t> NvmlGpuSource::Drain() {
  std::vector<uint32_t> met;
  const uint64_t now_us = options_.wall_clock_us();
  for (const auto& [uuid, h] : drain_targets_) {
    Drained& d = drained_[uuid];
    // A pass that has not taken the samples for this long (its reads keep failing): stop draining,
    // so memory stays bounded; the next successful read finds the gap and reports it uncovered.
    if (d.util.size() + d.power.size() >= kMaxDriverListEntries) continue;
    gpu::DeviceSample scratch;
    scratch.uuid = uuid;
    if (power_only_targets_.count(uuid)) {
      ReadPowerSamples(h, scratch);
      d.power.insert(d.power.end(), scratch.power_samples.begin(), scratch.power_samples.end());
      d.errors.insert(d.errors.end(), scratch.errors.begin(), scratch.errors.end());
      continue;
    }
    const bool closed = ReadProcessUtilization(h, scratch, now_us);
    if (closed && scratch.process_utilization_supported) {
      ReadPowerSamples(h, scratch);
      if (!d.window_start_us) d.window_start_us = scratch.process_util_window_start_us;
      d.uncovered_us += scratch.process_util_uncovered_us;
      d.util.insert(d.util.end(), scratch.process_util.begin(), scratch.process_util.end());
      for (const auto& u : scratch.process_util) met.push_back(u.pid);
      d.power.insert(d.power.end(), scratch.power_samples.begin(), scratch.power_samples.end());
    }
    d.errors.insert(d.errors.end(), scratch.errors.begin(), scratch.errors.end());
  }
  std::sort(met.begin(), met.end());
  met.erase(std::unique(met.begin(), met.end()), met.end());
  return met;
}

void NvmlGpuSource::TakeDrained(gpu::DeviceSample& dev, bool window_closed) {
  const auto it = drained_.find(dev.uuid);
  if (it == drained_.end()) return;
  Drained& d = it->second;
  MergeErrors(d.errors, dev.errors);
  d.errors.clear();
  if (!window_closed) return;  // the window stays open: its drained samples wait with it
  if (!dev.process_utilization_supported || !d.window_start_us) {
    drained_.erase(it);
    return;
  }
  dev.process_util.insert(dev.process_util.begin(), d.util.begin(), d.util.end());
  dev.process_util_window_start_us = *d.window_start_us;
  // Where a drained window lost samples, its loss is counted with the others as if at the
  // window's start (the one place the observation has for it); the power samples of that time
  // were lost with them.
  dev.process_util_uncovered_us += d.uncovered_us;
  // Each read of power asks from its window's start, so a sample past one window's end comes
  // again in the next: one per stamp.
  MergePower(std::move(d.power), dev.power_samples);
  drained_.erase(it);
}

void NvmlGpuSource::TakeDrainedPower(gpu::DeviceSample& dev) {
  const auto it = drained_.find(dev.uuid);
  if (it == drained_.end()) return;
  Drained& d = it->second;
  MergeErrors(d.errors, dev.errors);
  MergePower(std::move(d.power), dev.power_samples);
  drained_.erase(it);
}

void NvmlGpuSource::DropDrainedOfUntargeted() {
  std::set<std::string> targets;
  for (const auto& t : drain_targets_) targets.insert(t.first);
  std::erase_if(drained_, [&](const auto& kv) { return !targets.count(kv.first); });
}

}  // namespace gpumeter::nvml
