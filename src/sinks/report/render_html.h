// The chargeback as one self-contained HTML page for someone from finance: totals first, then
// charts drawn as inline SVG (no script, no network): cost by group over time (stacked, per
// hour), top spenders, used vs idle cost per GPU, efficiency per group; then the table. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sinks/report/render.h"

namespace gpumeter::report {

// `over_time`: the same chargeback per hour (hour start, chargeback), oldest first.
// `extra_sections`: HTML appended after the table (the rightsizing section), already escaped.
std::string RenderHtml(const cost::Chargeback& c, const Window& w,
                       const std::vector<std::pair<int64_t, cost::Chargeback>>& over_time,
                       const std::string& extra_sections = {});

}  // namespace gpumeter::report
