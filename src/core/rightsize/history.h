// Usage history per workload — (namespace, controller, container), so restarts and rollouts share
// one history — folded from the usage store's per-minute rows into decaying histograms
// (histogram.h): one sample per pod and minute of the compute used, as a fraction of a whole GPU
// (summed over the pod's GPUs), and one per pod and day of the memory peak (the highest per-minute
// mean of the day), as VPA does for memory: replicas add samples to one history, not a sum.
// A minute in which most of a unit's time or memory could not be placed (the GPU was lost, a pass
// failed) gives its holders no sample: unknown is not idle. The store is the persistence: histories
// are rebuilt from its rows on every run (with a 24 h half-life, rows older than its 14 days of
// minutes weigh under 1/16000). The builder is handed rows; it reads nothing (its readers
// implement core/usage/usage_reader.h). Units: bytes, fractions of a GPU, Unix seconds. Not
// thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/attribution/usage_record.h"
#include "core/rightsize/histogram.h"
#include "core/rightsize/workload.h"

namespace gpumeter::rightsize {

struct WorkloadKey {
  std::string ns, workload, container;  // workload: "Deployment/chat", "Pod/notebook", …
  auto operator<=>(const WorkloadKey&) const = default;
  std::string Name() const { return ns + "/" + workload + "/" + container; }
};

// A unit the workload held in the last minute it held anything.
struct Held {
  attribution::UnitKey unit;
  double share = 1;                         // of the unit (time-slicing/MPS: 1/replicas)
  std::optional<double> unit_memory_bytes;  // the unit's memory
};

struct WorkloadHistory {
  WorkloadKey key;
  std::set<std::string> pods;
  DecayingHistogram memory_peaks{MemoryHistogramOptions()};  // daily peaks, bytes
  DecayingHistogram compute{ComputeHistogramOptions()};      // per-minute use, fraction of a GPU
  double peak_memory_bytes = 0;                              // the highest per-minute mean seen
  double peak_compute = 0;  // the highest per-minute compute seen, fraction of a GPU
  // Per-minute memory busy time, fraction of a GPU's (the unit's share × its fraction of the GPU):
  // sampled only in minutes where it was measured (an older store, an A100 MIG instance: none).
  DecayingHistogram traffic{ComputeHistogramOptions()};
  uint64_t traffic_samples = 0;
  int64_t first_s = 0, last_s = 0;  // first and last sample (minute starts)
  uint64_t samples = 0;             // pod-minutes with a known sample (an hourly rollup counts 60)
  uint64_t minutes = 0;             // distinct minutes with a known sample (for the confidence)
  // What one replica holds, as of the last minute the workload held anything (the first pod then,
  // by name), and how many pods held something in that minute. Empty when that minute is more
  // than kGoneAfter before the last minute of the rows: the workload is gone (deleted, finished).
  std::vector<Held> held;
  uint32_t replicas = 0;
  double HeldGpuFraction() const;  // of one replica: Σ share × the unit's fraction of its GPU
  // VPA's confidence: min(history in days, distinct minutes sampled / 1440).
  double Confidence() const;
};

class HistoryBuilder {
 public:
  // `workloads`: each pod's workload (usage::UsageHistorySource::HistoryPodWorkloads).
  explicit HistoryBuilder(PodWorkloadMap workloads) : workload_of_(std::move(workloads)) {}

  // One bucket of rows (a minute, or an hour where only rollups remain), in time order.
  void Add(int64_t bucket_start_s, const std::vector<attribution::UnitRecord>& units);
  // Closes the running day's memory peaks and returns the histories.
  std::map<WorkloadKey, WorkloadHistory> Finish();
  static constexpr int64_t kGoneAfter = 600;  // seconds without holding anything: gone

 private:
  WorkloadKey KeyOf(const domain::Owner& o);
  void CloseDay(WorkloadHistory& h, const std::string& pod, int64_t day);

  PodWorkloadMap workload_of_;  // by (ns, pod); pods not in it are added as their own workload
  std::map<WorkloadKey, WorkloadHistory> out_;
  // Per (workload, pod): the running day and its memory peak; what it holds and since which minute.
  std::map<std::pair<WorkloadKey, std::string>, std::pair<int64_t, double>> day_peak_;
  std::map<std::pair<WorkloadKey, std::string>, std::pair<int64_t, std::vector<Held>>> held_;
  std::map<WorkloadKey, int64_t>
      last_minute_;     // per workload: the last minute counted in `minutes`
  int64_t latest_ = 0;  // the last bucket added
};

}  // namespace gpumeter::rightsize
