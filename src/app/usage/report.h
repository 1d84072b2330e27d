// `gpumeter report`: a chargeback over a window from the usage store (sqlite:PATH), priced by a
// pricing file (or the dated defaults), split by a policy, grouped, in table, CSV, JSON, FOCUS
// or HTML.
#pragma once

#include "app/usage/prometheus_flags.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/usage/usage_source.h"
#include "common/duration.h"
#include "common/error.h"
#include "core/cost/chargeback.h"
#include "sinks/report/render.h"

namespace gpumeter::app {

struct ReportOptions {
  UsageSource source;  // a store or Prometheus (--source sqlite:PATH | prometheus:URL)
  // How far back from the end (--window); with neither it nor from_s ("--window all"): the
  // store's whole span.
  std::optional<Seconds> window;
  bool window_all = false;  // "--window all" given: the store's whole span, said outright
  std::optional<int64_t> from_s, to_s;       // Unix seconds (--from, --to; to: default now)
  std::vector<std::string> by{"namespace"};  // group-by dimensions (cost::ParseGroupBy)
  cost::Policy policy;                       // --policy and --idle
  std::string pricing_file;
  std::string format = "table";  // table | csv | json | focus | html
  std::string output;            // file; empty: stdout
  PrometheusFlags prometheus;    // how to reach --source prometheus:URL
  // --bill FILE…: price from these FOCUS exports instead (bill_report.h); a store source only.
  std::vector<std::string> bill_files;
  std::string bill_split = "aws-scad";  // --bill-split
  // --bill-unmatched N|all: unmatched VMs listed (nullopt: 20 in a table or a page, 100 in JSON;
  // SIZE_MAX: all).
  std::optional<size_t> bill_unmatched;
};

// 0 ok, 1 the source failed, 2 bad input (each with a message naming it).
int RunReport(const ReportOptions& options);

// The report as text, for `gpumeter report` and the demo's closing summary.
Expected<std::string> RenderReport(const ReportOptions& options, int64_t now_unix_s);

}  // namespace gpumeter::app
