// The one list of every series the agent exports: name, type, unit, help and label names, in the
// order they are exposed. /metrics is built through it (a series whose labels do not match its
// entry is a programming error, caught in tests) and docs/metrics.md is generated from it
// (`gpumeter metrics-doc`; a test keeps the two equal). Immutable, thread-safe.
#pragma once

#include <string>
#include <vector>

namespace gpumeter::metrics {

enum class Metric {
  // Self-observability, per source (nvml, kubelet, pods, proc).
  kSourceUp,
  kSourceAttempts,
  kSourceFailures,
  kSourceDeadlineExceeded,
  kSourceLastSuccessAge,
  kSourceDuration,
  kSeriesDropped,
  kHttpConnectionsCut,
  kStoreWriteFailures,
  kStorePending,
  kStoreOldestPending,
  kStoreDropped,
  kStoreLostAtStop,
  kClockSteps,
  kAllocationProblems,
  // Raw device readings (NVML), per GPU, MIG instance and process.
  kGpuInfo,
  kGpuLost,
  kNvmlCallFailed,
  kGpuMemoryTotal,
  kGpuMemoryUsed,
  kGpuMemoryReserved,
  kGpuBusy,
  kGpuSmActive,
  kGpuPower,
  kGpuEnergy,
  kMigMemoryTotal,
  kMigMemoryUsed,
  kMigSmActive,
  kProcessMemory,
  kProcessSm,
  // GPU health (NVML), per GPU.
  kGpuClockEventReason,
  kGpuEccErrors,
  kGpuRemappedRows,
  kGpuRowRemapPending,
  kGpuRowRemapFailed,
  kGpuRetiredPages,
  kGpuRetiredPagesPending,
  kGpuXidErrors,
  kGpuXidLastSeen,
  kXidWatchUp,
  // Attribution: per unit (GPU or MIG instance) and owner, integrated over time.
  kUnitInfo,
  kUnitGpuFraction,
  kUnitSeconds,
  kUnitMemoryCapacity,
  kUnitEnergy,
  kUnitEnergyUnknown,
  kUnitSamplesUncovered,
  kUnitMemorySignalSeconds,
  kNodeInfo,
  kCostInfo,
  kUnitPrice,
  kUnitCost,
  kUnitUnpriced,
  kMemoryByteSeconds,
  kMemoryBytes,
  kComputeSeconds,
  kComputeRatio,
  kComputeUnknownSeconds,
  kComputeBoundSeconds,
  kEnergyBoundJoules,
  kMemoryBusySeconds,
  kMemoryBusyUnknownSeconds,
  kMemoryBusyBoundSeconds,
  kEnergyJoules,
  kRequestedShare,
  kRequestedShareSeconds,
  kCost,
  kIdleCost,
  kComputeGpus,
  kMemoryGpus,
  kPodWorkloadInfo,
  kPodLabels,
  // Guardrails (docs/guardrails.md): open findings and how many were opened.
  kFindingOpen,
  kFindingWaste,
  kFindingWasteCost,
  kFindingsOpened,
  // Rightsizing (docs/rightsizing.md), from the usage store.
  kRightsizeRecommendedGpu,
  kRightsizeSavings,
  kCount
};

enum class MetricType { kCounter, kGauge };

struct MetricDef {
  Metric id;
  std::string name;
  MetricType type;
  std::string unit;  // base unit ("bytes", "seconds", "joules", "ratio", "" for counts and info)
  std::string help;
  std::vector<std::string> labels;
};

// Which per-owner families /metrics exports. kDefault: at most 8 series per container and unit
// it holds (docs/metrics.md, "Default set"), enough for chargeback, the bundled rules and
// dashboard and `report --source prometheus`; kFull (`--container-series full`) adds the families
// for which InDefaultSet() is false: memory traffic, idle cost and the last interval's gauges.
enum class ContainerSeries { kDefault, kFull };

// False for a per-owner family exported only with ContainerSeries::kFull; true for every other.
bool InDefaultSet(Metric id);

// Every metric, in exposition order; Catalogue()[i].id == Metric(i).
const std::vector<MetricDef>& Catalogue();
const MetricDef& Def(Metric id);

// The catalogue as the Markdown table in docs/metrics.md.
std::string CatalogueMarkdown();

}  // namespace gpumeter::metrics
