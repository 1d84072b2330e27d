// GpuSource over the real NVML: dlopen, newest-symbol-first resolution, RAII for the library, the
// init reference and GPM samples. Returns plain values; a failing GPU degrades that GPU only.
// Not thread-safe: one thread (the sampler's worker) calls Sample().
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sources/gpu/gpu_source.h"
#include "sources/nvml/nvml_library.h"

namespace gpumeter::nvml {

// The most entries a list the driver sizes is given room for: a count the driver reports is
// trusted up to this (a GPU lists far fewer processes or samples), so a corrupt count costs a
// failed call, recorded, never an allocation of gigabytes.
inline constexpr size_t kMaxDriverListEntries = 1 << 16;

// Entries to allocate for a count the driver reported: `count` plus `headroom` (the list may grow
// between the calls), `fallback` when the driver said 0, never above kMaxDriverListEntries.
inline size_t DriverListEntries(uint64_t count, size_t headroom, size_t fallback) {
  const uint64_t want = count ? count + headroom : fallback;
  return static_cast<size_t>(std::min<uint64_t>(want, kMaxDriverListEntries));
}

struct NvmlSourceOptions {
  // Paths or sonames tried in order; default: the driver's soname.
  std::vector<std::string> library_candidates{kNvmlSoname};
  // Wall clock, Unix epoch µs (per-process utilization timestamps are epoch µs). With watch_xid
  // the watcher's thread calls it too: it must be thread-safe.
  std::function<uint64_t()> wall_clock_us;
  // On the first poll, ask for per-process samples this far back (later polls: since the last).
  uint64_t first_util_lookback_us = 1'000'000;
  gpu::CallObserver* observer = nullptr;  // not owned; may be null
  // Wait for XID events on a thread of its own (XidWatcher), each wait at most `xid_wait`: the
  // agent and the demo do; off by default so a source made for one read starts no thread.
  bool watch_xid = false;
  std::chrono::milliseconds xid_wait{500};
};

// Private to the source: gpu_state.h, nvml_call.h, process_lists.h, xid_events.h.
struct GpuState;
struct DeviceRead;
class NvmlCalls;
class ProcessLists;
class XidEvents;

class NvmlGpuSource final : public gpu::GpuSource {
 public:
  static Expected<std::unique_ptr<NvmlGpuSource>> Create(NvmlSourceOptions options);
  ~NvmlGpuSource() override;

  Expected<gpu::GpuSnapshot> Sample() override;
  // Reads the per-process utilization and power samples of every GPU the last Sample() read them
  // on (GPUs without MIG; board power only on MIG-enabled GPUs) since their last read, and keeps
  // them for the next Sample(), which merges them into its window (buffer_drain.cpp). The driver
  // keeps only so many sample periods (~10 s measured on the fake's model; not documented); an
  // interval longer than that loses its oldest samples unless they were drained. A failed drain
  // loses nothing: its window stays open and its error is reported with the next pass. Returns
  // the PIDs of the per-process samples this drain read (sorted, unique). Same thread as Sample().
  std::vector<uint32_t> Drain() override;
  const gpu::Capabilities& capabilities() const override { return caps_; }

 private:
  // A GPU the last Sample() left to Drain(): its state (owned by gpus_) and handle.
  struct DrainTarget {
    GpuState* gpu;
    nvmlDevice_t h;
    bool power_only;  // MIG-enabled: board power samples only
  };

  NvmlGpuSource(NvmlSourceOptions options, std::unique_ptr<NvmlLibrary> lib,
                std::unique_ptr<NvmlSession> session);
  void DetectCapabilities();
  // One device's reads; its state is looked up once its UUID is known.
  void SampleDevice(const NvmlCalls& nvml, nvmlDevice_t h, gpu::DeviceSample& dev, uint64_t now_us);
  // The per-process window and power (GPUs without MIG), or the instances and board power
  // (MIG-enabled GPUs); each GPU whose buffers can be drained becomes a drain target.
  void ReadWholeGpu(const DeviceRead& r, uint64_t now_us);
  void ReadMigGpu(const DeviceRead& r);
  GpuState& StateOf(const std::string& uuid);
  void DropDrainedOfUntargeted();  // pending samples of GPUs no longer drained are dropped

  NvmlSourceOptions options_;
  std::unique_ptr<NvmlLibrary> lib_;
  std::unique_ptr<NvmlSession> session_;
  gpu::Capabilities caps_;
  std::unique_ptr<ProcessLists> procs_;
  // UUID and name by index, from the last pass that could read them: a lost GPU is still the
  // same hardware, and its model prices the time its holders keep it.
  std::map<unsigned int, std::pair<std::string, std::string>> identity_by_index_;
  std::map<std::string, std::unique_ptr<GpuState>> gpus_;  // by GPU UUID
  std::vector<DrainTarget> drain_targets_;                 // from the last Sample(), in order
  // With watch_xid: its watcher starts on the first Sample() that finds GPUs (xid_events.cpp);
  // destroyed before the session.
  std::unique_ptr<XidEvents> xid_;
};

}  // namespace gpumeter::nvml
