// A reader of stored usage for rightsizing: the pods' labels, the span of the data and the
// per-minute usage records. The usage store (store/store.h) and Prometheus (prometheus_history.h)
// implement it; BuildHistories reads one and feeds what it reads to core's HistoryBuilder
// (core/rightsize/history.h), which sees data only, never a reader. Tests can feed it directly.
// Thread-safety: an implementation must allow these reads from one thread other than its owner's
// while the owner goes on using it (the agent's RightsizeRunner reads its store on a thread of its
// own while the sampling thread writes to it). The caller borrows it: it must outlive the reads.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "core/attribution/usage_record.h"
#include "core/rightsize/history.h"
#include "core/rightsize/workload.h"

namespace gpumeter::history {

// The default HistoryReadSeconds.
inline constexpr int64_t kHistoryReadS = 3600;

using rightsize::PodLabelMap;
using rightsize::PodWorkloadMap;

class UsageHistorySource {
 public:
  virtual ~UsageHistorySource() = default;

  // Names the source in messages, e.g. "store /var/lib/gpumeter/usage.db".
  virtual std::string HistoryName() const = 0;
  // The first and last minute with data (Unix seconds); nullopt when there is none yet.
  virtual Expected<std::optional<std::pair<int64_t, int64_t>>> HistorySpan() const = 0;
  // The latest labels of every pod seen: a pod's workload is read from them
  // (core/rightsize/workload.h).
  virtual Expected<PodLabelMap> HistoryPodLabels() const = 0;
  // Each pod's workload. By default read from HistoryPodLabels (core/rightsize/workload.h); a
  // source that is told the workloads instead (Prometheus: the agents' gpumeter_pod_workload_info)
  // overrides it. A pod missing from the map is its own workload.
  virtual Expected<PodWorkloadMap> HistoryPodWorkloads() const;
  // How much one HistoryMinutes call covers at most: the reads' memory grows with the time they
  // cover (history.cpp says how much). A store: an hour.
  virtual int64_t HistoryReadSeconds() const { return kHistoryReadS; }
  // Usage per unit and minute over [from, to), keyed by minute start; where only hourly rollups
  // remain, per hour (keyed by the hour start, a record's `seconds` says how long it covers).
  // Called HistoryReadSeconds at a time, on whole multiples of it: a read holds all its minutes.
  virtual Expected<std::map<int64_t, std::vector<attribution::UnitRecord>>> HistoryMinutes(
      int64_t from_unix_s, int64_t to_unix_s) const = 0;
  // The histories are built: a source may drop what it cached for the reads (a store: its
  // reader's page cache, which would otherwise fill up to its bound and stay). Best effort.
  virtual void HistoryDone() const {}
};

// Histories from `source` over [from, to), read on whole multiples of the source's
// HistoryReadSeconds, one at a time (on the caller's thread), each read handed to a
// rightsize::HistoryBuilder.
Expected<std::map<rightsize::WorkloadKey, rightsize::WorkloadHistory>> BuildHistories(
    const UsageHistorySource& source, int64_t from_s, int64_t to_s);

}  // namespace gpumeter::history
