// `gpumeter rightsize`: the GPU share each workload needs, from the usage store's history or from
// the Prometheus that scrapes the agents (a fleet: whole-GPU workloads pack across nodes)
// (docs/rightsizing.md): reclaim, a smaller MIG profile, sharing a GPU, or keep — with the evidence
// and the monthly savings at the configured prices. As a table or JSON. The command opens the store
// its --source names; the agent, the demo and the HTML report hand over the store they have open,
// as a usage::UsageHistorySource. Each call reads on the calling thread.
#pragma once

#include "app/usage/prometheus_flags.h"
#include "app/usage/usage_source.h"

#include <cstdint>
#include <optional>
#include <string>

#include "common/duration.h"
#include "common/error.h"
#include "core/rightsize/recommend.h"
#include "core/usage/usage_reader.h"

namespace gpumeter::app {

struct RightsizeOptions {
  // A store or Prometheus (--source); only where no history source is handed over.
  std::optional<UsageSource> source;
  Seconds window{14 * 86400};  // history to read back from the end of the store
  Seconds min_history{86400};  // below this much history (VPA confidence): keep
  double margin = 0.15;
  std::string pricing_file;
  std::string format = "table";  // table | json
  std::string output;
  std::optional<int64_t> to_s;  // history up to here (Unix s; default: the store's last minute)
  std::string node;             // only the workloads on this node (empty: all)
  std::string ns;               // only the workloads of this namespace (empty: all)
  PrometheusFlags prometheus;   // how to reach --source prometheus:URL
  Seconds minute_history{48 * 3600};  // prometheus: per-minute raw series back this far
  // The command: a read that finds no workload is an error that says why (an empty answer from a
  // fleet must not pass as "nothing to resize"). The agent's runner leaves it off.
  bool require_workloads = false;
};

// A time flag's value: RFC 3339 (2026-12-01T00:00:00Z) or Unix seconds; the error names `flag`.
Expected<int64_t> ParseTimeFlag(const std::string& flag, const std::string& text);

// 0 ok, 1 the store failed, 2 bad input.
int RunRightsize(const RightsizeOptions& options);

// The recommendations from `history` (borrowed for the call), with the options but `source`: the
// agent's RightsizeRunner, the demo's closing section, the HTML report.
Expected<std::vector<rightsize::Recommendation>> Rightsize(
    const usage::UsageHistorySource& history, const RightsizeOptions& options,
    rightsize::RecommendOptions* used = nullptr);
Expected<std::string> RenderRightsize(const usage::UsageHistorySource& history,
                                      const RightsizeOptions& options);
// The same from the source `options.source` names: a store opened read-only for the call, or a
// Prometheus (the command).
Expected<std::vector<rightsize::Recommendation>> Rightsize(
    const RightsizeOptions& options, rightsize::RecommendOptions* used = nullptr);
Expected<std::string> RenderRightsize(const RightsizeOptions& options);

}  // namespace gpumeter::app
