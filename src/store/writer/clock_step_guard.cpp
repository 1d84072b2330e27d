#include "store/writer/clock_step_guard.h"

#include <algorithm>
#include <cmath>

namespace gpumeter::app {
namespace {

// How far the wall clock moved beyond the monotonic clock from `from` to `to`, in seconds.
double Apart(const std::pair<int64_t, ClockStepGuard::Clock::time_point>& from, int64_t wall,
             ClockStepGuard::Clock::time_point monotonic) {
  return static_cast<double>(wall - from.first) -
         std::chrono::duration<double>(monotonic - from.second).count();
}

}  // namespace

ClockStepGuard::Verdict ClockStepGuard::Observe(int64_t wall_unix_s, Clock::time_point monotonic) {
  Verdict v;
  if (last_) {
    const double step = Apart(*last_, wall_unix_s, monotonic);
    if (std::abs(step) > static_cast<double>(options_.step_s)) {
      v.step = true;
      v.step_s = std::llround(step);
      // A second step before the clock settled keeps the first one's window: what came between
      // was written under suspicion.
      if (!suspect_) newest_before_step_ = newest_trusted_;
      suspect_ = true;
      together_since_ = {wall_unix_s, monotonic};
    } else if (suspect_) {
      // Measured from the start of the stretch, not per interval: a clock that runs fast by a
      // little each interval is not moving with the monotonic one.
      if (std::abs(Apart(together_since_, wall_unix_s, monotonic)) >
          static_cast<double>(options_.tolerance_s)) {
        together_since_ = {wall_unix_s, monotonic};
      } else if (monotonic - together_since_.second >= std::chrono::seconds(options_.settle_s)) {
        suspect_ = false;
        v.settled = true;
        newest_trusted_ = wall_unix_s;  // the clock's new era: its times, not the old ones
      }
    }
  } else {
    newest_trusted_ = wall_unix_s;
  }
  last_ = Point{wall_unix_s, monotonic};
  if (!suspect_) newest_trusted_ = std::max(newest_trusted_, wall_unix_s);
  v.suspect = suspect_;
  return v;
}

}  // namespace gpumeter::app
