// --source is parsed once: each kind a command accepts, and errors that name the flag, the text
// and what the command takes.
#include "app/usage/usage_source.h"

#include <gtest/gtest.h>

namespace gpumeter::app {
namespace {

using Kind = UsageSource::Kind;

TEST(UsageSource, EachPrefixGivesItsKindAndTheRestVerbatim) {
  const std::vector<Kind> all{Kind::kAgent, Kind::kPrometheus, Kind::kFile, Kind::kStore};
  const std::pair<std::string, UsageSource> cases[] = {
      {"sqlite:/var/lib/gpumeter/usage.db", {Kind::kStore, "/var/lib/gpumeter/usage.db"}},
      {"prometheus:https://prom:9090/sub/path", {Kind::kPrometheus, "https://prom:9090/sub/path"}},
      {"agent:http://10.0.0.7:9402", {Kind::kAgent, "http://10.0.0.7:9402"}},
      {"file:frame.json", {Kind::kFile, "frame.json"}},
      // Only the first colon separates: a path may hold more.
      {"sqlite:C:weird:name.db", {Kind::kStore, "C:weird:name.db"}},
  };
  for (const auto& [text, want] : cases) {
    const auto got = ParseUsageSource("--source", text, all);
    ASSERT_TRUE(got) << text << ": " << got.error().message;
    EXPECT_EQ(*got, want) << text;
    EXPECT_EQ(ToString(*got), text);
  }
}

TEST(UsageSource, AKindTheCommandDoesNotTakeIsRefusedWithWhatItTakes) {
  const auto r =
      ParseUsageSource("--source", "agent:http://x:1", {Kind::kStore, Kind::kPrometheus});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "--source 'agent:http://x:1': expected sqlite:PATH or prometheus:URL");
  const auto t =
      ParseUsageSource("--source", "mysql://db", {Kind::kAgent, Kind::kPrometheus, Kind::kFile});
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().message,
            "--source 'mysql://db': expected agent:URL, prometheus:URL or file:PATH");
}

TEST(UsageSource, APrefixWithNothingAfterItIsRefused) {
  for (const std::string text : {"sqlite:", "prometheus:", ""}) {
    const auto r = ParseUsageSource("--source", text, {Kind::kStore, Kind::kPrometheus});
    ASSERT_FALSE(r) << text;
    EXPECT_NE(r.error().message.find("--source '" + text + "'"), std::string::npos)
        << r.error().message;
  }
  EXPECT_EQ(ParseUsageSource("--source", "sqlite:", {Kind::kStore}).error().message,
            "--source 'sqlite:': sqlite: names no PATH");
}

// The prefix is exact: a near miss is not taken for the kind it resembles.
TEST(UsageSource, NearMissesAreNotAccepted) {
  for (const std::string text : {"SQLITE:/x.db", "sqlite/x.db", " prometheus:http://x:1",
                                 "prom:http://x:1", "/var/lib/gpumeter/usage.db"}) {
    EXPECT_FALSE(ParseUsageSource("--source", text, {Kind::kStore, Kind::kPrometheus})) << text;
  }
}

}  // namespace
}  // namespace gpumeter::app
