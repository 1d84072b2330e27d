// `gpumeter top --source prometheus:URL`: one frame for a whole cluster from the Prometheus that
// scrapes the agents. The usage is read exactly as `gpumeter report --source prometheus:` reads it
// (history::UsageFromPrometheus: the counters' increase over the window), then divided by each
// unit's seconds in the window: mean rates over the last --window. A unit's busy, memory in use
// and power are derived from its owners (busy = not idle; in use = not idle), since
// Prometheus holds the counters, not the gauges. The findings are the agents' open ones as they
// export them (gpumeter_finding_first_seen_timestamp_seconds; the evidence stays in each agent).
// Conversion is pure; FetchPrometheusFrame blocks on HTTP.
#pragma once

#include <cstdint>
#include <string>

#include "common/error.h"
#include "core/top/frame.h"
#include "sources/history/prometheus_source.h"

namespace gpumeter::history {

// The window's usage as mean rates; units with no seconds in the window are left out.
top::FrameData FrameFromUsage(const history::PrometheusUsage& usage, const std::string& source,
                              int64_t at_unix_s, double window_seconds);

// The agents' open findings from their series (labels node, kind, severity, namespace, pod,
// container, unit, process; value: first seen, Unix seconds).
std::vector<top::FindingNow> FindingsFromSamples(const std::vector<history::PromSample>& samples);

// Queries `url` for the `window_seconds` before `at_unix_s`; `label_keys` for --by label:KEY.
Expected<top::FrameData> FetchPrometheusFrame(const std::string& url, int64_t at_unix_s,
                                              int64_t window_seconds,
                                              const std::vector<std::string>& label_keys);

}  // namespace gpumeter::history
