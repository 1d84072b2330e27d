// The names of the series the agent exports that readers of recorded usage query back: written
// once, here, for the catalogue that exports them (sinks/metrics/catalogue.cpp) and the
// Prometheus readers that query them (sources/history/prometheus_source.cpp,
// prometheus_history.cpp). Renaming one here renames both sides; an older agent's series under a
// former name is the readers' to accept. Every name is in the catalogue (its test checks).
#pragma once

namespace gpumeter::domain::metric_names {

// Per unit (GPU or MIG instance): its identity and its counters.
inline constexpr const char* kUnitInfo = "gpumeter_unit_info";
inline constexpr const char* kUnitGpuShare = "gpumeter_unit_gpu_share_ratio";
inline constexpr const char* kUnitSeconds = "gpumeter_unit_seconds_total";
inline constexpr const char* kUnitMemoryCapacity =
    "gpumeter_unit_memory_capacity_byte_seconds_total";
inline constexpr const char* kUnitEnergy = "gpumeter_unit_energy_joules_total";
// Per unit and owner: the ledger's counters.
inline constexpr const char* kMemoryByteSeconds = "gpumeter_memory_byte_seconds_total";
inline constexpr const char* kComputeSeconds = "gpumeter_compute_seconds_total";
inline constexpr const char* kComputeUnknownSeconds = "gpumeter_compute_unknown_seconds_total";
inline constexpr const char* kComputeBoundSeconds = "gpumeter_compute_bound_seconds_total";
// Memory busy time: the part of the time the owner's processes read or wrote device memory.
inline constexpr const char* kMemoryBusySeconds = "gpumeter_memory_busy_seconds_total";
inline constexpr const char* kMemoryBusyUnknownSeconds =
    "gpumeter_memory_busy_unknown_seconds_total";
inline constexpr const char* kMemoryBusyBoundSeconds = "gpumeter_memory_busy_bound_seconds_total";
inline constexpr const char* kEnergyJoules = "gpumeter_energy_joules_total";
inline constexpr const char* kEnergyBoundJoules = "gpumeter_energy_bound_joules_total";
inline constexpr const char* kRequestedShareSeconds = "gpumeter_requested_share_seconds_total";
// Per node and pod: identities and labels.
inline constexpr const char* kNodeInfo = "gpumeter_node_info";
inline constexpr const char* kPodWorkloadInfo = "gpumeter_pod_workload_info";
inline constexpr const char* kPodLabels = "gpumeter_pod_labels_info";
// Guardrail findings (`top` from Prometheus).
inline constexpr const char* kFindingOpen = "gpumeter_finding_first_seen_timestamp_seconds";

// Every name above, for the catalogue's test.
inline constexpr const char* kAll[] = {kUnitInfo,
                                       kUnitGpuShare,
                                       kUnitSeconds,
                                       kUnitMemoryCapacity,
                                       kUnitEnergy,
                                       kMemoryByteSeconds,
                                       kComputeSeconds,
                                       kComputeUnknownSeconds,
                                       kComputeBoundSeconds,
                                       kMemoryBusySeconds,
                                       kMemoryBusyUnknownSeconds,
                                       kMemoryBusyBoundSeconds,
                                       kEnergyJoules,
                                       kEnergyBoundJoules,
                                       kRequestedShareSeconds,
                                       kNodeInfo,
                                       kPodWorkloadInfo,
                                       kPodLabels,
                                       kFindingOpen};

}  // namespace gpumeter::domain::metric_names
