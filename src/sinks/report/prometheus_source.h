// Usage over a window from a Prometheus that scrapes the agents: the increase of gpumeter's
// counters over [from, to) per unit and owner (PromQL `increase`, evaluated at `to`), with each
// unit's model, MIG profile, mode and GPU fraction from gpumeter_unit_info and
// gpumeter_unit_gpu_share_ratio. A cluster of any size is reported this way without a store.
// Blocking HTTP; no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/error.h"
#include "sinks/report/chargeback.h"
#include "sinks/report/prometheus_reply.h"
#include "sinks/store/store.h"

namespace gpumeter::report {

struct PrometheusUsage {
  std::vector<store::UnitRecord> units;
  Labels labels;  // the label_KEY values of the owner series, for label:KEY groupings
};

// One instant query of `promql` at `at_unix_s`: every sample of its vector result. For readers
// of other series than the usage (`gpumeter top`'s findings). Errors as below.
Expected<std::vector<PromSample>> QueryPrometheus(const std::string& url, const std::string& promql,
                                                  int64_t at_unix_s,
                                                  const ReplyLimits& limits = {});

// `url`: http(s)://host:port[/prefix]. `label_keys`: pod label keys wanted (exported by the agent
// as label_<key> with --pod-label). Errors: unreachable, HTTP or PromQL errors, a reply of the
// wrong shape or over `limits`, a non-finite value, no gpumeter data. Each query is a GET with a
// 5 s connection timeout and `limits.deadline` (60 s) for its whole reply.
Expected<PrometheusUsage> UsageFromPrometheus(const std::string& url, int64_t from_unix_s,
                                              int64_t to_unix_s,
                                              const std::vector<std::string>& label_keys,
                                              const ReplyLimits& limits = {});

}  // namespace gpumeter::report
