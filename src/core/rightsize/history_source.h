// What the usage histories read (history.h): the pods' labels, the span of the data and the
// per-minute usage records. The usage store (sinks/store) implements it; rightsizing sees only
// this, so the core does not depend on the sink it reads from, and tests can feed it directly.
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

namespace gpumeter::rightsize {

// Labels by (namespace, pod).
using PodLabelMap =
    std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>>;

class UsageHistorySource {
 public:
  virtual ~UsageHistorySource() = default;

  // Names the source in messages, e.g. "store /var/lib/gpumeter/usage.db".
  virtual std::string HistoryName() const = 0;
  // The first and last minute with data (Unix seconds); nullopt when there is none yet.
  virtual Expected<std::optional<std::pair<int64_t, int64_t>>> HistorySpan() const = 0;
  // The latest labels of every pod seen: a pod's workload is read from them (workload.h).
  virtual Expected<PodLabelMap> HistoryPodLabels() const = 0;
  // Usage per unit and minute over [from, to), keyed by minute start; where only hourly rollups
  // remain, per hour (keyed by the hour start, a record's `seconds` says how long it covers).
  // Called an hour at a time (history.h, kHistoryReadS): a read holds all its minutes.
  virtual Expected<std::map<int64_t, std::vector<attribution::UnitRecord>>> HistoryMinutes(
      int64_t from_unix_s, int64_t to_unix_s) const = 0;
};

}  // namespace gpumeter::rightsize
