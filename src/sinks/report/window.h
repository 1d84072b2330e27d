// The instants that bound a report's window (--from, --to): RFC 3339 UTC
// ("2026-12-01T00:00:00Z") or Unix seconds. (Its duration, --window, is a duration flag:
// common/duration.h.) Pure.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/error.h"

namespace gpumeter::report {

// Unix seconds from RFC 3339 (UTC "Z" or a ±HH:MM offset) or a plain integer.
Expected<int64_t> ParseTime(std::string_view text);

}  // namespace gpumeter::report
