// Tells a wall-clock step from the passage of time, for the usage recorder: between two
// intervals, the wall clock (the samples' timestamps) and the monotonic clock should move alike.
// A difference of more than a day is a step (an RTC or NTP gone wrong, a VM restored from a
// snapshot): the store's retention measured on such a clock could delete all of its history, so
// the recorder stops pruning and marks what it writes until the two clocks have moved together
// for an hour again. Steps under a day are left to the store as before (a rollup counts a late
// minute in both places; pruning waits for the clock to catch up). Not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>

namespace gpumeter::app {

class ClockStepGuard {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    int64_t step_s = 86400;    // a wall step larger than this is suspect
    int64_t settle_s = 3600;   // clocks moving together this long end the suspicion
    int64_t tolerance_s = 60;  // "together": apart by no more than this (pass jitter, NTP slew)
  };
  // What one observation found.
  struct Verdict {
    bool step = false;     // a step between the previous observation and this one
    bool suspect = false;  // this interval was written under a suspected step
    bool settled = false;  // the suspicion ended with this interval
    int64_t step_s = 0;    // with `step`: wall time moved less monotonic time moved
  };

  ClockStepGuard() = default;
  explicit ClockStepGuard(Options options) : options_(options) {}

  // The wall time of an interval's end and the monotonic time it was recorded at, in order.
  Verdict Observe(int64_t wall_unix_s, Clock::time_point monotonic);

  bool suspect() const { return suspect_; }
  // The end of the newest interval observed before the latest step; nullopt before any step.
  std::optional<int64_t> newest_before_step() const { return newest_before_step_; }

 private:
  using Point = std::pair<int64_t, Clock::time_point>;  // (wall, monotonic)

  Options options_;
  std::optional<Point> last_;
  // The newest interval end observed since the clock was last trusted (not suspect).
  int64_t newest_trusted_ = 0;
  std::optional<int64_t> newest_before_step_;
  bool suspect_ = false;
  Point together_since_{};  // while suspect: where the clocks started moving together
};

}  // namespace gpumeter::app
