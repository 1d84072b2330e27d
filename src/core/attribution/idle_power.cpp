#include "core/attribution/idle_power.h"

#include <algorithm>
#include <cmath>

namespace gpumeter::attribution {

void IdlePowerFit::Add(double activity, double watts, double seconds) {
  if (!std::isfinite(activity) || !std::isfinite(watts) || !std::isfinite(seconds) ||
      seconds <= 0 || watts < 0)
    return;
  const double a = std::clamp(activity, 0.0, 1.0);
  const double decay = std::exp2(-seconds / half_life_s_);
  for (double* s : {&w_, &sa_, &sp_, &saa_, &sap_, &spp_, &n_}) *s *= decay;
  const double w = seconds;  // longer intervals carry more evidence
  w_ += w, sa_ += w * a, sp_ += w * watts, saa_ += w * a * a, sap_ += w * a * watts,
      spp_ += w * watts * watts;
  n_ += 1;
}

void IdlePowerSeen::Add(double watts, double seconds) {
  if (!std::isfinite(watts) || !std::isfinite(seconds) || seconds <= 0 || watts < 0) return;
  const double decay = std::exp2(-seconds / half_life_s_);
  w_ = w_ * decay + seconds;
  sp_ = sp_ * decay + seconds * watts;
  seen_s_ += seconds;
}

std::optional<double> IdlePowerSeen::IdleWatts(double min_seconds) const {
  if (seen_s_ < min_seconds || w_ <= 0) return std::nullopt;
  return sp_ / w_;
}

std::optional<double> IdlePowerFit::IdleWatts() const {
  if (n_ < 3 || w_ <= 0) return std::nullopt;
  const double mean_a = sa_ / w_, mean_p = sp_ / w_;
  const double sxx = saa_ - sa_ * mean_a;  // Σ w (a − ā)²
  // Activity that has not moved (σ below 0.1 %) says nothing about the intercept.
  if (sxx / w_ < 1e-6) return std::nullopt;
  const double sxy = sap_ - sa_ * mean_p;
  const double syy = spp_ - sp_ * mean_p;
  const double slope = sxy / sxx;
  const double intercept = mean_p - slope * mean_a;
  // Residual variance per unit weight, and the intercept's standard error.
  const double rss = std::max(0.0, syy - slope * sxy);
  const double dof = std::max(1.0, n_ - 2);
  const double s2 = rss / w_ * n_ / dof;
  const double se = std::sqrt(s2 * (1.0 / w_ + mean_a * mean_a / sxx) * w_ / n_);
  if (se > std::max(1.0, 0.02 * mean_p)) return std::nullopt;
  if (slope < 0) return std::nullopt;  // power that falls with load: the model does not hold
  return std::clamp(intercept, 0.0, mean_p);
}

}  // namespace gpumeter::attribution
