// Value types of a simulated node. One scenario feeds every fake (NVML now; kubelet, /proc and the
// API server later) and yields the ground truth that attribution is scored against.
// Units are in the names: *_bytes, *_s (seconds since the scenario starts), *_watts, *_joules;
// duty cycles are fractions in [0, 1]. Plain data, no invariants beyond what Validate() checks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "domain/gpu_types.h"
#include "domain/sharing_mode.h"

namespace gpumeter::scenario {

// The product's one ComputeMode (kUnknown is never loaded from a scenario).
using domain::ToString;
using gpu::ComputeMode;
using gpu::ToString;

// Board power: P(t) = idle_watts + (max_watts - idle_watts) * busy(t).
struct PowerModel {
  double idle_watts = 0;
  double max_watts = 0;
};

struct MigInstance {
  uint32_t gi_id = 0;
  uint32_t ci_id = 0;
  std::string profile;  // e.g. "3g.71gb"
  std::string uuid;     // "MIG-<uuid>"
  uint64_t memory_bytes = 0;
  uint32_t slices = 0;  // compute slices out of Gpu::mig_total_slices
  // Slices of its compute instance: fewer than `slices` caps what DCGM's GR engine activity of
  // the GPU instance can show at compute_slices / slices (DCGM #138).
  uint32_t compute_slices = 0;
};

struct Sharing {
  domain::SharingMode mode = domain::SharingMode::kExclusive;
  uint32_t replicas = 1;  // device-plugin replicas per physical unit
};

struct Gpu {
  uint32_t index = 0;
  std::string uuid;  // "GPU-<uuid>"
  std::string model;
  uint64_t memory_bytes = 0;
  uint64_t reserved_bytes = 0;  // driver/firmware reservation (nvmlMemory_v2_t.reserved)
  PowerModel power;
  double energy_start_joules = 0;  // counter value at t = 0 (energy since driver load)
  ComputeMode compute_mode = ComputeMode::kDefault;
  bool gpm_supported = false;           // Hopper and later
  bool per_process_utilization = true;  // the driver returns per-PID SM samples
  bool forbidden = false;               // handle by index returns NO_PERMISSION
  // A dcgm-exporter on the node reports this GPU (sim/node/dcgm_exporter.h), collecting every
  // dcgm_interval_s (its -c; 30 s by default).
  bool dcgm_exporter = false;
  double dcgm_interval_s = 30;
  bool mig_enabled = false;
  uint32_t mig_total_slices = 7;
  std::vector<MigInstance> mig_instances;
  Sharing sharing;
};

// A DRA claim device a container holds, as the kubelet's PodResources lists it under
// dynamic_resources (kubernetes-node.md §6.7). The device names one the node's ResourceSlices
// publish (DraDeviceName). Two containers naming the same claim and device share it.
struct Claim {
  std::string name;  // ResourceClaim name, in the pod's namespace
  std::string driver = "gpu.nvidia.com";
  std::string pool;                     // the NVIDIA driver's pool is the node's name
  std::string device;                   // e.g. "gpu-0", "gpu-1-mig-1g18gb-9-0"
  std::optional<std::string> share_id;  // consumable capacity (Kubernetes 1.35+)
};

struct Container {
  std::string name;
  std::string id;                       // "containerd://<64 hex>"
  std::vector<std::string> device_ids;  // as the kubelet reports them: GPU-…, MIG-…, …::N
  std::map<std::string, std::string> requests;  // resource name -> quantity
  std::vector<Claim> claims;                    // DRA claim devices
};

struct Pod {
  std::string ns;
  std::string name;
  std::string uid;
  std::string qos = "BestEffort";
  std::map<std::string, std::string> labels;
  std::vector<Container> containers;
};

// Identifies a container as "namespace/pod/container".
struct ContainerRef {
  std::string ns, pod, container;
  std::string Key() const { return ns + "/" + pod + "/" + container; }
};

// Duty cycle from at_s on, until the next point.
struct DutyPoint {
  double at_s = 0;
  double duty = 0;  // fraction of time this process keeps the SMs busy, [0, 1]
};

// What one process does on one unit (a GPU, or a MIG instance on MIG-enabled GPUs).
struct DeviceUsage {
  std::string unit_uuid;      // GPU-… or MIG-…
  uint64_t memory_bytes = 0;  // at process start
  double memory_growth_bytes_per_s = 0;
  std::optional<uint64_t> memory_max_bytes;
  std::vector<DutyPoint> duty;  // sorted by at_s; before the first point the duty is 0
  // Memory busy time: the share of the unit's memory bandwidth (and of its memory-busy time, which
  // the simulated driver reports as the same number) the process uses while it runs its SM duty,
  // as `duty`'s points. Unset: half its SM duty (what the fake reported before this was modelled).
  std::optional<std::vector<DutyPoint>> memory_duty;
};

enum class ProcessList { kCompute, kMps };  // which NVML running-process list shows it

struct Process {
  uint32_t pid = 0;
  std::string name;
  std::optional<ContainerRef> container;  // empty: a host process
  std::map<std::string, std::string> env;
  ProcessList list = ProcessList::kCompute;
  double start_s = 0;
  std::optional<double> end_s;  // the process exits here
  std::vector<DeviceUsage> usage;
};

enum class FaultKind {
  kCallError,
  kGpuLost,
  kDelay,
  kBadValue,
  kEccError,
  kRowRemap,
  kThrottle,
  kXid,
  kPageRetire
};
// Health events change what the GPU's health calls report (ECC counters, remapped rows, clocks-
// event reasons); no call fails, and no signal of attribution is hidden.
inline bool IsHealthEvent(FaultKind k) {
  return k == FaultKind::kEccError || k == FaultKind::kRowRemap || k == FaultKind::kThrottle ||
         k == FaultKind::kXid || k == FaultKind::kPageRetire;
}
// kBadValue: what the call hands back is wrong though it succeeds (nvmlDeviceGetSamples only):
// every sample 0 W, 9 kW, stamped at the caller's last-seen time, or of another value type.
enum class BadValue { kZero, kHuge, kStale, kType };

struct Fault {
  FaultKind kind = FaultKind::kCallError;
  std::string call;                   // NVML symbol, e.g. "nvmlDeviceGetPowerUsage"; "*" = all
  std::optional<uint32_t> gpu_index;  // empty: every GPU
  int code = 0;                       // nvmlReturn_t for kCallError
  double from_s = 0;
  std::optional<double> to_s;            // empty: until the end
  uint32_t delay_ms = 0;                 // kDelay: the call blocks this long
  BadValue bad_value = BadValue::kZero;  // kBadValue: how the reply is wrong
  // Health events, from from_s (at_s in the file) on, or over [from_s, to_s) for kThrottle and a
  // pending remap (cleared by the reset at to_s).
  uint64_t count = 0;          // kEccError: errors; kRowRemap: rows; kPageRetire: pages
  bool uncorrectable = false;  // kEccError, kRowRemap, kPageRetire (double-bit): which counter
  bool pending = false;        // kRowRemap, kPageRetire: waits for the next reset or reload
  bool failed = false;         // kRowRemap: remapping failed (no spare row)
  uint64_t reasons = 0;        // kThrottle: clocks-event reason bits (nvmlClocksEventReason*)
  uint64_t xid = 0;            // kXid: the XID an event reports at from_s
  std::optional<uint32_t> gpu_instance_id;  // kXid: the MIG GPU instance it is attributed to
};

struct Driver {
  std::string version = "580.65.06";
  std::string nvml_version = "13.580.65.06";
  int cuda_version = 13000;
};

struct Scenario {
  std::string name;
  std::string description;
  std::string source;  // file it was loaded from
  std::string node_name;
  // The node's Node object as the simulated node serves it (node_object: labels, provider_id):
  // instance type, region, capacity type and GFD labels. Unset: no Node object (the agent runs
  // without one, as with no RBAC to read it).
  struct NodeObject {
    std::map<std::string, std::string> labels;
    std::string provider_id;
  };
  std::optional<NodeObject> node_object;
  double duration_s = 300;
  Driver driver;
  std::vector<Gpu> gpus;
  std::vector<Pod> pods;
  std::vector<Process> processes;
  std::vector<Fault> faults;

