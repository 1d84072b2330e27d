// GpuSource over the real NVML: dlopen, newest-symbol-first resolution, RAII for the library, the
// init reference and GPM samples. Returns plain values; a failing GPU degrades that GPU only.
// Not thread-safe: one thread (the sampler's worker) calls Sample().
#pragma once

#include <algorithm>
#include <atomic>
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
#include "sources/nvml/xid_watcher.h"

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

class NvmlGpuSource final : public gpu::GpuSource {
 public:
  static Expected<std::unique_ptr<NvmlGpuSource>> Create(NvmlSourceOptions options);
  ~NvmlGpuSource() override;

  Expected<gpu::GpuSnapshot> Sample() override;
  // Reads the per-process utilization and power samples of every GPU the last Sample() read them
  // on (GPUs without MIG) since their last read, and keeps them for the next Sample(), which
  // merges them into its window (buffer_drain.cpp). The driver keeps only so many sample periods
  // (~10 s measured on the fake's model; not documented); an interval longer than that loses its
  // oldest samples unless they were drained. A failed drain loses nothing: its window stays open
  // and its error is reported with the next pass. Same thread as Sample().
  std::vector<uint32_t> Drain() override;
  const gpu::Capabilities& capabilities() const override { return caps_; }

 private:
  struct ProcessApi {
    decltype(NvmlApi::nvmlDeviceGetComputeRunningProcesses_v3) compute = nullptr;
    decltype(NvmlApi::nvmlDeviceGetMPSComputeRunningProcesses_v3) mps = nullptr;
    size_t stride = 0;
  };
  class GpmSample;  // RAII owner of an nvmlGpmSample_t

  NvmlGpuSource(NvmlSourceOptions options, std::unique_ptr<NvmlLibrary> lib,
                std::unique_ptr<NvmlSession> session);
  void DetectCapabilities();

  nvmlReturn_t Call(const char* name, const std::function<nvmlReturn_t()>& fn);
  // Records a failed call on `dev` (NOT_SUPPORTED is a capability, not an error); true if ok.
  bool Check(gpu::DeviceSample& dev, const char* call, nvmlReturn_t rc);

  void SampleDevice(nvmlDevice_t handle, gpu::DeviceSample& dev, uint64_t now_us);
  std::optional<gpu::MemoryInfo> ReadMemory(nvmlDevice_t h, gpu::DeviceSample& dev);
  std::vector<gpu::GpuProcess> ReadProcesses(nvmlDevice_t h, gpu::DeviceSample& dev,
                                             uint64_t total_bytes);
  void ReadProcessList(nvmlDevice_t h, gpu::DeviceSample& dev, bool mps, uint64_t total_bytes,
                       std::vector<gpu::GpuProcess>& out);
  // Reads the per-process samples since the GPU's window start into `dev`; false when the read
  // failed (the window stays open for the next read).
  bool ReadProcessUtilization(nvmlDevice_t h, gpu::DeviceSample& dev, uint64_t now_us);
  // Per-process utilization samples newer than `since_us` (0: the driver's whole buffer) into
  // `out`, through whichever entry point the driver has; `name` is the call's.
  nvmlReturn_t ReadUtilSamples(nvmlDevice_t h, uint64_t since_us,
                               std::vector<gpu::ProcessUtilSample>& out, const char** name);
  // Sets dev.process_util_uncovered_us (and learns the buffer's span) after a read.
  void AccountUncovered(nvmlDevice_t h, gpu::DeviceSample& dev, const std::set<uint64_t>& stamps,
                        uint64_t window_start_us, uint64_t now_us, uint64_t period_us,
                        bool first_read);
  // Board power samples from the per-process window's start into dev.power_samples
  // (power_samples.cpp).
  void ReadPowerSamples(nvmlDevice_t h, gpu::DeviceSample& dev);
  // Merges what Drain() read since the last pass into `dev`, whose window it extends back to the
  // first drained window's start; with `window_closed` false (this pass's read failed) only the
  // drains' errors are taken and their samples stay pending with the open window.
  void TakeDrained(gpu::DeviceSample& dev, bool window_closed);
  void DropDrainedOfUntargeted();  // pending samples of GPUs no longer drained are dropped
  void ReadMigInstances(nvmlDevice_t h, gpu::DeviceSample& dev);
  // Clocks-event reasons, ECC counters, remapped rows into dev.health (health_reads.cpp).
  void ReadHealth(nvmlDevice_t h, gpu::DeviceSample& dev);
  void ReadRetiredPages(nvmlDevice_t h, gpu::DeviceSample& dev);
  // Compute slices of the GPU instance `gi_id`, from its profile; unknown if NVML cannot say.
  std::optional<uint32_t> InstanceSlices(nvmlDevice_t h, unsigned int gi_id,
                                         gpu::DeviceSample& dev);
  // GPM ratios of a unit over the time since its last sample (key: the unit), [0, 1]: SM
  // activity and the share of peak DRAM bandwidth; each unknown where the driver did not give it
  // (gpm_metrics.cpp).
  struct GpmReading {
    std::optional<double> sm, dram_bw;
  };
  GpmReading GpmActivity(const std::string& key, nvmlDevice_t h, std::optional<unsigned int> gi,
                         gpu::DeviceSample& dev);

