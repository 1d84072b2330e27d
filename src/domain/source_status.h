// How one of the agent's sources is doing, in a form every output (metrics, API, table, doctor)
// shows the same way (SourceStatus, a plain value), and the bookkeeping that keeps it, written
// once for every source (SourceTracker).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace gpumeter::domain {

struct SourceStatus {
  std::string name;        // "nvml", "kubelet", "pods", "proc", "resource_slices"
  bool configured = true;  // false: the agent runs without it (e.g. no kubelet socket given)
  bool up = false;         // the last attempt succeeded
  std::optional<std::chrono::steady_clock::time_point> last_success;
  uint64_t attempts = 0, failures = 0;  // totals since start (monotonic)
  // Of the last read (a list, not a watch); unknown where not timed, or before the first.
  std::optional<double> last_duration_seconds;
  std::string last_error;  // of the last failed attempt; empty once it recovers
  std::string detail;      // what it serves from, e.g. the socket or file path
  int consecutive_failures = 0;

  // A source the agent runs without.
  static SourceStatus NotConfigured(std::string name) {
    SourceStatus s;
    s.name = std::move(name);
    s.configured = false;
    s.detail = "not configured";
    return s;
  }
};

// Up / failures / last success / last error of one source, and when to log: the first failure
// of an outage and the first success after one, never every retry. Not thread-safe: its owner
// serializes the calls (one thread, or its own mutex).
class SourceTracker {
 public:
  using Clock = std::chrono::steady_clock;
  SourceTracker(std::string name, std::string detail);

  // One read begins (counted in attempts).
  void Attempt() { ++status_.attempts; }
  // The read succeeded at `now`; true when this ends an outage (log that it is back).
  bool Succeeded(Clock::time_point now);
  // The read failed; true when this starts an outage (log it once).
  bool Failed(std::string why);
  // Nothing to read (e.g. an unchanged file): the source is up, no attempt counted.
  void Unchanged();
  void SetDuration(double seconds) { status_.last_duration_seconds = seconds; }

  const SourceStatus& status() const { return status_; }

 private:
  SourceStatus status_;
};

}  // namespace gpumeter::domain
