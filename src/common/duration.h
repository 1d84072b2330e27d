// Durations as people write them in flags and files: "<number><s|m|h|d|w>" ("90m", "24h", "7d").
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/error.h"

namespace gpumeter {

// Whole seconds (> 0); the error quotes the text.
inline Expected<int64_t> ParseDurationSeconds(std::string_view text) {
  const auto bad = [&] {
    return MakeError(
        ErrorCode::kInvalidInput,
        "'" + std::string(text) + "': expected a number and a unit, e.g. 30m, 24h, 7d, 2w");
  };
  if (text.size() < 2) return bad();
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size() - 1, n);
  if (ec != std::errc() || end != text.data() + text.size() - 1 || n <= 0) return bad();
  switch (text.back()) {
    case 's':
      return n;
    case 'm':
      return n * 60;
    case 'h':
      return n * 3600;
    case 'd':
      return n * 86400;
    case 'w':
      return n * 7 * 86400;
    default:
      return bad();
  }
}

}  // namespace gpumeter
