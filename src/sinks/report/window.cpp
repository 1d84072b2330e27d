#include "sinks/report/window.h"

#include <charconv>
#include <cstring>
#include <ctime>
#include <string>

namespace gpumeter::report {

Expected<int64_t> ParseTime(std::string_view text) {
  int64_t unix_s = 0;
  if (const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), unix_s);
      ec == std::errc() && end == text.data() + text.size())
    return unix_s;
  std::tm tm{};
  const std::string s(text);
  const char* rest = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!rest)
    return MakeError(ErrorCode::kInvalidInput,
                     "time '" + s + "': expected RFC 3339 (2026-12-01T00:00:00Z) or Unix seconds");
  if (*rest == '.') {  // fractional seconds: dropped
    ++rest;
    while (*rest >= '0' && *rest <= '9') ++rest;
  }
  int64_t offset = 0;
  if (*rest == 'Z') {
    ++rest;
  } else if ((*rest == '+' || *rest == '-') && std::strlen(rest) == 6 && rest[3] == ':') {
    const int sign = *rest == '-' ? -1 : 1;
    offset = sign * ((rest[1] - '0') * 10 * 3600 + (rest[2] - '0') * 3600 +
                     (rest[4] - '0') * 10 * 60 + (rest[5] - '0') * 60);
    rest += 6;
  } else {
    return MakeError(ErrorCode::kInvalidInput, "time '" + s + "': needs a zone (Z or ±HH:MM)");
  }
  if (*rest)
    return MakeError(ErrorCode::kInvalidInput, "time '" + s + "': unexpected '" + rest + "'");
  return static_cast<int64_t>(timegm(&tm)) - offset;
}

}  // namespace gpumeter::report
