// Durations as people write them in flags and files: "<number><s|m|h|d|w>" ("90m", "24h", "7d").
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/error.h"

namespace gpumeter {

// Whole seconds in (0, 100 years]; the error quotes the text and says what is wrong.
inline Expected<int64_t> ParseDurationSeconds(std::string_view text) {
  const auto bad = [&](const char* why) {
    return MakeError(ErrorCode::kInvalidInput, "'" + std::string(text) + "': " + why);
  };
  constexpr const char* kShape = "expected a number and a unit, e.g. 30m, 24h, 7d, 2w";
  if (text.size() < 2) return bad(kShape);
  int64_t unit = 0;
  switch (text.back()) {
    case 's':
      unit = 1;
      break;
    case 'm':
      unit = 60;
      break;
    case 'h':
      unit = 3600;
      break;
    case 'd':
      unit = 86400;
      break;
    case 'w':
      unit = 7 * 86400;
      break;
    default:
      return bad(kShape);
  }
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size() - 1, n);
  if (ec == std::errc::result_out_of_range) return bad("longer than 100 years");
  if (ec != std::errc() || end != text.data() + text.size() - 1) return bad(kShape);
  if (n <= 0) return bad("a duration must be longer than 0");
  constexpr int64_t kMax = 100LL * 366 * 86400;
  if (n > kMax / unit) return bad("longer than 100 years");
  return n * unit;
}

}  // namespace gpumeter
