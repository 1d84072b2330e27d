// Rightsizing's usage histories (core/usage/usage_reader.h) from a Prometheus that
// scrapes the agents, for a whole fleet or one node or namespace: the same per-minute usage records
// a store gives, so rightsizing from either gives the same answer on the same data, and workloads
// on whole GPUs of one model are packed across nodes.
//  - Per minute, from the raw counters: range queries (`query_range`, step 60 s) of each counter,
//    series by series (each scrape target's apart: a recreated agent pod's counters start at 0),
//    in pieces of 6 h (360 points per series: far under Prometheus's 11,000-point limit, and
//    replies of a few MB per 1,000 containers); the growth in each minute is the difference of the
//    counter's values at its ends — a counter that went down was reset (the agent restarted) and
//    grew by its new value, and one that appears was born with 0 — and the growths of series of
//    one unit and owner add up.
//  - Per hour, from the recorded series (deploy/kubernetes/monitoring, gpumeter.hourly), for days
//    older than the minute horizon (2 days by default) whose hours the rules covered: a month of
//    history reads 720 points per series. A day the rules did not cover is read per minute.
//  - Workloads from the agents' gpumeter_pod_workload_info (the store derives them from labels).
// Units: Unix seconds. Blocking HTTP; not thread-safe (it counts what it read for Describe).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/usage/usage_reader.h"
#include "sources/history/prometheus_api.h"

namespace gpumeter::history {

struct HistoryScope {
  std::string node;  // only this node's units; empty: every node
  std::string ns;    // only this namespace's containers (with each unit's idle and unattributed)
};

class PrometheusHistory final : public usage::UsageHistorySource {
 public:
  // Reads data in [now - lookback, now]: the span is searched there (the rightsizing window).
  PrometheusHistory(PrometheusApi api, HistoryScope scope, int64_t now_unix_s, int64_t lookback_s,
                    int64_t minute_horizon_s = 2 * 86400);

  std::string HistoryName() const override;
  Expected<std::optional<std::pair<int64_t, int64_t>>> HistorySpan() const override;
  // None: Prometheus has the agents' pod label keys only; workloads come from
  // HistoryPodWorkloads.
  Expected<usage::PodLabelMap> HistoryPodLabels() const override { return {}; }
  Expected<usage::PodWorkloadMap> HistoryPodWorkloads() const override;
  Expected<std::map<int64_t, std::vector<attribution::UnitRecord>>> HistoryMinutes(
      int64_t from_unix_s, int64_t to_unix_s) const override;
  // 6 hours, one range query per counter: a read holds its minutes (for 1,000 containers a day
  // of them is hundreds of MB), and whether the hours are read from the recorded series is
  // decided per read.
  int64_t HistoryReadSeconds() const override { return 6 * 3600; }

  // What was read so far, for the output: "per-minute raw series for 48.0 h, recorded hourly
  // series for 288 h".
  std::string Describe() const;
  // The client it reads through, for the other reads of the same Prometheus.
  const PrometheusApi& api() const { return api_; }

 private:
  using Records = std::map<int64_t, std::vector<attribution::UnitRecord>>;
  Expected<Records> ReadMinutes(int64_t from, int64_t to) const;
  Expected<Records> ReadHours(int64_t from, int64_t to) const;
  bool Covered(int64_t from, int64_t to) const;
  std::string UnitMatchers() const;
  std::string OwnerMatchers() const;

  PrometheusApi api_;
  HistoryScope scope_;
  int64_t now_, lookback_, minute_horizon_;
  mutable std::vector<int64_t> evaluations_;  // of the hourly rules, read with the span
  mutable double minute_hours_ = 0, hourly_hours_ = 0;
};

// The growth of a counter in each step, from its values at start, start + step, … (a range
// query's points, times in ms), keyed by the step's start (seconds). A point after a gap (or
// the first, after `start`) was born with 0 or reset when no earlier value is known or it went
// down: it grew by its value. The first point at `start` has no step before it in the range.
// Points outside [start, end] are ignored.
std::map<int64_t, double> StepGrowth(const std::vector<std::pair<int64_t, double>>& points,
                                     int64_t start_s, int64_t end_s, int64_t step_s);
// The same as (step start, growth) pairs in time order into `out` (cleared first; reused across
// series so a read allocates once), a step that appears twice (off-grid times) listed twice.
void StepGrowthInto(const std::vector<std::pair<int64_t, double>>& points, int64_t start_s,
                    int64_t end_s, int64_t step_s, std::vector<std::pair<int64_t, double>>& out);

}  // namespace gpumeter::history
