// Guardrail findings (docs/guardrails.md): what a node's readings show is wrong with how its GPUs
// are given out and used — a container on a GPU it was not allocated, a GPU exposed through
// NVIDIA_VISIBLE_DEVICES, use without a request, host processes, allocated GPUs left idle, shared
// GPUs near out-of-memory, MPS clients without limits, GPUs lost off the bus with the pods on them.
// Plain values and their configuration. Times are Unix seconds; memory in bytes; money in the
// pricing's currency.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "common/error.h"

namespace gpumeter::guard {

enum class Kind {
  kUnallocatedDevice,      // a container's process runs on a unit not allocated to it
  kNoGpuRequest,           // a container uses a GPU although its pod requested none
  kVisibleDevicesAll,      // a container's NVIDIA_VISIBLE_DEVICES is "all"
  kVisibleDevicesOutside,  // it names GPUs or MIG instances outside the container's allocation
  kHostProcess,            // a process outside any pod uses a GPU
  kIdleAllocation,         // an allocated unit unused for the idle window (waste, with its cost)
  kOomRisk,                // a shared GPU whose tenants' memory approaches its total
  kMpsNoLimits,            // an MPS client without a memory or active-thread limit
  kGpuLost,                // a GPU fell off the bus, with each container that held it then
  // GPU health (NVML), each with the containers holding the GPU (or its MIG instances) then:
  kEccUncorrectable,     // uncorrectable ECC errors since the driver loaded
  kRowRemapPending,      // a memory row remap waits for the next GPU reset
  kRowRemapFailed,       // a row remap failed: no spare row left
  kClocksSlowdown,       // the clocks are held down for heat or a power emergency
  kXid,                  // an XID event on the GPU (the GPU's or the platform's fault)
  kXidApplication,       // an XID NVIDIA's catalog puts on the application (13, 31, 43, 45, 68)
  kRetiredPagesPending,  // before Ampere: a page retirement waits for a reboot or driver reload
  kRetiredPagesLimit,    // before Ampere: the retired pages reach the replacement limit (63)
};
inline constexpr std::array<Kind, 17> kAllKinds = {
    Kind::kUnallocatedDevice, Kind::kNoGpuRequest,
    Kind::kVisibleDevicesAll, Kind::kVisibleDevicesOutside,
    Kind::kHostProcess,       Kind::kIdleAllocation,
    Kind::kOomRisk,           Kind::kMpsNoLimits,
    Kind::kGpuLost,           Kind::kEccUncorrectable,
    Kind::kRowRemapPending,   Kind::kRowRemapFailed,
    Kind::kClocksSlowdown,    Kind::kXid,
    Kind::kXidApplication,    Kind::kRetiredPagesPending,
    Kind::kRetiredPagesLimit};
// "unallocated-device", "no-gpu-request", "visible-devices-all", "visible-devices-outside",
// "host-process", "idle-allocation", "oom-risk", "mps-no-limits", "gpu-lost",
// "ecc-uncorrectable", "row-remap-pending", "row-remap-failed", "clocks-slowdown", "xid",
// "xid-application", "retired-pages-pending", "retired-pages-limit".
const char* ToString(Kind kind);
std::optional<Kind> KindFromString(std::string_view text);

enum class Severity { kInfo = 0, kWarning = 1, kCritical = 2 };
const char* ToString(Severity severity);  // "info", "warning", "critical"
std::optional<Severity> SeverityFromString(std::string_view text);

struct Finding {
  Kind kind = Kind::kUnallocatedDevice;
  Severity severity = Severity::kWarning;
  std::string node;
  std::string ns, pod, container;  // empty for a finding about a device or a host process
  std::string unit_uuid;           // the GPU or MIG instance; empty for a container-wide finding
  std::string gpu_uuid;            // its physical GPU
  std::string process;             // host-process only: the command name (the PID when unknown)
  std::string evidence;            // the readings that showed it, for a human
  double first_seen = 0, last_seen = 0;  // Unix seconds
  // idle-allocation only: the unit's share × seconds idle, as GPU-hours, and what they cost
  // (nullopt when no price is known for the model).
  std::optional<double> waste_gpu_hours, waste_cost;
  std::string currency, price_source;
};

struct GuardConfig {
  // Severity of each kind; a kind absent from the map is off.
  std::map<Kind, Severity> severity = {{Kind::kUnallocatedDevice, Severity::kCritical},
                                       {Kind::kNoGpuRequest, Severity::kCritical},
                                       {Kind::kVisibleDevicesAll, Severity::kWarning},
                                       {Kind::kVisibleDevicesOutside, Severity::kWarning},
                                       {Kind::kHostProcess, Severity::kWarning},
                                       {Kind::kIdleAllocation, Severity::kWarning},
                                       {Kind::kOomRisk, Severity::kWarning},
                                       {Kind::kMpsNoLimits, Severity::kWarning},
                                       {Kind::kGpuLost, Severity::kCritical},
                                       {Kind::kEccUncorrectable, Severity::kCritical},
                                       {Kind::kRowRemapPending, Severity::kWarning},
                                       {Kind::kRowRemapFailed, Severity::kCritical},
                                       {Kind::kClocksSlowdown, Severity::kWarning},
                                       {Kind::kXid, Severity::kCritical},
                                       {Kind::kXidApplication, Severity::kInfo},
                                       {Kind::kRetiredPagesPending, Severity::kWarning},
                                       {Kind::kRetiredPagesLimit, Severity::kCritical}};
  // A holder is idle while it uses less than this fraction of its share of the unit's compute.
  double idle_below = 0.02;
  // … for at least this many accounted seconds of known activity in a row.
  double idle_window_s = 3600;
  // A shared GPU is at risk when its tenants hold at least this fraction of its memory.
  double oom_ratio = 0.9;
  // An event (an XID, a rise of the uncorrectable ECC count) stays open this long after it came.
  double event_open_s = 3600;
  // Clocks held down for heat or power are a finding once they held this long.
  double slowdown_hold_s = 60;
  // Host processes (by command name, /proc/<pid>/stat) that are expected on a GPU node.
  std::set<std::string> expected_host_processes = {"nvidia-cuda-mps-server", "nv-hostengine"};
};

// A guardrails file (YAML, docs/guardrails.md) over the defaults; `label` (its path) names it in
// errors, with the key that was wrong.
Expected<GuardConfig> ParseGuardConfig(std::string_view yaml, const std::string& label);

}  // namespace gpumeter::guard
