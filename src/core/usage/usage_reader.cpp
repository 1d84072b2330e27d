#include "core/usage/usage_reader.h"

#include <algorithm>

namespace gpumeter::usage {

Expected<PodWorkloadMap> UsageHistorySource::HistoryPodWorkloads() const {
  auto labels = HistoryPodLabels();
  if (!labels) return tl::unexpected(labels.error());
  PodWorkloadMap out;
  for (const auto& [pod, l] : *labels) out.emplace(pod, rightsize::WorkloadOf(pod.second, l));
  return out;
}

Expected<std::map<rightsize::WorkloadKey, rightsize::WorkloadHistory>> BuildHistories(
    const UsageHistorySource& source, int64_t from_s, int64_t to_s) {
  auto workloads = source.HistoryPodWorkloads();
  if (!workloads) return tl::unexpected(workloads.error());
  rightsize::HistoryBuilder b(std::move(*workloads));
  // Not a day at a time from a store: a read holds its minutes, ~18 KB a minute on an 8-GPU node
  // with 20 containers (a run's heap peak: 0.90 MB over a 16-minute store, 1.90 MB over 71
  // minutes; measured with heaptrack), so the agent's rightsizing peaked ~1 MB higher for each hour
  // the store held, ~26 MB once it held a day. Whole reads keep their edges off the hourly
  // rollups'. The source says how much a read covers (Prometheus: a day, as each read is queries).
  const int64_t step = source.HistoryReadSeconds();
  for (int64_t at = from_s; at < to_s;) {
    const int64_t end = at - (at % step + step) % step + step;
    const int64_t until = std::min(to_s, end);
    auto rows = source.HistoryMinutes(at, until);
    if (!rows) {
      source.HistoryDone();  // what the reads before it cached goes all the same
      return tl::unexpected(rows.error());
    }
    for (const auto& [t, units] : *rows) b.Add(t, units);
    at = until;
  }
  source.HistoryDone();
  return b.Finish();
}

}  // namespace gpumeter::usage
