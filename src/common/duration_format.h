// A duration as a person would write it back on the command line: the largest unit that divides
// it exactly, up to days (86400 s -> "1d", 5400 s -> "90m", 1.5 s -> "1.5s"). ParseSeconds reads
// every form it writes. Pure; header-only.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "common/duration.h"

namespace gpumeter {

inline std::string FormatDuration(Seconds s) {
  const double v = s.count();
  const double whole = std::round(v);
  if (v > 0 && whole == v && whole < 1e15) {
    const auto n = static_cast<int64_t>(whole);
    for (const char unit : {'d', 'h', 'm'})  // days, not weeks: "14d" reads as written
      if (n % UnitSeconds(unit) == 0) return std::to_string(n / UnitSeconds(unit)) + unit;
    return std::to_string(n) + "s";
  }
  return FormatSeconds(s) + "s";
}

// Whole seconds, rounded to the nearest: what the readers that count in seconds take.
inline int64_t WholeSeconds(Seconds s) { return std::llround(s.count()); }

}  // namespace gpumeter