  NvmlSourceOptions options_;
  std::unique_ptr<NvmlLibrary> lib_;
  std::unique_ptr<NvmlSession> session_;
  gpu::Capabilities caps_;
  ProcessApi procs_;
  std::map<std::string, uint64_t> last_seen_us_;  // per GPU UUID
  std::map<std::string, uint64_t>
      util_period_us_;  // driver's sample period per GPU UUID (0: unknown)
  std::map<std::string, uint64_t> util_span_us_;        // the buffer's span seen, per GPU UUID
  std::map<std::string, uint64_t> util_oldest_us_;      // its oldest stamp at the last whole read
  std::map<std::string, uint64_t> power_last_seen_us_;  // newest power sample read, per GPU UUID
  // UUID and name by index, from the last pass that could read them: a lost GPU is still the
  // same hardware, and its model prices the time its holders keep it.
  std::map<unsigned int, std::pair<std::string, std::string>> identity_by_index_;
  std::map<std::string, bool> gpm_supported_;  // per GPU UUID
  std::map<std::string, std::map<unsigned int, unsigned int>>
      gi_profile_slices_;                                       // GPU UUID -> profile ID -> slices
  std::map<std::string, uint32_t> mig_slices_;                  // MIG UUID -> compute slices
  std::map<std::string, std::unique_ptr<GpmSample>> gpm_prev_;  // per unit key
  // What Drain() read since the last pass that took it, per GPU UUID.
  struct Drained {
    std::optional<uint64_t> window_start_us;  // the first drained window's start
    uint64_t uncovered_us = 0;                // Σ of the drained windows' uncovered parts
    std::vector<gpu::ProcessUtilSample> util;
    std::vector<gpu::PowerSample> power;
    std::vector<gpu::CallError> errors;
  };
  std::map<std::string, Drained> drained_;
  std::vector<std::pair<std::string, nvmlDevice_t>> drain_targets_;  // from the last Sample()
  std::set<std::string> power_only_targets_;  // of those, MIG-enabled GPUs: power samples only
  // Puts the power samples drained since the last pass before the pass's own (MIG-enabled GPUs,
  // which have no per-process window).
  void TakeDrainedPower(gpu::DeviceSample& dev);
  // A MIG-enabled GPU's board power samples, with those drained since the last pass.
  void ReadMigPower(nvmlDevice_t h, gpu::DeviceSample& dev);
  // Started on the first Sample() that found GPUs (xid_events.cpp); stopped before the session.
  bool RestartXidWatch(const std::vector<nvmlDevice_t>& present);
  void TakeXids(const std::vector<nvmlDevice_t>& handles, gpu::GpuSnapshot& snap);
  std::unique_ptr<XidWatcher> xid_;
  bool xid_tried_ = false;
  uint64_t xid_passes_since_try_ = 0;
  std::string xid_unavailable_;
  std::vector<ReceivedXid> xid_unmatched_;  // events of GPUs the last pass did not list
  std::vector<nvmlDevice_t> xid_handles_;   // the GPUs the watcher registered
};

}  // namespace gpumeter::nvml
