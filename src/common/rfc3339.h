// A Unix time as RFC 3339 in UTC ("2026-11-03T10:17:00Z"): the form reports, FOCUS rows and
// messages print instants in. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>

namespace gpumeter {

// `unix_s` in seconds. A time gmtime_r cannot represent (beyond year 2^31) gives
// "<unix seconds>s", so the output still says which instant it was.
inline std::string Rfc3339(int64_t unix_s) {
  const std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  char buf[32];
  if (gmtime_r(&t, &tm) == nullptr ||
      std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
    return std::to_string(unix_s) + "s";
  return buf;
}

}  // namespace gpumeter
