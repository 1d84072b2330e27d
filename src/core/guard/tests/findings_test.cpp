// The guardrails file: defaults, overrides, and errors that name the file and the key.
#include "core/guard/findings.h"

#include <gtest/gtest.h>

namespace gpumeter::guard {
namespace {

TEST(GuardConfig, KindsAndSeveritiesRoundTrip) {
  for (const Kind k : kAllKinds) EXPECT_EQ(KindFromString(ToString(k)), k);
  EXPECT_FALSE(KindFromString("leak"));
  EXPECT_EQ(SeverityFromString("critical"), Severity::kCritical);
  EXPECT_FALSE(SeverityFromString("high"));
}

TEST(GuardConfig, AnEmptyFileKeepsTheDefaults) {
  const auto c = ParseGuardConfig("", "g.yaml");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->severity.size(), kAllKinds.size());
  EXPECT_EQ(c->severity.at(Kind::kUnallocatedDevice), Severity::kCritical);
  EXPECT_DOUBLE_EQ(c->idle_window_s, 3600);
  EXPECT_TRUE(c->expected_host_processes.count("nvidia-cuda-mps-server"));
}

TEST(GuardConfig, OverridesTurnKindsOffAndSetThresholds) {
  const auto c = ParseGuardConfig(R"(
severity: {visible-devices-all: off, host-process: info, idle-allocation: critical}
idle: {below: 0.05, window: 90m}
oom: {ratio: 0.8}
expected_host_processes: [Xorg]
)",
                                  "g.yaml");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_FALSE(c->severity.count(Kind::kVisibleDevicesAll));
  EXPECT_EQ(c->severity.at(Kind::kHostProcess), Severity::kInfo);
  EXPECT_EQ(c->severity.at(Kind::kIdleAllocation), Severity::kCritical);
  EXPECT_DOUBLE_EQ(c->idle_below, 0.05);
  EXPECT_DOUBLE_EQ(c->idle_window_s, 5400);
  EXPECT_DOUBLE_EQ(c->oom_ratio, 0.8);
  EXPECT_EQ(c->expected_host_processes, std::set<std::string>{"Xorg"});
  const auto seconds = ParseGuardConfig("idle: {window: 600}", "g.yaml");
  ASSERT_TRUE(seconds);
  EXPECT_DOUBLE_EQ(seconds->idle_window_s, 600);
  const auto health = ParseGuardConfig(
      "slowdown: {hold: 2m}\nevents: {open: 30m}\nseverity: {xid: warning}", "g.yaml");
  ASSERT_TRUE(health) << health.error().message;
  EXPECT_DOUBLE_EQ(health->slowdown_hold_s, 120);
  EXPECT_DOUBLE_EQ(health->event_open_s, 1800);
  EXPECT_EQ(health->severity.at(Kind::kXid), Severity::kWarning);
  const auto wrong = ParseGuardConfig("slowdown: {after: 2m}", "g.yaml");
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message.find("expected a mapping with hold"), std::string::npos)
      << wrong.error().message;
}

TEST(GuardConfig, ErrorsNameTheFileAndTheKey) {
  const std::pair<const char*, const char*> cases[] = {
      {"severity: {leak: critical}", "g.yaml: severity.leak: unknown finding kind"},
      {"severity: {oom-risk: high}",
       "g.yaml: severity.oom-risk: 'high' is not info, warning, critical or off"},
      {"idle: {below: 2}", "g.yaml: idle.below: 2.000000 is not in (0, 1]"},
      {"idle: {below: lots}", "g.yaml: idle.below: 'lots' is not a number"},
      {"idle: {window: soon}", "g.yaml: idle.window: 'soon': expected a number and a unit"},
      {"idle: {span: 1h}", "g.yaml: idle.span: unknown key"},
      {"oom: 0.9", "g.yaml: oom: expected a mapping with ratio"},
      {"thresholds: {}", "g.yaml: thresholds: unknown key"},
      {"[1, 2", "g.yaml: not YAML"},
      {"- a", "g.yaml: expected a mapping at the top"},
  };
  for (const auto& [yaml, want] : cases) {
    const auto c = ParseGuardConfig(yaml, "g.yaml");
    ASSERT_FALSE(c) << yaml;
    EXPECT_NE(c.error().message.find(want), std::string::npos)
        << yaml << " -> " << c.error().message;
  }
}

}  // namespace
}  // namespace gpumeter::guard
