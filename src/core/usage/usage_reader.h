// The one interface through which recorded usage is read, whatever holds it: the usage store
// (store/store.h) and a Prometheus that scrapes the agents (sources/history/
// prometheus_usage_reader.h) implement it; `gpumeter report` (its window, its chart over time, a
// bill's hours and nodes) and rightsizing (its histories) read through it and never ask which one
// they hold.
//  - UsageHistorySource: what rightsizing reads (the pods' labels or workloads, the span of the
//    data, the usage per minute); BuildHistories reads one and feeds what it reads to core's
//    HistoryBuilder (core/rightsize/history.h), which sees data only, never a reader. A fake in a
//    test, or a handle that reads whichever store is open (the agent's StoreKeeper), may be this
//    part alone.
//  - UsageReader: all of it, what a report and a bill read besides.
// Units: Unix seconds, and the usage records' (core/attribution/usage_record.h).
// Thread-safety: the UsageHistorySource reads must be allowed from one thread other than the
// owner's while the owner goes on using the reader (the agent's RightsizeRunner reads its store on
// a thread of its own while the sampling thread writes to it); UsageReader's own reads are for the
// owner's thread. The caller borrows a reader: it must outlive the reads.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "core/attribution/usage_record.h"
#include "core/cost/chargeback.h"
#include "core/rightsize/history.h"
#include "core/rightsize/workload.h"

namespace gpumeter::usage {

// The default HistoryReadSeconds.
inline constexpr int64_t kHistoryReadS = 3600;

using rightsize::PodLabelMap;
using rightsize::PodWorkloadMap;
using Records = std::map<int64_t, std::vector<attribution::UnitRecord>>;

// What rightsizing reads.
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
  // cover (BuildHistories says how much). A store: an hour.
  virtual int64_t HistoryReadSeconds() const { return kHistoryReadS; }
  // Usage per unit and minute over [from, to), keyed by minute start; where only hourly rollups
  // remain, per hour (keyed by the hour start, a record's `seconds` says how long it covers).
  // Called HistoryReadSeconds at a time, on whole multiples of it: a read holds all its minutes.
  virtual Expected<Records> HistoryMinutes(int64_t from_unix_s, int64_t to_unix_s) const = 0;
  // The histories are built: a source may drop what it cached for the reads (a store: its
  // reader's page cache, which would otherwise fill up to its bound and stay). Best effort.
  virtual void HistoryDone() const {}
};

// Usage summed over a window per unit, with the labels of its pods.
struct WindowUsage {
  std::vector<attribution::UnitRecord> units;
  cost::Labels labels;  // by (namespace, pod); a reader may hold only the keys it was asked for
  std::vector<std::string> sources;  // which series each part was read from, for the output
};

// Usage per unit and bucket, keyed by the bucket's start, with the labels of its pods.
struct BucketUsage {
  Records buckets;
  cost::Labels labels;
};

// All that is read of recorded usage.
class UsageReader : public UsageHistorySource {
 public:
  // Whether HistorySpan covers all the data the reader holds (a store), so that a report may
  // default its window to it; false where it is searched for within a lookback (Prometheus).
  virtual bool SpanIsWhole() const = 0;
  // Usage is booked to whole periods of this many seconds (a store: minutes, 60): a window that
  // ends now is read to the end of the period in progress, whose intervals are already written.
  // 0: read as asked.
  virtual int64_t BookedSeconds() const = 0;
  // Whether reads over time cost little (a file): a report then charts its window bucket by
  // bucket and adds the rightsizing of its workloads; false where each is queries over the network
  // (Prometheus), and a report shows the window's totals only.
  virtual bool ReadsOverTime() const = 0;

  // Usage summed per unit over [from, to) and the labels of its pods. No usage is not an error.
  virtual Expected<WindowUsage> ReadWindow(int64_t from_unix_s, int64_t to_unix_s) const = 0;
  // Usage per unit per `bucket_s` seconds over [from, to), keyed by bucket start, and the labels
  // of its pods (a store: every pod's latest; Prometheus: each pod's of the latest bucket it ran
  // in). Where only coarser data remains, a bucket holds it whole. A reader may take hours only
  // (bucket_s 3600, from and to on the hour: Prometheus), and says so (kInvalidInput).
  virtual Expected<BucketUsage> ReadBuckets(int64_t from_unix_s, int64_t to_unix_s,
                                            int64_t bucket_s) const = 0;
  // The nodes' cloud identities recorded, at least those seen in [from, to) (a store: all it
  // recorded; Prometheus: as last exported in the window). Empty when none was known.
  virtual Expected<std::vector<attribution::NodeRecord>> ReadNodes(int64_t from_unix_s,
                                                                   int64_t to_unix_s) const = 0;
  // What the reads so far were read from, for the output (Prometheus: "prometheus URL: per-minute
  // raw series for 48.0 h, …"); "" where there is nothing to say (a store).
  virtual std::string ReadFrom() const { return ""; }
};

// Histories from `source` over [from, to), read on whole multiples of the source's
// HistoryReadSeconds, one at a time (on the caller's thread), each read handed to a
// rightsize::HistoryBuilder.
Expected<std::map<rightsize::WorkloadKey, rightsize::WorkloadHistory>> BuildHistories(
    const UsageHistorySource& source, int64_t from_s, int64_t to_s);

}  // namespace gpumeter::usage
