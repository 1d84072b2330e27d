// Plain value types a GpuSource returns: no NVML types above the source. Every measured field is
// std::optional: absent means NVML did not give it (unknown), never 0. Units are in the names.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpumeter::gpu {

struct MemoryInfo {
  uint64_t total_bytes = 0;
  uint64_t used_bytes = 0;                 // excludes reserved when reserved_bytes is known
  std::optional<uint64_t> reserved_bytes;  // known only through nvmlDeviceGetMemoryInfo_v2
  uint64_t free_bytes = 0;
};

enum class ProcessType { kCompute, kMps };

struct GpuProcess {
  uint32_t pid = 0;  // host PID (NVML has no PID namespaces)
  ProcessType type = ProcessType::kCompute;
  std::optional<uint64_t> used_memory_bytes;  // NVML_VALUE_NOT_AVAILABLE -> unknown
  std::optional<uint32_t> gpu_instance_id;    // MIG only
  std::optional<uint32_t> compute_instance_id;
};

// One per-process sample as the driver returned it (already filtered: newer than the last poll,
// values ≤ 100 %): SM and memory (memUtil: the part of the period the process read or wrote device
// memory) utilization.
struct ProcessUtilSample {
  uint32_t pid = 0;
  uint64_t timestamp_us = 0;  // CPU timestamp, Unix epoch µs
  uint32_t sm_percent = 0;
  uint32_t memory_percent = 0;
};

// A failed NVML call on one device: which call, and the NVML code and its text.
struct CallError {
  std::string call;
  int code = 0;
  std::string message;
};

struct MigInstanceSample {
  std::string uuid;  // "MIG-…"
  std::string name;
  uint32_t gpu_instance_id = 0;
  uint32_t compute_instance_id = 0;
  std::optional<MemoryInfo> memory;
  std::vector<GpuProcess> processes;
  std::optional<double> sm_active_ratio;  // GPM SM_UTIL / 100 for this GPU instance, [0, 1]
  // GPM DRAM_BW_UTIL / 100 for this GPU instance: the share of peak DRAM bandwidth used, [0, 1].
  std::optional<double> dram_bw_ratio;
  std::optional<uint32_t> slices;  // compute slices of its GPU-instance profile
  // DCGM GR engine activity of this GPU instance over the interval, [0, 1]: not from NVML, set
  // by the pipeline from the DCGM source (sources/dcgm) where one is configured.
  std::optional<double> dcgm_gr_active;
  // DCGM DRAM_ACTIVE of this GPU instance over the interval (share of cycles the memory interface
  // moved data), [0, 1]: set as dcgm_gr_active is.
  std::optional<double> dcgm_dram_active;
};

enum class ComputeMode { kDefault, kExclusiveProcess, kProhibited, kUnknown };

// Board power over one of the driver's sample periods (nvmlDeviceGetSamples, TOTAL_POWER).
struct PowerSample {
  uint64_t timestamp_us = 0;  // the period's end as the driver stamps it, Unix epoch µs
  double watts = 0;           // mean board power over the period
};

// A GPU's mean activity and power over one of DCGM's collection intervals, for the idle-power
// fit: per-pass DCGM activity is aligned, not measured, and would bias a per-pass fit.
struct ActivityWindow {
  double activity = 0;  // slice-weighted on MIG GPUs, [0, 1]
  double watts = 0;     // mean board power over the window (energy counter delta / seconds)
  double seconds = 0;
};

// An XID event NVML delivered (nvmlEventTypeXidCriticalError) since the last pass.
struct XidEvent {
  uint64_t xid = 0;                         // 999: the driver's "unknown"
  std::optional<uint32_t> gpu_instance_id;  // the MIG GPU instance it is attributed to, if any
  uint64_t seen_us = 0;                     // when the agent received it, Unix epoch µs
};

// The GPU's health as the driver reports it this pass (docs/nvml.md, "Health"); each part unknown
// where the call is missing from the driver, not supported by the board, or failed.
struct GpuHealth {
  std::optional<uint64_t> clock_event_reasons;  // nvmlClocksEventReason* bits in effect now
  // ECC errors since the driver loaded (volatile counters; they restart at a driver reload).
  std::optional<uint64_t> ecc_corrected, ecc_uncorrected;
  struct RemappedRows {                           // Ampere and later, MIG off
    uint32_t correctable = 0, uncorrectable = 0;  // rows remapped for each cause
    bool pending = false;                         // a remap waits for the next GPU reset
    bool failed = false;                          // a remap failed: no spare row
  };
  std::optional<RemappedRows> remapped_rows;
  struct RetiredPages {       // before Ampere (Kepler to Turing boards with ECC)
    uint32_t single_bit = 0;  // pages retired after repeated single-bit (correctable) errors
    uint32_t double_bit = 0;  // pages retired after a double-bit (uncorrectable) error
    // Some retirement waits for the next driver load (a reboot or GPU reset); unknown if unread.
    std::optional<bool> pending;
  };
  std::optional<RetiredPages> retired_pages;
  std::vector<XidEvent> xid_events;  // delivered since the last pass, oldest first
};