  const Gpu* FindGpuByUuid(const std::string& uuid) const;
  const Gpu* FindGpuByIndex(uint32_t index) const;
  // The GPU that holds this unit (a GPU UUID or a MIG UUID), and the MIG instance when it is one.
  struct UnitRef {
    const Gpu* gpu = nullptr;
    const MigInstance* mig = nullptr;
  };
  UnitRef FindUnit(const std::string& unit_uuid) const;
  const Pod* FindPod(const std::string& ns, const std::string& pod_name) const;
  // The unit (GPU-… or MIG-…) behind a device of the node's ResourceSlices for driver
  // gpu.nvidia.com in pool `node_name` (DraDeviceName); "" when there is none.
  std::string DraUnit(const std::string& device) const;
};

// The name the NVIDIA DRA driver gives a device in its ResourceSlice (kubernetes-node.md §6.5):
// "gpu-<minor>" for a whole GPU (the minor is the scenario's index) and, for a MIG instance,
// "gpu-<minor>-mig-<profile without dots>-<a>-<b>" where the driver puts the GI profile ID and
// placement start; the scenario models neither, so a and b are the instance's GI and CI IDs.
std::string DraDeviceName(const Gpu& gpu, const MigInstance* mig = nullptr);
inline constexpr const char* kNvidiaDraDriver = "gpu.nvidia.com";

}  // namespace gpumeter::scenario
