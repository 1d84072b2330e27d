// The driver's board power samples of a span of time, as periods end to end: what tells how
// power moved inside a pass (nvmlDeviceGetSamples, TOTAL_POWER: one sample per driver period,
// stamped at the period's end with its mean power). Pure; thread-compatible.
#pragma once

#include <vector>

#include "domain/gpu_types.h"

namespace gpumeter::domain {

struct PowerPeriod {
  double from_s = 0, to_s = 0;  // Unix seconds, (from, to]
  double watts = 0;             // mean board power over it
};

// Two reads' samples as one: sorted by stamp, one per stamp (a read may hand one back again).
std::vector<gpu::PowerSample> MergePowerSamples(std::vector<gpu::PowerSample> a,
                                                const std::vector<gpu::PowerSample>& b);

// The periods of `samples` (sorted by stamp) over (from_s, to_s], end to end, the first starting
// at from_s and the last ending at to_s, when the samples cover it: at least three, no gap wider
// than 1.5 periods (the median spacing of the stamps) inside it or at either end, and a period
// at most a third of the span. Else none.
std::vector<PowerPeriod> PowerPeriods(const std::vector<gpu::PowerSample>& samples, double from_s,
                                      double to_s);

// The share of the energy over (from_s, to_s] drawn by `at_s`, from the samples' periods where
// they cover the span (power moved inside it); nullopt otherwise (callers then take it as even).
std::optional<double> EnergyShareBy(const std::vector<gpu::PowerSample>& samples, double from_s,
                                    double to_s, double at_s);

}  // namespace gpumeter::domain
