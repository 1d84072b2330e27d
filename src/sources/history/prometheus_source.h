// Usage over a window from a Prometheus that scrapes the agents: the growth of gpumeter's counters
// over [from, to) per unit and owner, with each unit's model, MIG profile, mode and GPU fraction
// from gpumeter_unit_info and gpumeter_unit_gpu_share_ratio. Where the hourly recording rules
// (deploy/kubernetes/monitoring) cover whole hours of the window, those hours are read from the
// recorded series (a 30-day report reads 720 samples per series, not 172,800); the rest from the
// raw counters (recorded_coverage.h). A cluster of any size is reported this way without a store.
// Blocking HTTP through `api`; no shared state.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "core/attribution/usage_record.h"
#include "core/cost/chargeback.h"
#include "sources/history/prometheus_api.h"
#include "sources/history/recorded_coverage.h"

namespace gpumeter::history {

struct PrometheusUsage {
  std::vector<attribution::UnitRecord> units;
  cost::Labels labels;  // the label_KEY values of the owner series, for label:KEY groupings
  std::vector<Segment> segments;  // which series each part of the window was read from
};

// The names the hourly rules record: gpumeter_X_total → gpumeter:X:increase1h, and the gauges
// gpumeter_X → gpumeter:X:max1h.
std::string RecordedName(const std::string& raw_metric);
// The marker every evaluation of the hourly rules writes (recorded_coverage.h).
inline constexpr const char* kRecordedMarker = "gpumeter:hourly_rules:evaluation";

// The evaluation times of the hourly rules in (from, to], Unix seconds (empty without the rules).
Expected<std::vector<int64_t>> RecordedEvaluations(const PrometheusApi& api, int64_t from_unix_s,
                                                   int64_t to_unix_s);

// Each unit's identity (model, MIG profile, mode, fraction of its GPU) as last seen in the
// `range_s` seconds before `at`, from the raw series or the recorded ones, keyed by (node, unit).
// `matchers`: a selector's braces to narrow it (e.g. {node="a"}), or "".
using UnitIdentities = std::map<std::pair<std::string, std::string>, attribution::UnitKey>;
Expected<UnitIdentities> ReadUnitIdentities(const PrometheusApi& api, int64_t at_unix_s,
                                            int64_t range_s, bool recorded,
                                            const std::string& matchers);

// `label_keys`: pod label keys wanted (exported by the agent as label_<key> with --pod-label).
// Errors: unreachable, HTTP or PromQL errors, a reply of the wrong shape or over the limits, a
// non-finite value, no gpumeter data.
// `recorded`: read the hours the recording rules cover from them (false: raw series only, to
// compare the two or where the rules are known to be wrong).
Expected<PrometheusUsage> UsageFromPrometheus(const PrometheusApi& api, int64_t from_unix_s,
                                              int64_t to_unix_s,
                                              const std::vector<std::string>& label_keys,
                                              bool recorded = true);

// Each node's cloud identity as gpumeter_node_info last had it in the `range_s` seconds before
// `at` (the agent exports it from its Node object): name, provider ID, instance type, region,
// zone, capacity type. No GKE instance id, GPU count or seen span (not exported): those stay
// unknown. Empty when no agent knew its Node.
Expected<std::vector<attribution::NodeRecord>> ReadNodeIdentities(const PrometheusApi& api,
                                                                  int64_t at_unix_s,
                                                                  int64_t range_s);

// Usage per hour over [from, to) (both on the hour): UsageFromPrometheus for each hour from the
// raw counters (the hourly rules evaluate off the clock hour, so none fits one), keyed by the
// hour's start; an hour with no gpumeter data is absent, not an error, but no data in any hour
// is (kNotFound). `labels` gets each pod's labels of the latest hour it ran in. For a bill's
// hourly split: a month is 720 reads. A scrape gap of an hour or more before an hour reads its
// counters as born in it (their whole growth since the agent started): known, not handled.
Expected<std::map<int64_t, std::vector<attribution::UnitRecord>>> HourlyUsageFromPrometheus(
    const PrometheusApi& api, int64_t from_unix_s, int64_t to_unix_s,
    const std::vector<std::string>& label_keys, cost::Labels& labels);

}  // namespace gpumeter::history
