// Estimates a GPU's idle power from its own history: board power is close to linear in activity,
// P = idle + k × activity, so a least-squares line through (activity, mean power) pairs of past
// intervals gives idle power as its intercept. NVML has no idle-power reading; a lowest-power
// reading over-estimates it whenever the GPU is never fully idle. Used to split a MIG GPU's energy
// (idle power by instance size, the rest by instance activity). Weights decay with a half-life so
// the fit follows clock, temperature and firmware changes. Not thread-safe; one per GPU.
#pragma once

#include <optional>

namespace gpumeter::attribution {

class IdlePowerFit {
 public:
  explicit IdlePowerFit(double half_life_s = 3600) : half_life_s_(half_life_s) {}

  // One interval of `seconds` at mean `activity` (slice-weighted SM activity of the whole GPU,
  // [0, 1]) and mean power `watts`. Ignores non-finite or negative inputs.
  void Add(double activity, double watts, double seconds);

  // The intercept in watts, clamped to [0, mean power]; unknown until the activity has varied
  // enough that the intercept's standard error is small (≤ 2 % of mean power, or 1 W), and
  // unknown when power falls with activity (the linear model does not hold).
  std::optional<double> IdleWatts() const;

 private:
  double half_life_s_;
  double w_ = 0, sa_ = 0, sp_ = 0, saa_ = 0, sap_ = 0, spp_ = 0;  // weighted sums
  double n_ = 0;  // decayed count of intervals (the residual's degrees of freedom)
};

// Idle power from the board's power while the GPU ran nothing (no process on it, or on any of its
// MIG instances, at either end of an interval): a decayed, time-weighted mean. Where the activity
// the fit needs is unknown (MIG without GPM or DCGM), this is the evidence left. It reads a little
// low when an idle GPU with no context drops to a deeper power state than one holding contexts.
// Not thread-safe; one per GPU model.
class IdlePowerSeen {
 public:
  explicit IdlePowerSeen(double half_life_s = 3600) : half_life_s_(half_life_s) {}
  // An interval of `seconds` at mean power `watts` with nothing running. Ignores bad inputs.
  void Add(double watts, double seconds);
  // The mean in watts once at least `min_seconds` of idle intervals were seen; else unknown.
  std::optional<double> IdleWatts(double min_seconds = 5) const;

 private:
  double half_life_s_;
  double w_ = 0, sp_ = 0, seen_s_ = 0;  // decayed weight and weighted power; seconds seen (raw)
};

}  // namespace gpumeter::attribution
