#include "domain/power_trace.h"

#include <algorithm>

namespace gpumeter::domain {

std::vector<gpu::PowerSample> MergePowerSamples(std::vector<gpu::PowerSample> a,
                                                const std::vector<gpu::PowerSample>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end(), [](const gpu::PowerSample& x, const gpu::PowerSample& y) {
    return x.timestamp_us < y.timestamp_us;
  });
  a.erase(std::unique(a.begin(), a.end(),
                      [](const gpu::PowerSample& x, const gpu::PowerSample& y) {
                        return x.timestamp_us == y.timestamp_us;
                      }),
          a.end());
  return a;
}

std::vector<PowerPeriod> PowerPeriods(const std::vector<gpu::PowerSample>& samples, double from_s,
                                      double to_s) {
  if (samples.size() < 3 || !(to_s > from_s)) return {};
  std::vector<double> gaps;
  for (size_t k = 1; k < samples.size(); ++k)
    gaps.push_back(static_cast<double>(samples[k].timestamp_us - samples[k - 1].timestamp_us) /
                   1e6);
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2),
                   gaps.end());
  const double period = gaps[gaps.size() / 2];
  if (!(period > 0) || period * 3 > to_s - from_s) return {};
  std::vector<PowerPeriod> out;
  double at = from_s;
  for (const auto& p : samples) {
    const double stamp = static_cast<double>(p.timestamp_us) / 1e6;
    if (stamp <= from_s) continue;
    if (stamp - period * 1.5 > at) return {};  // a gap, or the first stamp too late
    const double end = std::min(stamp, to_s);
    if (end > at) out.push_back({at, end, p.watts});
    at = end;
    if (at >= to_s) break;
  }
  if (out.empty() || to_s - at > period * 1.5) return {};  // the last stamp too early
  out.back().to_s = to_s;
  return out;
}

std::optional<double> EnergyShareBy(const std::vector<gpu::PowerSample>& samples, double from_s,
                                    double to_s, double at_s) {
  const auto periods = PowerPeriods(samples, from_s, to_s);
  if (periods.empty()) return std::nullopt;
  double before = 0, all = 0;
  for (const auto& p : periods) {
    const double e = p.watts * (p.to_s - p.from_s);
    all += e;
    if (p.to_s <= at_s) {
      before += e;
    } else if (p.from_s < at_s) {
      before += p.watts * (at_s - p.from_s);
    }
  }
  if (!(all > 0)) return std::nullopt;
  return std::clamp(before / all, 0.0, 1.0);
}

}  // namespace gpumeter::domain
