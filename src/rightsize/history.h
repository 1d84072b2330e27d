// Usage history per workload — (namespace, controller, container), so restarts and rollouts share
// one history — folded from the usage store's per-minute rows into decaying histograms
// (histogram.h): one sample per minute of the compute used, as a fraction of a whole GPU, and one
// per day of the memory peak (the highest per-minute mean of the day), as VPA does for memory.
// A minute in which the unit's activity or memory was unknown (the GPU was lost, or usage went
// unattributed) gives no sample: unknown is not idle. The store is the persistence: histories are
// rebuilt from its rows on every run (with a 24 h half-life, rows older than its 14 days of
// minutes weigh under 1/16000). Units: bytes, fractions of a GPU, Unix seconds. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "rightsize/histogram.h"
#include "rightsize/workload.h"
#include "store/store.h"

namespace gpumeter::rightsize {

struct WorkloadKey {
  std::string ns, workload, container;  // workload: "Deployment/chat", "Pod/notebook", …
  auto operator<=>(const WorkloadKey&) const = default;
  std::string Name() const { return ns + "/" + workload + "/" + container; }
};

// A unit the workload held in the last minute it held anything.
struct Held {
  store::UnitKey unit;
  double share = 1;                          // of the unit (time-slicing/MPS: 1/replicas)
  std::optional<double> unit_memory_bytes;   // the unit's memory
};

struct WorkloadHistory {
  WorkloadKey key;
  std::set<std::string> pods;
  DecayingHistogram memory_peaks{MemoryHistogramOptions()};  // daily peaks, bytes
  DecayingHistogram compute{ComputeHistogramOptions()};      // per-minute use, fraction of a GPU
  double peak_memory_bytes = 0;   // the highest per-minute mean seen
  double peak_compute = 0;        // the highest per-minute compute seen, fraction of a GPU
  int64_t first_s = 0, last_s = 0;  // first and last sample (minute starts)
  uint64_t samples = 0;             // minutes with a known sample
  std::vector<Held> held;           // as of the last minute it held a unit
  double HeldGpuFraction() const;   // Σ share × the unit's fraction of its GPU
  // VPA's confidence: min(history in days, samples / 1440).
  double Confidence() const;
};

class HistoryBuilder {
 public:
  // `labels`: pod labels from the store (Store::PodLabels), for the workload of each pod.
  explicit HistoryBuilder(std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>> labels)
      : labels_(std::move(labels)) {}

  // One bucket of rows (a minute, or an hour where only rollups remain), in time order.
  void Add(int64_t bucket_start_s, const std::vector<store::UnitRecord>& units);
  // Closes the running day's memory peaks and returns the histories.
  std::map<WorkloadKey, WorkloadHistory> Finish();

 private:
  WorkloadKey KeyOf(const attribution::Owner& o);
  void CloseDay(WorkloadHistory& h, int64_t day);

  std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>> labels_;
  std::map<std::pair<std::string, std::string>, Workload> workload_of_;  // cache by (ns, pod)
  std::map<WorkloadKey, WorkloadHistory> out_;
  std::map<WorkloadKey, std::pair<int64_t, double>> day_peak_;  // the running day and its peak
  std::map<WorkloadKey, int64_t> held_at_;                      // minute of `held`
};

// Histories from `store` over [from, to), read a day at a time.
Expected<std::map<WorkloadKey, WorkloadHistory>> BuildHistories(const store::Store& store, int64_t from_s, int64_t to_s);

}  // namespace gpumeter::rightsize
