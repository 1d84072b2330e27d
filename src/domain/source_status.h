// How one of the agent's sources is doing, in a form every output (metrics, API, table, doctor)
// shows the same way. Plain value.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace gpumeter::node {

struct SourceStatus {
  std::string name;        // "nvml", "kubelet", "pods", "proc"
  bool configured = true;  // false: the agent runs without it (e.g. no kubelet socket given)
  bool up = false;         // the last attempt succeeded
  std::optional<std::chrono::steady_clock::time_point> last_success;
  uint64_t attempts = 0, failures = 0;
  std::optional<double>
      last_duration_seconds;  // of the last read (a list, not a watch); unknown where not timed
  std::string last_error;     // of the last failed attempt; empty once it recovers
  std::string detail;         // what it serves from, e.g. the socket or file path
};

}  // namespace gpumeter::node
