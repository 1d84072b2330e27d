// Reading the driver's sample buffers between passes (NvmlGpuSource::Drain), and merging what was
// read into the next pass's window. NVML keeps per-process utilization and power samples in a
// ring of a fixed number of driver periods; a poll later than the ring's span loses the oldest
// (the source then reports that part as uncovered, and attribution estimates it). Draining keeps
// every period at any sampling interval: each drain is a window of its own, read and checked for
// loss exactly as a pass's, so the pass's window is the drains' windows and its own, end to end.
#include <algorithm>
#include <vector>

#include "domain/power_trace.h"
#include "sources/nvml/device_readers.h"
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

void DrainGpu(const DeviceRead& r, bool power_only, uint64_t now_us, uint64_t first_lookback_us,
              std::vector<uint32_t>& pids) {
  Drained& d = r.gpu.drained ? *r.gpu.drained : r.gpu.drained.emplace();
  // A pass that has not taken the samples for this long (its reads keep failing): stop draining,
  // so memory stays bounded; the next successful read finds the gap and reports it uncovered.
  if (d.util.size() + d.power.size() >= kMaxDriverListEntries) return;
  gpu::DeviceSample& scratch = r.dev;
  if (power_only) {
    ReadPowerSamples(r);
    d.power.insert(d.power.end(), scratch.power_samples.begin(), scratch.power_samples.end());
    d.errors.insert(d.errors.end(), scratch.errors.begin(), scratch.errors.end());
    return;
  }
  const bool closed = ReadProcessUtilization(r, now_us, first_lookback_us);
  if (closed && scratch.process_utilization_supported) {
    ReadPowerSamples(r);
    if (!d.window_start_us) d.window_start_us = scratch.process_util_window_start_us;
    d.uncovered_us += scratch.process_util_uncovered_us;
    d.util.insert(d.util.end(), scratch.process_util.begin(), scratch.process_util.end());
    d.power.insert(d.power.end(), scratch.power_samples.begin(), scratch.power_samples.end());
    for (const auto& u : scratch.process_util) pids.push_back(u.pid);
  }
  d.errors.insert(d.errors.end(), scratch.errors.begin(), scratch.errors.end());
}

void TakeDrained(GpuState& gpu, gpu::DeviceSample& dev, bool window_closed) {
  if (!gpu.drained) return;
  Drained& d = *gpu.drained;
  MergeErrors(d.errors, dev.errors);
  d.errors.clear();
  if (!window_closed) return;  // the window stays open: its drained samples wait with it
  if (!dev.process_utilization_supported || !d.window_start_us) {
    gpu.drained.reset();
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
  gpu.drained.reset();
}

void TakeDrainedPower(GpuState& gpu, gpu::DeviceSample& dev) {
  if (!gpu.drained) return;
  MergeErrors(gpu.drained->errors, dev.errors);
  MergePower(std::move(gpu.drained->power), dev.power_samples);
  gpu.drained.reset();
}

std::vector<uint32_t> NvmlGpuSource::Drain() {
  const NvmlCalls nvml(*lib_, options_.observer);
  const uint64_t now_us = options_.wall_clock_us();
  std::vector<uint32_t> pids;
  for (const DrainTarget& t : drain_targets_) {
    gpu::DeviceSample scratch;
    DrainGpu({nvml, t.h, *t.gpu, scratch}, t.power_only, now_us, options_.first_util_lookback_us,
             pids);
  }
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  return pids;
}

}  // namespace gpumeter::nvml
