// The chargeback as one self-contained HTML page for someone from finance: totals first, then
// charts drawn as inline SVG (no script, no network): cost by group over time (stacked, per
// bucket), top spenders, used vs idle cost per GPU, efficiency per group; then the table. Every
// label fits its chart (the label column is as wide as the longest). Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sinks/report/render.h"

namespace gpumeter::report {

// The same chargeback per bucket, for the chart over time, and the span the data covers.
struct OverTime {
  int64_t bucket_s = 3600;  // seconds per column
  std::vector<std::pair<int64_t, cost::Chargeback>>
      buckets;  // (bucket start, chargeback), oldest first
  // The first and last minute with data within the window (Unix s): the header says it where it
  // is shorter than the window; nullopt: not known (the header gives the window alone).
  std::optional<std::pair<int64_t, int64_t>> data_span;
};

// `extra_sections`: HTML appended after the table (the rightsizing section, a bill's
// reconciliation), already escaped. `cost_note`: where each GPU's cost came from, as HTML, when
// not a price per hour (a bill).
std::string RenderHtml(const cost::Chargeback& c, const Window& w, const OverTime& over_time,
                       const std::string& extra_sections = {}, const std::string& cost_note = {});

}  // namespace gpumeter::report
