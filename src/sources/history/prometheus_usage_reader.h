// core's usage::UsageReader over a Prometheus that scrapes the agents: rightsizing's histories
// per minute and per hour (prometheus_history.h), a window's usage from the counters' growth and
// the hourly recorded series (prometheus_source.h: UsageFromPrometheus), a bill's hours from the
// raw counters (HourlyUsageFromPrometheus) and its nodes from gpumeter_node_info
// (ReadNodeIdentities). Prometheus keeps no whole span to default a window to, books nothing to
// whole minutes, and every read over time is queries over the network.
// Units: Unix seconds. Blocking HTTP; not thread-safe (PrometheusHistory counts what it read).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/usage/usage_reader.h"
#include "sources/history/prometheus_api.h"
#include "sources/history/prometheus_history.h"

namespace gpumeter::history {

struct PrometheusReadOptions {
  HistoryScope scope;  // the histories: one node's units or one namespace's containers
  // The histories: their span is searched in [now - lookback, now]; per-minute raw series back
  // to now - minute_horizon, the recorded hourly series before (PrometheusHistory).
  int64_t now_unix_s = 0;
  int64_t lookback_s = 0;
  int64_t minute_horizon_s = 2 * 86400;
  std::vector<std::string> label_keys;  // pod label keys wanted (label:KEY groupings)
  bool recorded = true;  // a window's whole hours from the recorded series where they cover
};

class PrometheusUsageReader final : public usage::UsageReader {
 public:
  PrometheusUsageReader(PrometheusApi api, PrometheusReadOptions options);

  std::string HistoryName() const override { return history_.HistoryName(); }
  Expected<std::optional<std::pair<int64_t, int64_t>>> HistorySpan() const override {
    return history_.HistorySpan();
  }
  Expected<usage::PodLabelMap> HistoryPodLabels() const override {
    return history_.HistoryPodLabels();
  }
  Expected<usage::PodWorkloadMap> HistoryPodWorkloads() const override {
    return history_.HistoryPodWorkloads();
  }
  int64_t HistoryReadSeconds() const override { return history_.HistoryReadSeconds(); }
  Expected<usage::Records> HistoryMinutes(int64_t from_unix_s, int64_t to_unix_s) const override {
    return history_.HistoryMinutes(from_unix_s, to_unix_s);
  }

  bool SpanIsWhole() const override { return false; }
  int64_t BookedSeconds() const override { return 0; }
  bool ReadsOverTime() const override { return false; }
  // UsageFromPrometheus; its sources: "prometheus URL: " and the series each part was read from.
  Expected<usage::WindowUsage> ReadWindow(int64_t from_unix_s, int64_t to_unix_s) const override;
  // Hours only (bucket_s 3600, from and to on the hour), from the raw counters.
  Expected<usage::BucketUsage> ReadBuckets(int64_t from_unix_s, int64_t to_unix_s,
                                           int64_t bucket_s) const override;
  // As gpumeter_node_info had them last in [from, to): no GKE instance id, GPU count or seen span.
  Expected<std::vector<attribution::NodeRecord>> ReadNodes(int64_t from_unix_s,
                                                           int64_t to_unix_s) const override;
  // What the histories were read from (PrometheusHistory::Describe).
  std::string ReadFrom() const override { return history_.Describe(); }

 private:
  PrometheusHistory history_;
  std::vector<std::string> label_keys_;
  bool recorded_;
};

}  // namespace gpumeter::history
