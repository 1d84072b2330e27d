// The time window of a report: a duration back from an end ("7d", "24h", "90m", "3600s"), or
// explicit --from/--to as RFC 3339 UTC ("2026-12-01T00:00:00Z") or Unix seconds. Pure.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/error.h"

namespace gpumeter::report {

// Seconds in "<number><s|m|h|d|w>"; errors name the text.
Expected<int64_t> ParseDuration(std::string_view text);
// Unix seconds from RFC 3339 (UTC "Z" or a ±HH:MM offset) or a plain integer.
Expected<int64_t> ParseTime(std::string_view text);

}  // namespace gpumeter::report
