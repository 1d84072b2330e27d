#include "app/agent/agent_flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpumeter::app {
namespace {

using ::testing::HasSubstr;

TEST(AgentFlags, Sharing) {
  auto ts = ParseSharingFlag("GPU-1=time-slicing:4");
  ASSERT_TRUE(ts);
  EXPECT_EQ(ts->first, "GPU-1");
  EXPECT_EQ(ts->second.mode, domain::SharingMode::kTimeSlicing);
  EXPECT_EQ(ts->second.replicas, 4u);
  EXPECT_EQ(ParseSharingFlag("GPU-2=mps:2")->second.mode, domain::SharingMode::kMps);
  EXPECT_EQ(ParseSharingFlag("GPU-3=exclusive")->second.replicas, 1u);
  EXPECT_THAT(ParseSharingFlag("GPU-1=time-slicing").error().message, HasSubstr("needs :REPLICAS"));
  EXPECT_THAT(ParseSharingFlag("GPU-1=mps:1").error().message,
              HasSubstr("replicas must be an integer >= 2"));
  EXPECT_THAT(ParseSharingFlag("GPU-1=mps:x").error().message, HasSubstr("'GPU-1=mps:x'"));
  EXPECT_THAT(ParseSharingFlag("GPU-1=mig").error().message,
              HasSubstr("exclusive, time-slicing or mps"));
  EXPECT_THAT(ParseSharingFlag("0=exclusive").error().message, HasSubstr("GPU UUID"));
  EXPECT_THAT(ParseSharingFlag("GPU-1").error().message, HasSubstr("KEY=VALUE"));
  EXPECT_THAT(ParseSharingFlag("GPU-1=exclusive:2").error().message, HasSubstr("no replica count"));
}

TEST(AgentFlags, KeyValuesAndIdlePower) {
  auto labels = ParseKeyValues("--node-label", {"nvidia.com/gpu.replicas=4", "a=b=c"});
  ASSERT_TRUE(labels);
  EXPECT_EQ(labels->at("nvidia.com/gpu.replicas"), "4");
  EXPECT_EQ(labels->at("a"), "b=c");
  EXPECT_THAT(ParseKeyValues("--node-label", {"=x"}).error().message,
              HasSubstr("--node-label '=x'"));
  auto idle = ParseIdlePower({"NVIDIA H100 80GB HBM3=70.5"});
  ASSERT_TRUE(idle);
  EXPECT_DOUBLE_EQ(idle->at("NVIDIA H100 80GB HBM3"), 70.5);
  EXPECT_THAT(ParseIdlePower({"X=-1"}).error().message, HasSubstr("> 0"));
  EXPECT_THAT(ParseIdlePower({"X=nan"}).error().message, HasSubstr("> 0"));
  EXPECT_THAT(ParseIdlePower({"X=12W"}).error().message, HasSubstr("'X=12W'"));
}

}  // namespace
}  // namespace gpumeter::app
