#include "sinks/metrics/catalogue.h"

#include <fmt/format.h>

#include <iterator>
#include <stdexcept>

#include "domain/metric_names.h"

namespace gpumeter::metrics {
namespace {

namespace names = domain::metric_names;

constexpr auto G = MetricType::kGauge;
constexpr auto C = MetricType::kCounter;

// Labels shared by families.
const std::vector<std::string> kSource{"node", "source"};
const std::vector<std::string> kGpu{"node", "gpu", "gpu_uuid"};
const std::vector<std::string> kMig{"node", "gpu", "gpu_uuid", "unit", "gpu_instance"};
const std::vector<std::string> kProcess{"node", "unit",      "pid",       "namespace",
                                        "pod",  "container", "owner_kind"};
const std::vector<std::string> kUnit{"node", "unit"};
// An owner's row on a unit. owner_kind: container, idle, system or unattributed; namespace, pod
// and container are empty unless it is a container. Extra pod labels (--pod-label) follow these.
// A guardrail finding: namespace, pod and container are empty for a device or host finding,
// unit and gpu_uuid for a container-wide one; process names a host process.
const std::vector<std::string> kFinding{"node",      "kind", "severity", "namespace", "pod",
                                        "container", "unit", "gpu_uuid", "process"};
// A workload's rightsizing: namespace, controller (Kind/name) and container.
const std::vector<std::string> kRightsize{"node",   "namespace", "workload",    "container",
                                          "action", "current",   "recommended", "replicas"};
const std::vector<std::string> kRightsizeMoney{"node",        "namespace", "workload",
                                               "container",   "action",    "current",
                                               "recommended", "replicas",  "currency"};
const std::vector<std::string> kOwner{"node",      "unit", "gpu_uuid",  "model",     "mig_profile",
                                      "namespace", "pod",  "container", "owner_kind"};

// Self-observability: per source (nvml, kubelet, pods, proc), and of the exposition itself.
void AddSourceMetrics(std::vector<MetricDef>& v) {
  const MetricDef defs[] = {
      {Metric::kSourceUp, "gpumeter_source_up", G, "",
       "1 if the source's last attempt succeeded (and, for NVML, no call is past its deadline); 0 "
       "if it failed or is not configured.",
       kSource},
      {Metric::kSourceAttempts, "gpumeter_source_attempts_total", C, "",
       "Attempts to read the source (NVML: sampling passes; /proc: processes identified).",
       kSource},
      {Metric::kSourceFailures, "gpumeter_source_failures_total", C, "",
       "Attempts that failed (NVML: passes that failed as a whole).", kSource},
      {Metric::kSourceDeadlineExceeded, "gpumeter_source_deadline_exceeded_total", C, "",
       "Driver calls that ran past their deadline.", kSource},
      {Metric::kSourceLastSuccessAge, "gpumeter_source_last_success_age_seconds", G, "seconds",
       "Seconds since the source last succeeded; absent before its first success.", kSource},
      {Metric::kSourceDuration, "gpumeter_source_duration_seconds", G, "seconds",
       "Duration of the source's last attempt.", kSource},
      {Metric::kSeriesDropped,
       "gpumeter_series_dropped",
       G,
       "",
       "Container series left out of this scrape by the series cap (--max-series); a gauge, as the "
       "cap applies per scrape.",
       {"node"}},
      {Metric::kHttpConnectionsCut,
       "gpumeter_http_connections_cut_total",
       C,
       "",
       "Connections to the metrics and API port closed because their request line and headers "
       "(or TLS handshake) did not arrive within the header deadline (5 s) however slowly they "
       "trickled: slow or hostile clients, never a scrape that finished its request.",
       {"node"}},
  };
  v.insert(v.end(), std::begin(defs), std::end(defs));
}

// Self-observability of the usage store's writer, and the allocations that could not be placed.
void AddStoreMetrics(std::vector<MetricDef>& v) {
  const MetricDef defs[] = {
      {Metric::kStoreWriteFailures,
       "gpumeter_store_write_failures_total",
       C,
       "",
       "Attempts to write an interval to the usage store that failed (locked, disk full); the "
       "interval is kept and written later.",
       {"node"}},
      {Metric::kStorePending,
       "gpumeter_store_pending_intervals",
       G,
       "",
       "Intervals kept in memory until the usage store accepts them again.",
       {"node"}},
      {Metric::kStoreOldestPending,
       "gpumeter_store_oldest_pending_seconds",
       G,
       "seconds",
       "Age of the oldest interval waiting for the usage store; 0 when none waits.",
       {"node"}},
      {Metric::kStoreDropped,
       "gpumeter_store_dropped_intervals_total",
       C,
       "",
       "Intervals given up after waiting longer than the bound (--store-pending-max, 1 h): their "
       "usage is missing from reports.",
       {"node"}},
      {Metric::kStoreLostAtStop,
       "gpumeter_store_lost_at_stop_intervals_total",
       C,
       "",
       "Intervals still waiting for the usage store at a stop (SIGTERM) that could not be written "
       "within its 2 s: logged as an error, also counted as dropped, served for the last scrapes "
       "of --shutdown-grace.",
       {"node"}},
      {Metric::kClockSteps,
       "gpumeter_clock_steps_total",
       C,
       "",
       "Wall-clock steps of more than a day between two intervals (the samples' times against "
       "the monotonic clock): each suspends the store's pruning and marks the rows written until "
       "the clocks have moved together for an hour; the store then keeps the rows within "
       "retention of the newest interval before the step.",
       {"node"}},
      {Metric::kAllocationProblems,
       "gpumeter_allocation_problems",
       G,
       "",
       "Device IDs from the kubelet that could not be placed on a GPU or MIG instance (see the "
       "log).",
       {"node"}},
  };
  v.insert(v.end(), std::begin(defs), std::end(defs));
}

// Raw device readings (NVML), per GPU, MIG instance and process.
void AddDeviceMetrics(std::vector<MetricDef>& v) {
  const MetricDef defs[] = {
      {Metric::kGpuInfo,
       "gpumeter_gpu_info",
       G,
       "",
       "GPU identity; value is always 1.",
       {"node", "gpu", "gpu_uuid", "model", "mig", "sharing_mode"}},
      {Metric::kGpuLost, "gpumeter_gpu_lost", G, "",
       "1 if the GPU fell off the bus (NVML_ERROR_GPU_IS_LOST).", kGpu},
      {Metric::kNvmlCallFailed,
       "gpumeter_nvml_call_failed",
       G,
       "",
       "1 for each NVML call that failed on this GPU in the last pass.",
       {"node", "gpu", "gpu_uuid", "call", "code"}},
      {Metric::kGpuMemoryTotal, "gpumeter_gpu_memory_total_bytes", G, "bytes",
       "Framebuffer memory of the GPU.", kGpu},
      {Metric::kGpuMemoryUsed, "gpumeter_gpu_memory_used_bytes", G, "bytes",
       "Framebuffer memory in use (excludes the driver reservation when it is known).", kGpu},
      {Metric::kGpuMemoryReserved, "gpumeter_gpu_memory_reserved_bytes", G, "bytes",
       "Framebuffer memory reserved by the driver and firmware (v2 drivers only).", kGpu},
      {Metric::kGpuBusy, "gpumeter_gpu_busy_ratio", G, "ratio",
       "Fraction of the last sample period in which a kernel ran (NVML utilization.gpu / 100; "
       "absent on MIG GPUs).",
       kGpu},
      {Metric::kGpuSmActive, "gpumeter_gpu_sm_active_ratio", G, "ratio",
       "GPM SM activity between the last two passes, 0-1.", kGpu},
      {Metric::kGpuPower, "gpumeter_gpu_power_watts", G, "watts", "Board power draw.", kGpu},
      {Metric::kGpuEnergy, "gpumeter_gpu_energy_joules_total", C, "joules",
       "Energy used since the driver was loaded (NVML counter).", kGpu},
      {Metric::kMigMemoryTotal, "gpumeter_mig_memory_total_bytes", G, "bytes",
       "Memory of a MIG instance.", kMig},
      {Metric::kMigMemoryUsed, "gpumeter_mig_memory_used_bytes", G, "bytes",
       "Memory in use in a MIG instance.", kMig},
      {Metric::kMigSmActive, "gpumeter_mig_sm_active_ratio", G, "ratio",
       "GPM SM activity of a MIG GPU instance, 0-1.", kMig},
      {Metric::kProcessMemory, "gpumeter_process_memory_used_bytes", G, "bytes",
       "GPU memory used by a process (NVML usedGpuMemory); owner_kind is container, system or "
       "unattributed.",
       kProcess},
      {Metric::kProcessSm, "gpumeter_process_sm_ratio", G, "ratio",
       "Latest per-process SM sample, 0-1; 0 when the process had no sample in the window (NVML "
       "reports busy processes only); absent where the driver has no per-process utilization.",
       kProcess},
  };
  v.insert(v.end(), std::begin(defs), std::end(defs));
}

// GPU health (NVML), per GPU: the clocks-event reasons, ECC, row remapping, retired pages, XIDs.
void AddHealthMetrics(std::vector<MetricDef>& v) {
  const MetricDef defs[] = {
      {Metric::kGpuClockEventReason,
       "gpumeter_gpu_clock_event_reason",
       G,
       "",
       "1 while the reason holds the GPU's clocks down, 0 otherwise, for each reason NVML "
       "names (gpu_idle, applications_clocks, sw_power_cap, hw_slowdown, sync_boost, "
       "sw_thermal, hw_thermal, hw_power_brake, display_clock; "
       "nvmlDeviceGetCurrentClocksEventReasons). Absent where the driver cannot say.",
       {"node", "gpu", "gpu_uuid", "reason"}},
      {Metric::kGpuEccErrors,
       "gpumeter_gpu_ecc_errors_total",
       C,
       "",
       "ECC errors since the driver loaded (NVML's volatile counters, type corrected or "
       "uncorrected; they restart at a driver reload, which rate() takes as a counter reset). "
       "Absent where ECC is off or unsupported.",
       {"node", "gpu", "gpu_uuid", "type"}},
      {Metric::kGpuRemappedRows,
       "gpumeter_gpu_remapped_rows",
       G,
       "",
       "Memory rows remapped to spares, by the cause (correctable or uncorrectable errors; "
       "Ampere and later, MIG off). Absent where the driver cannot say.",
       {"node", "gpu", "gpu_uuid", "cause"}},
      {Metric::kGpuRowRemapPending, "gpumeter_gpu_row_remap_pending", G, "",
       "1 while a row remap waits for the next GPU reset (drain the GPU and reset it).", kGpu},
      {Metric::kGpuRowRemapFailed, "gpumeter_gpu_row_remap_failed", G, "",
       "1 when a row remap failed (no spare row left): the GPU should be replaced.", kGpu},
      {Metric::kGpuRetiredPages,
       "gpumeter_gpu_retired_pages",
       G,
       "",
       "Memory pages retired, by the cause (single_bit_ecc: repeated correctable errors; "
       "double_bit_ecc: an uncorrectable one; boards before Ampere, which remap rows instead). "
       "63 in all is the limit at which NVIDIA's diagnostics fail the GPU. Absent where the "
       "driver cannot say.",
       {"node", "gpu", "gpu_uuid", "cause"}},
      {Metric::kGpuRetiredPagesPending, "gpumeter_gpu_retired_pages_pending", G, "",
       "1 while a page retirement waits for the next driver reload (reboot or GPU reset); "
       "absent where unknown.",
       kGpu},
      {Metric::kGpuXidErrors,
       "gpumeter_gpu_xid_errors_total",
       C,
       "",
       "XID events NVML delivered for the GPU since the agent started, per XID "
       "(nvmlEventTypeXidCriticalError; 999 is the driver's unknown). The findings name the "
       "pods on the GPU when each came (docs/guardrails.md).",
       {"node", "gpu", "gpu_uuid", "xid"}},
      {Metric::kGpuXidLastSeen,
       "gpumeter_gpu_xid_last_seen_timestamp_seconds",
       G,
       "seconds",
       "When the agent last received the XID for the GPU, Unix seconds (alerts compare it with "
       "time(): a counter's increase() misses a series born at 1, and a scrape gap makes an old "
       "one look new).",
       {"node", "gpu", "gpu_uuid", "xid"}},
      {Metric::kXidWatchUp,
       "gpumeter_xid_watch_up",
       G,
       "",
       "1 while the agent waits for XID events, 0 while it cannot (no event API, a failing "
       "wait: the agent's log says why).",
       {"node"}},
  };
  v.insert(v.end(), std::begin(defs), std::end(defs));
}

// Attribution per unit (GPU or MIG instance): its identity and capacity, over time.
void AddUnitMetrics(std::vector<MetricDef>& v) {
  const MetricDef defs[] = {
      {Metric::kUnitInfo,
       names::kUnitInfo,
       G,
       "",
       "A unit of allocation (a whole GPU or a MIG instance): its GPU, model, MIG profile, sharing "
       "mode, replicas and the evidence that decided the mode; value is always 1.",
       {"node", "unit", "gpu_uuid", "gpu", "model", "mig_profile", "sharing_mode", "replicas",
        "evidence"}},
      {Metric::kUnitGpuFraction, names::kUnitGpuShare, G, "ratio",
       "The unit's share of its physical GPU, at which its cost is priced: 1 for a whole GPU, a "
       "MIG instance's compute slices over the GPU's.",
       kUnit},
      {Metric::kUnitSeconds, names::kUnitSeconds, C, "seconds",
       "Time accounted on the unit: its compute capacity in compute-seconds (the owners' "
       "gpumeter_compute_seconds_total add up to it).",
       kUnit},
      {Metric::kUnitMemoryCapacity, names::kUnitMemoryCapacity, C, "byte_seconds",
       "The unit's memory × time accounted (the owners' gpumeter_memory_byte_seconds_total add up "
       "to it).",
       kUnit},
      {Metric::kUnitEnergy, names::kUnitEnergy, C, "joules",
       "The unit's energy over the intervals in which it was known (the owners' "
       "gpumeter_energy_joules_total add up to it).",
       kUnit},
      {Metric::kUnitEnergyUnknown, "gpumeter_unit_energy_unknown_seconds_total", C, "seconds",
       "Time in which the unit's energy was unknown (no counter and no power reading, or the GPU "
       "was lost).",
       kUnit},
      {Metric::kUnitSamplesUncovered, "gpumeter_process_samples_uncovered_seconds_total", C,
       "seconds",
       "Time whose per-process utilization samples the driver's buffer no longer held when read "
       "(it was read less often than the buffer's span: lower --drain-interval). With the device's "
       "busy time known, the rest of the interval's shares stand for it (rule says estimate); else "
       "its busy time is unattributed.",
       kUnit},
      {Metric::kUnitMemorySignalSeconds,
       "gpumeter_unit_memory_signal_seconds_total",
       C,
       "seconds",
       "Time accounted on the unit by the signal that measured its memory traffic "
       "(gpumeter_memory_busy_seconds_total): nvml-process-memutil or nvml-utilization-memory "
       "(time with memory access), gpm-dram-bw or dcgm-dram-active (share of peak bandwidth), "
       "none (unknown). The kinds measure different things: compare a workload's traffic across "
       "units of one kind (docs/attribution.md, definitions of use).",
       {"node", "unit", "signal"}},
  };
  v.insert(v.end(), std::begin(defs), std::end(defs));
}

// What a node is and what its units cost.
void AddCostMetrics(std::vector<MetricDef>& v) {
  const MetricDef defs[] = {
      {Metric::kNodeInfo,
       names::kNodeInfo,
       G,
       "",
       "The node as its Node object describes it: instance type, region, zone, capacity type "
       "(spot, on-demand, reserved, or empty when no label says), cloud and spec.providerID; "
       "join at query time (`* on (node) group_left (instance_type) gpumeter_node_info`), never "
       "on the counters. Absent until the Node was read; value is always 1.",
       {"node", "instance_type", "region", "zone", "capacity_type", "cloud", "provider_id"}},
      {Metric::kCostInfo,
       "gpumeter_cost_info",
       G,
       "",
       "How the agent prices usage: the currency of every cost series and the policy and idle "
       "rule that split each unit's cost between its owners (--policy, --idle: "
       "docs/pricing.md); value is always 1.",
       {"node", "currency", "policy"}},
      {Metric::kUnitPrice,
       "gpumeter_unit_price_per_hour",
       G,
       "",
       "What the unit costs per hour: the price of its GPU (after the pricing's discount) × "
       "gpumeter_unit_gpu_share_ratio, in the currency named; source says where the price came "
       "from (the pricing file, a node price by instance type, the bundled instance table by the "
       "Node's instance type, or the dated default table). "
       "Absent for a unit without a price.",
       {"node", "unit", "currency", "source"}},
      {Metric::kUnitCost, "gpumeter_unit_cost_total", C, "",
       "The unit's cost since the agent started, over the time it had a price (the owners' "
       "gpumeter_cost_total add up to it), in gpumeter_cost_info's currency.",
       kUnit},
      {Metric::kUnitUnpriced, "gpumeter_unit_unpriced_seconds_total", C, "seconds",
       "Time accounted on the unit while it had no price (no pricing entry for its model): its "
       "cost in that time is unknown, not 0. Exported once it is above 0.",
       kUnit},
  };
  v.insert(v.end(), std::begin(defs), std::end(defs));
}

// Attribution per unit and owner: integrated over time, and gauges of the last interval.
void AddOwnerMetrics(std::vector<MetricDef>& v) {
  const MetricDef defs[] = {
      {Metric::kMemoryByteSeconds, names::kMemoryByteSeconds, C, "byte_seconds",
       "GPU memory held × time, by owner of the unit.", kOwner},
      {Metric::kMemoryBytes, "gpumeter_memory_bytes", G, "bytes",
       "GPU memory held, by owner of the unit: the mean over the last interval.", kOwner},
      {Metric::kComputeSeconds, names::kComputeSeconds, C, "seconds",
       "The unit's time used, by owner: one compute-second per second of the whole unit.", kOwner},
      {Metric::kComputeRatio, "gpumeter_compute_ratio", G, "ratio",
       "Share of the unit's time used by the owner over the last interval, 0-1 (the owners of a "
       "unit add up to 1).",
       kOwner},
      {Metric::kComputeUnknownSeconds, names::kComputeUnknownSeconds, C, "seconds",
       "Time in which the owner's compute is unknown (it ran on the unit while the unit's "
       "activity, or which process was busy, was unknown): gpumeter_compute_seconds_total is a "
       "lower bound, the sum of both an upper one. Exported once it is above 0.",
       kOwner},
      {Metric::kComputeBoundSeconds, names::kComputeBoundSeconds, C, "seconds",
       "Where some of gpumeter_compute_seconds_total is an estimated split (MPS thread share, an "
       "even split, extrapolation over lost samples), its error bound: the truth "
       "lies within compute ± this (docs/attribution.md, Bounds). Exported once it is above 0.",
       kOwner},
      {Metric::kEnergyBoundJoules, names::kEnergyBoundJoules, C, "joules",
       "Where some of gpumeter_energy_joules_total is an estimated split (a DCGM-fed unit's "
       "energy inside a collection, placed by an activity profile from board power), its error "
       "bound: the truth lies within energy ± this (docs/attribution.md, DCGM activity). "
       "Exported once it is above 0.",
       kOwner},
      {Metric::kMemoryBusySeconds, names::kMemoryBusySeconds, C, "seconds",
       "Memory traffic, a second measure of use beside compute: seconds of the unit's memory kept "
       "busy, by owner (the owners of a unit add up to gpumeter_unit_seconds_total, idle's being "
       "the time nobody used it), split by the same rules as compute. Of the kind "
       "gpumeter_unit_memory_signal_seconds_total says.",
       kOwner},
      {Metric::kMemoryBusyUnknownSeconds, names::kMemoryBusyUnknownSeconds, C, "seconds",
       "Time in which the owner's memory traffic is unknown (no signal: an A100 or A30 MIG "
       "instance without DCGM, a failed read), as gpumeter_compute_unknown_seconds_total. "
       "Exported once it is above 0.",
       kOwner},
      {Metric::kMemoryBusyBoundSeconds, names::kMemoryBusyBoundSeconds, C, "seconds",
       "Where some of gpumeter_memory_busy_seconds_total is an estimated split, its error bound, "
       "as gpumeter_compute_bound_seconds_total. Exported once it is above 0.",
       kOwner},
  };
  v.insert(v.end(), std::begin(defs), std::end(defs));
}

// Energy, requests and cost per owner, and the pods' workloads and labels.
void AddOwnerEnergyAndCostMetrics(std::vector<MetricDef>& v) {
  const MetricDef defs[] = {
      {Metric::kEnergyJoules, names::kEnergyJoules, C, "joules",
       "The unit's energy, by owner (split by compute share; idle power by the policy in "
       "docs/attribution.md).",
       kOwner},
      {Metric::kRequestedShare, "gpumeter_requested_share_ratio", G, "ratio",
       "Share of the unit the kubelet allocated to the container (exclusive 1, time-slicing/MPS "
       "1/replicas, MIG instance 1).",
       kOwner},
      {Metric::kRequestedShareSeconds, names::kRequestedShareSeconds, C, "seconds",
       "Requested share × time: the unit-seconds the container held, used or not.", kOwner},
      {Metric::kCost, "gpumeter_cost_total", C, "",
       "The unit's cost by owner, in gpumeter_cost_info's currency: each interval's cost (price "
       "× GPU share × time) split by the agent's policy and idle rule over that interval; the "
       "owners of a unit add up to gpumeter_unit_cost_total. Owner idle carries the idle, system "
       "and unattributed use that the rule keeps apart. Absent while the unit had no price.",
       kOwner},
      {Metric::kIdleCost, "gpumeter_idle_cost_total", C, "",
       "The part of gpumeter_cost_total that is idle cost placed on the owner (on owner idle, "
       "all of it).",
       kOwner},
      {Metric::kComputeGpus, "gpumeter_compute_gpus", G, "",
       "Compute used over the last interval in GPUs: the share of the unit's time used × the "
       "unit's share of its GPU, so a pod on a 1g slice and one on a whole GPU compare (the "
       "signal to autoscale on: docs/autoscaling.md). Absent while some of its compute is unknown "
       "(gpumeter_compute_unknown_seconds_total).",
       kOwner},
      {Metric::kMemoryGpus, "gpumeter_memory_gpus", G, "",
       "GPU memory held over the last interval in GPUs: the mean bytes over the memory of the "
       "whole physical GPU. Absent where that memory is unknown.",
       kOwner},
      {Metric::kPodWorkloadInfo,
       names::kPodWorkloadInfo,
       G,
       "",
       "The workload (controller) of each pod with a container in the attribution, as "
       "rightsizing reads it from the pod's labels (docs/rightsizing.md), so that rightsizing "
       "from Prometheus groups pods as it does from a store; value is always 1.",
       {"node", "namespace", "pod", "workload_kind", "workload"}},
      {Metric::kPodLabels,
       names::kPodLabels,
       G,
       "",
       "The --pod-label labels of each pod with a container in the attribution, as label_KEY "
       "(as kube-state-metrics' kube_pod_labels): join them at query time, "
       "`* on (node, namespace, pod) group_left (label_team) gpumeter_pod_labels_info`; the "
       "counters "
       "never carry them, so a relabelled pod keeps its series; value is always 1. Absent "
       "without --pod-label.",
       {"node", "namespace", "pod"}},
  };
  v.insert(v.end(), std::begin(defs), std::end(defs));
}

// Guardrails (docs/guardrails.md): open findings and how many were opened.
void AddFindingMetrics(std::vector<MetricDef>& v) {
  const MetricDef defs[] = {
      {Metric::kFindingOpen, names::kFindingOpen, G, "seconds",
       "One series per open guardrail finding (docs/guardrails.md): when it was first seen, in "
       "Unix seconds. The evidence is in /api/v2/findings.",
       kFinding},
      {Metric::kFindingWaste, "gpumeter_finding_waste_gpu_seconds", G, "seconds",
       "An open idle-allocation finding's waste: the share of a GPU held × the seconds it stayed "
       "idle (GPU-seconds).",
       kFinding},
      {Metric::kFindingWasteCost,
       "gpumeter_finding_waste_cost",
       G,
       "",
       "What that waste cost, in the pricing's currency (label currency); absent when no price is "
       "known for the model.",
       {"node", "kind", "severity", "namespace", "pod", "container", "unit", "gpu_uuid", "process",
        "currency"}},
      {Metric::kFindingsOpened,
       "gpumeter_findings_opened_total",
       C,
       "",
       "Guardrail findings opened since the agent started, per kind and severity (every kind that "
       "is on has a series).",
       {"node", "kind", "severity"}},
  };
  v.insert(v.end(), std::begin(defs), std::end(defs));
}

// Rightsizing (docs/rightsizing.md), from the usage store.
void AddRightsizeMetrics(std::vector<MetricDef>& v) {
  const MetricDef defs[] = {
      {Metric::kRightsizeRecommendedGpu, "gpumeter_rightsize_recommended_gpu_ratio", G, "ratio",
       "The GPU share a workload's replica needs, from its usage history (docs/rightsizing.md): "
       "action reclaim, mig, share or keep; current and recommended as words (e.g. whole GPU, MIG "
       "1g.20gb). Computed hourly from the --store.",
       kRightsize},
      {Metric::kRightsizeSavings, "gpumeter_rightsize_monthly_savings", G, "",
       "What the recommendation saves per month (730 h) for all its replicas, in the pricing's "
       "currency; absent when no price is known for the model.",
       kRightsizeMoney},
  };
  v.insert(v.end(), std::begin(defs), std::end(defs));
}

// Every family, in exposition order; checked against Metric, whose order it must follow.
std::vector<MetricDef> Build() {
  std::vector<MetricDef> v;
  AddSourceMetrics(v);
  AddStoreMetrics(v);
  AddDeviceMetrics(v);
  AddHealthMetrics(v);
  AddUnitMetrics(v);
  AddCostMetrics(v);
  AddOwnerMetrics(v);
  AddOwnerEnergyAndCostMetrics(v);
  AddFindingMetrics(v);
  AddRightsizeMetrics(v);
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].id != static_cast<Metric>(i))
      throw std::logic_error("metric catalogue out of order at " + v[i].name);
  if (v.size() != static_cast<size_t>(Metric::kCount))
    throw std::logic_error("metric catalogue incomplete");
  return v;
}

}  // namespace

