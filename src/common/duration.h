// Durations as people write them in flags and files: "<number><s|m|h|d|w>" ("90m", "24h", "7d").
#pragma once

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/error.h"

namespace gpumeter {

// Seconds in one of a unit letter (s, m, h, d, w); 0: not a unit.
constexpr int64_t UnitSeconds(char unit) {
  switch (unit) {
    case 's':
      return 1;
    case 'm':
      return 60;
    case 'h':
      return 3600;
    case 'd':
      return 86400;
    case 'w':
      return 7 * 86400;
    default:
      return 0;
  }
}

// Whole seconds in (0, 100 years]; the error quotes the text and says what is wrong.
inline Expected<int64_t> ParseDurationSeconds(std::string_view text) {
  const auto bad = [&](const char* why) {
    return MakeError(ErrorCode::kInvalidInput, "'" + std::string(text) + "': " + why);
  };
  constexpr const char* kShape = "expected a number and a unit, e.g. 30m, 24h, 7d, 2w";
  if (text.size() < 2) return bad(kShape);
  const int64_t unit = UnitSeconds(text.back());
  if (unit == 0) return bad(kShape);
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size() - 1, n);
  if (ec == std::errc::result_out_of_range) return bad("longer than 100 years");
  if (ec != std::errc() || end != text.data() + text.size() - 1) return bad(kShape);
  if (n <= 0) return bad("a duration must be longer than 0");
  constexpr int64_t kMax = 100LL * 366 * 86400;
  if (n > kMax / unit) return bad("longer than 100 years");
  return n * unit;
}

// A span of time that may be fractional (a 0.05 s sampling interval): how options carry durations.
using Seconds = std::chrono::duration<double>;

// A flag's duration: a number of seconds ("0.5", "90") or a number and a unit ("250ms", "1.5s",
// "5m", "24h", "7d", "2w"); finite and not negative. The error quotes the text and says what is
// wrong.
inline Expected<Seconds> ParseSeconds(std::string_view text) {
  const auto bad = [&](const char* why) {
    return MakeError(ErrorCode::kInvalidInput, "'" + std::string(text) + "': " + why);
  };
  constexpr const char* kShape = "expected seconds or a number and a unit, e.g. 0.5, 90s, 5m, 24h";
  if (text.empty()) return bad(kShape);
  // A unit letter (or "ms") ends it; none: seconds.
  std::string_view number = text;
  double unit = static_cast<double>(UnitSeconds(text.back()));
  if (unit == 0) {
    unit = 1;
  } else if (text.size() >= 2 && text.substr(text.size() - 2) == "ms") {
    unit = 0.001, number.remove_suffix(2);
  } else {
    number.remove_suffix(1);
  }
  double n = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), n);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size())
    return bad(kShape);
  if (!std::isfinite(n * unit)) return bad("not a finite duration");
  if (n < 0) return bad("a duration cannot be negative");
  return Seconds(n * unit);
}

// Seconds as a flag's default shows them: "1", "0.5", "3600".
inline std::string FormatSeconds(Seconds s) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, s.count());
  return ec == std::errc() ? std::string(buf, end) : std::string("?");
}

// A duration for APIs that take milliseconds (sleeps, deadlines), rounded to the nearest.
inline std::chrono::milliseconds ToMilliseconds(Seconds s) {
  return std::chrono::milliseconds(std::llround(s.count() * 1000));
}

}  // namespace gpumeter