struct DeviceSample {
  uint32_t index = 0;  // NVML enumeration index (not stable across reboots; key by uuid)
  std::string uuid;
  std::string name;
  bool lost = false;  // NVML_ERROR_GPU_IS_LOST: fell off the bus
  std::optional<MemoryInfo> memory;
  std::optional<uint32_t> utilization_gpu_percent;
  // utilization.memory: the part of the driver's last sample period in which device memory was
  // read or written (time, not bandwidth), percent.
  std::optional<uint32_t> utilization_memory_percent;
  std::optional<double> power_watts;
  std::optional<double> energy_joules;  // counter since driver load
  std::optional<ComputeMode> compute_mode;
  bool mig_enabled = false;
  std::vector<GpuProcess> processes;          // whole device (aggregate on MIG GPUs)
  bool process_utilization_supported = true;  // false on MIG GPUs, old drivers
  std::vector<ProcessUtilSample> process_util;
  // The samples cover (start, end]. Once the driver's sample period is known, end is the last
  // period boundary at or before the poll and the next window starts there; before, end is the
  // poll.
  uint64_t process_util_window_start_us = 0;
  uint64_t process_util_window_end_us = 0;
  // The driver's per-process sample period: the smallest spacing of distinct sample timestamps
  // seen on this GPU so far; unknown until two distinct stamps have been seen.
  std::optional<uint64_t> process_util_period_us;
  // The part of the window the driver's sample buffer no longer held (it keeps a fixed span of
  // periods; a poll later than that span loses the oldest): from the window's start to the first
  // sample's period. 0 when covered, or when that cannot be told from idle time (see the NVML
  // source). And the buffer's span: the longest span of samples a whole-buffer read returned.
  uint64_t process_util_uncovered_us = 0;
  std::optional<uint64_t> process_util_buffer_span_us;
  // Board power per driver period from the per-process window's start (so it overlaps the last
  // read's on purpose), oldest first: with the per-process samples of the same periods, the power
  // each process's busy time drew. Empty where the driver has none (or the call failed: then an
  // error is recorded).
  std::vector<PowerSample> power_samples;
  std::optional<double> sm_active_ratio;   // GPM SM_UTIL / 100 for the whole GPU
  std::optional<double> dram_bw_ratio;     // GPM DRAM_BW_UTIL / 100 for the whole GPU
  std::optional<double> dcgm_gr_active;    // DCGM GR engine activity, as on MigInstanceSample
  std::optional<double> dcgm_dram_active;  // DCGM DRAM_ACTIVE, as on MigInstanceSample
  // Set on the pass that saw a new DCGM collection of this GPU (every instance's activity known).
  std::optional<ActivityWindow> dcgm_window;
  // Set by the pipeline where some unit's activity comes from DCGM: the collection that covers
  // this interval has not been seen yet, so the accountant holds the interval until it has
  // (attribution::Accountant::Release), and dcgm_gr_active is filled in then.
  bool dcgm_held = false;
  std::vector<MigInstanceSample> mig_instances;
  std::optional<uint32_t> mig_total_slices;  // slices of the full-GPU profile (7 on A100/H100/H200)
  std::vector<CallError> errors;
  GpuHealth health;
};

// Which NVML entry points this driver offers; decided once when the library is loaded.
struct Capabilities {
  std::string library_path;
  std::string driver_version;  // empty if unknown
  std::string nvml_version;
  std::string process_api;  // e.g. "nvmlDeviceGetComputeRunningProcesses_v3 (24-byte entries)"
  std::string memory_api;   // "nvmlDeviceGetMemoryInfo_v2" or "nvmlDeviceGetMemoryInfo"
  std::string util_api;     // per-process utilization entry point, or "" when none
  bool gpm = false;
  bool mig = false;
};

struct GpuSnapshot {
  uint64_t timestamp_us = 0;  // wall clock when the sample was taken, Unix epoch µs
  std::vector<DeviceSample> devices;
  std::vector<CallError> errors;  // node-level failures (e.g. device count)
  // The XID event watcher (NvmlSourceOptions::watch_xid): unset when not asked for; false with
  // the reason while it cannot wait (no event API, a failing wait), true while it waits.
  std::optional<bool> xid_watch_ok;
  std::string xid_watch_error;
};

const char* ToString(ComputeMode mode);
// The inverse of ToString, exactly; nullopt for any other text.
std::optional<ComputeMode> ParseComputeMode(std::string_view name);

// The clocks-event reasons NVML names (GpuHealth::clock_event_reasons), as bit and label value
// (gpu_idle, applications_clocks, sw_power_cap, hw_slowdown, sync_boost, sw_thermal, hw_thermal,
// hw_power_brake, display_clock), in bit order. `slowdown`: the GPU runs slower than it was set
// to for heat or a power emergency (not idling, an application setting, the power cap a busy GPU
// reaches as designed, or a sync-boost group).
struct ClockEventReason {
  uint64_t bit;
  const char* name;
  bool slowdown;
};
const std::vector<ClockEventReason>& ClockEventReasons();

// The newest per-process SM sample of each PID in the device's window, in percent. A listed
// process without an entry had no sample: NVML reports busy processes only.
std::map<uint32_t, uint32_t> LatestSmPercent(const DeviceSample& device);

}  // namespace gpumeter::gpu
