#include "core/attribution/idle_power.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace gpumeter::attribution {
namespace {

TEST(IdlePowerFit, RecoversTheInterceptOfALinearPowerModel) {
  IdlePowerFit fit;
  for (int i = 0; i < 20; ++i) {
    const double a = 0.2 + 0.03 * (i % 7);
    fit.Add(a, 90 + 610 * a, 1.0);
  }
  ASSERT_TRUE(fit.IdleWatts());
  EXPECT_NEAR(*fit.IdleWatts(), 90.0, 1e-6);
}

TEST(IdlePowerFit, UnknownUntilActivityVaries) {
  IdlePowerFit fit;
  for (int i = 0; i < 100; ++i) fit.Add(0.37, 316, 1.0);
  EXPECT_FALSE(fit.IdleWatts()) << "one activity level cannot tell idle from load";
  IdlePowerFit few;
  few.Add(0.1, 150, 1);
  few.Add(0.5, 400, 1);
  EXPECT_FALSE(few.IdleWatts()) << "two points always fit a line: no evidence yet";
}

TEST(IdlePowerFit, NoisyDataIsRefusedUntilTheInterceptIsTight) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0, 40);  // ±40 W on a 300 W reading
  IdlePowerFit fit;
  for (int i = 0; i < 5; ++i) fit.Add(0.40 + 0.001 * i, 90 + 610 * 0.4 + noise(rng), 1);
  EXPECT_FALSE(fit.IdleWatts()) << "five noisy points over 0.4 % of activity say nothing";
  for (int i = 0; i < 3000; ++i) {
    const double a = (i % 100) / 100.0;
    fit.Add(a, 90 + 610 * a + noise(rng), 1);
  }
  ASSERT_TRUE(fit.IdleWatts());
  EXPECT_NEAR(*fit.IdleWatts(), 90.0, 8.0);
}

TEST(IdlePowerFit, NeverNegativeAndNoFitWhenPowerFallsWithLoad) {
  IdlePowerFit low;  // a line through −50 W at zero activity: no negative power
  for (int i = 0; i < 10; ++i) {
    const double a = 0.5 + 0.05 * i;
    low.Add(a, -50 + 500 * a, 1.0);
  }
  ASSERT_TRUE(low.IdleWatts());
  EXPECT_DOUBLE_EQ(*low.IdleWatts(), 0.0);
  IdlePowerFit falling;  // power that falls with load: not a power model to take idle from
  for (int i = 0; i < 10; ++i) falling.Add(0.5 + 0.01 * i, 200 - 50 * (0.5 + 0.01 * i), 1.0);
  EXPECT_FALSE(falling.IdleWatts());
}

TEST(IdlePowerFit, IgnoresBadInput) {
  IdlePowerFit fit;
  fit.Add(std::nan(""), 100, 1);
  fit.Add(0.5, -1, 1);
  fit.Add(0.5, 100, 0);
  for (int i = 0; i < 10; ++i) fit.Add(0.1 * i, 50 + 100 * 0.1 * i, 1);
  ASSERT_TRUE(fit.IdleWatts());
  EXPECT_NEAR(*fit.IdleWatts(), 50.0, 1e-6);
}

TEST(IdlePowerSeen, ATimeWeightedMeanOnceEnoughWasSeen) {
  IdlePowerSeen seen(3600);
  EXPECT_FALSE(seen.IdleWatts());
  seen.Add(60, 1);
  seen.Add(-5, 10);                                        // refused
  seen.Add(std::numeric_limits<double>::quiet_NaN(), 10);  // refused
  EXPECT_FALSE(seen.IdleWatts()) << "1 s is not enough";
  seen.Add(90, 4);
  ASSERT_TRUE(seen.IdleWatts()) << "5 s seen";
  // (60 × 1 × decay(4 s) + 90 × 4) / (1 × decay + 4): very nearly 84.
  EXPECT_NEAR(*seen.IdleWatts(), 84.0, 0.01);
  // Old evidence fades: a day later at 70 W, the mean is 70.
  for (int i = 0; i < 24; ++i) seen.Add(70, 3600);
  EXPECT_NEAR(*seen.IdleWatts(), 70, 0.01);
}

}  // namespace
}  // namespace gpumeter::attribution
