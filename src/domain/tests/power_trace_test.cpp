#include "domain/power_trace.h"

#include <gtest/gtest.h>

namespace gpumeter::domain {
namespace {

constexpr double kT0 = 1'796'600'000;  // Unix seconds

// One sample per `period` s from t0 + period to t0 + n × period, `watts(k)` in the k-th.
template <typename F>
std::vector<gpu::PowerSample> Samples(int n, double period, F watts) {
  std::vector<gpu::PowerSample> out;
  for (int k = 1; k <= n; ++k)
    out.push_back({static_cast<uint64_t>((kT0 + k * period) * 1e6), watts(k)});
  return out;
}

TEST(PowerTrace, PeriodsEndToEndOverTheSpan) {
  const auto s = Samples(60, 0.25, [](int k) { return k <= 20 ? 100.0 : 300.0; });
  const auto p = PowerPeriods(s, kT0, kT0 + 15);
  ASSERT_EQ(p.size(), 60u);
  EXPECT_DOUBLE_EQ(p.front().from_s, kT0);
  EXPECT_DOUBLE_EQ(p.back().to_s, kT0 + 15);
  for (size_t k = 1; k < p.size(); ++k) EXPECT_DOUBLE_EQ(p[k].from_s, p[k - 1].to_s);
  EXPECT_EQ(p[19].watts, 100);
  EXPECT_EQ(p[20].watts, 300);
}

TEST(PowerTrace, AGapOrMissingEndsGiveNothing) {
  auto s = Samples(60, 0.25, [](int) { return 100.0; });
  EXPECT_TRUE(PowerPeriods(s, kT0 - 1, kT0 + 15).empty()) << "the first second uncovered";
  EXPECT_TRUE(PowerPeriods(s, kT0, kT0 + 16).empty()) << "the last second uncovered";
  s.erase(s.begin() + 30, s.begin() + 34);
  EXPECT_TRUE(PowerPeriods(s, kT0, kT0 + 15).empty()) << "a second missing inside";
  EXPECT_TRUE(PowerPeriods({}, kT0, kT0 + 15).empty());
  EXPECT_TRUE(PowerPeriods(Samples(60, 0.25, [](int) { return 1.0; }), kT0, kT0 + 0.5).empty())
      << "a span of under three periods";
}

TEST(PowerTrace, TheEnergyShareFollowsThePower) {
  // 5 s at 100 W, then 10 s at 300 W: by 5 s, 500 of 3500 J; linear would say a third.
  const auto s = Samples(60, 0.25, [](int k) { return k <= 20 ? 100.0 : 300.0; });
  EXPECT_NEAR(*EnergyShareBy(s, kT0, kT0 + 15, kT0 + 5), 500.0 / 3500, 1e-12);
  EXPECT_NEAR(*EnergyShareBy(s, kT0, kT0 + 15, kT0 + 5.125), (500.0 + 37.5) / 3500, 1e-12)
      << "inside a period: its part";
  EXPECT_EQ(*EnergyShareBy(s, kT0, kT0 + 15, kT0 + 15), 1.0);
  EXPECT_EQ(*EnergyShareBy(s, kT0, kT0 + 15, kT0 - 3), 0.0);
  EXPECT_FALSE(EnergyShareBy(s, kT0, kT0 + 20, kT0 + 5)) << "not covered: the caller's to say";
  EXPECT_FALSE(EnergyShareBy(Samples(60, 0.25, [](int) { return 0.0; }), kT0, kT0 + 15, kT0 + 5))
      << "no energy: no share";
}

}  // namespace
}  // namespace gpumeter::domain