const std::vector<MetricDef>& Catalogue() {
  static const std::vector<MetricDef> catalogue = Build();  // immutable after first use
  return catalogue;
}

const MetricDef& Def(Metric id) { return Catalogue().at(static_cast<size_t>(id)); }

bool InDefaultSet(Metric id) {
  switch (id) {
    // Derivable from the default counters (rate() over them, × gpumeter_unit_gpu_share_ratio or
    // ÷ gpumeter_gpu_memory_total_bytes), or a second measure no cost or report needs: one series
    // per container each, which a node of many small containers pays for most.
    case Metric::kMemoryBytes:
    case Metric::kComputeRatio:
    case Metric::kMemoryBusySeconds:
    case Metric::kMemoryBusyUnknownSeconds:
    case Metric::kMemoryBusyBoundSeconds:
    case Metric::kRequestedShare:
    case Metric::kIdleCost:
    case Metric::kComputeGpus:
    case Metric::kMemoryGpus:
      return false;
    default:
      return true;
  }
}

std::string CatalogueMarkdown() {
  std::string out = "| metric | type | unit | labels | meaning |\n|---|---|---|---|---|\n";
  for (const auto& d : Catalogue()) {
    std::string labels;
    for (const auto& l : d.labels) labels += (labels.empty() ? "" : ", ") + l;
    out += fmt::format(
        "| `{}` | {} | {} | {} | {}{} |\n", d.name,
        d.type == MetricType::kCounter ? "counter" : "gauge", d.unit.empty() ? "-" : d.unit, labels,
        InDefaultSet(d.id) ? "" : "Full set only (`--container-series full`). ", d.help);
  }
  return out;
}

}  // namespace gpumeter::metrics
