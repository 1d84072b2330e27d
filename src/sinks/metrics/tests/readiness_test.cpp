// /readyz: not ready before the first good sample, ready after, and not ready again when passes
// stop finishing (a source is stuck), saying for how long.
#include "sinks/metrics/readiness.h"

#include <gtest/gtest.h>

namespace gpumeter::metrics {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(Readiness, ReadyAfterTheFirstGoodSampleAndNotWhenPassesStop) {
  const auto t0 = std::chrono::steady_clock::now();
  gpu::SamplerHealth health;
  node::NodeState state;
  EXPECT_FALSE(CheckReadiness(health, state, milliseconds(2500), t0).ready);
  auto pass = std::make_shared<gpu::SampleResult>();
  pass->ok = true;
  pass->taken = t0;
  pass->duration_seconds = 0.5;
  health.latest = health.last_good = pass;
  state.last_good = pass;
  EXPECT_TRUE(CheckReadiness(health, state, milliseconds(2500), t0 + seconds(1)).ready);
  EXPECT_DOUBLE_EQ(SecondsSinceLastPass(health, t0 + seconds(1)), 0.5);
  // The pass finished at t0 + 0.5 s; 2.5 s later it is late.
  EXPECT_TRUE(CheckReadiness(health, state, milliseconds(2500), t0 + milliseconds(2900)).ready);
  const auto late = CheckReadiness(health, state, milliseconds(2500), t0 + seconds(10));
  EXPECT_FALSE(late.ready);
  EXPECT_NE(late.why.find("no sampling pass finished for 10 s"), std::string::npos) << late.why;
  health.stalled_call = "nvmlDeviceGetProcessUtilization";
  EXPECT_NE(CheckReadiness(health, state, milliseconds(2500), t0 + seconds(10))
                .why.find("stuck in nvmlDeviceGetProcessUtilization"),
            std::string::npos);
  // 0: lateness is not checked.
  EXPECT_TRUE(CheckReadiness(health, state, milliseconds(0), t0 + seconds(3600)).ready);
}

}  // namespace
}  // namespace gpumeter::metrics
