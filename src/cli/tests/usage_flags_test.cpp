// The flags of the commands that read recorded usage (report, rightsize, top): windows, instants,
// group-by dimensions and the cost policy arrive typed in the options, parsed once as the flag is
// read; a bad value is refused naming the flag and the text, before anything is read.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/tests/parse.h"

namespace gpumeter::cli {
namespace {

using testing::Parse;

TEST(UsageFlags, ReportOptionsArriveTyped) {
  {
    CLI::App app;
    app::ReportOptions o;
    AddReportCommand(app, o);
    ASSERT_EQ(Parse(app, {"report", "--source", "sqlite:/x.db"}), "");
    EXPECT_FALSE(o.window.has_value());  // the store's whole span
    EXPECT_FALSE(o.from_s || o.to_s);
    EXPECT_EQ(o.by, std::vector<std::string>{"namespace"});
    EXPECT_EQ(o.policy.Name(), cost::Policy{}.Name());
  }
  CLI::App app;
  app::ReportOptions o;
  AddReportCommand(app, o);
  ASSERT_EQ(Parse(app, {"report", "--source", "prometheus:http://p:9090", "--window", "36h", "--to",
                        "2026-12-01T00:00:00Z", "--by", "node,label:team", "--policy", "blend:0.7",
                        "--idle", "separate"}),
            "");
  ASSERT_TRUE(o.window.has_value());
  EXPECT_DOUBLE_EQ(o.window->count(), 36 * 3600);
  EXPECT_EQ(o.to_s, 1'796'083'200);
  EXPECT_EQ(o.by, (std::vector<std::string>{"node", "label:team"}));
  EXPECT_EQ(o.policy.basis, cost::Basis::kBlend);
  EXPECT_DOUBLE_EQ(o.policy.alpha, 0.7);
  EXPECT_EQ(o.policy.idle, cost::IdleRule::kSeparate);
  CLI::App again;
  app::ReportOptions all;
  AddReportCommand(again, all);
  ASSERT_EQ(Parse(again, {"report", "--source", "sqlite:/x.db", "--window", "all", "--from",
                          "1796083200"}),
            "");
  EXPECT_FALSE(all.window.has_value());
  EXPECT_TRUE(all.window_all);  // said outright: the report refuses it beside --from
  EXPECT_EQ(all.from_s, 1'796'083'200);
}

TEST(UsageFlags, BillUnmatchedIsACountOrAll) {
  for (const auto& [text, want] :
       std::vector<std::pair<std::string, size_t>>{{"all", SIZE_MAX}, {"0", 0}, {"500", 500}}) {
    CLI::App app;
    app::ReportOptions o;
    AddReportCommand(app, o);
    ASSERT_EQ(Parse(app, {"report", "--source", "sqlite:/x.db", "--bill-unmatched", text}), "")
        << text;
    EXPECT_EQ(o.bill_unmatched, want) << text;
  }
  CLI::App app;
  app::ReportOptions o;
  AddReportCommand(app, o);
  EXPECT_FALSE(o.bill_unmatched.has_value());  // the format's default
  const std::string error =
      Parse(app, {"report", "--source", "sqlite:/x.db", "--bill-unmatched", "most"});
  EXPECT_NE(error.find("--bill-unmatched"), std::string::npos) << error;
  EXPECT_NE(error.find("'most'"), std::string::npos) << error;
}

TEST(UsageFlags, RightsizeAndTopDurationsArriveTyped) {
  CLI::App app;
  app::RightsizeOptions r;
  app::TopOptions t;
  AddRightsizeCommand(app, r);
  AddTopCommand(app, t);
  EXPECT_DOUBLE_EQ(r.window.count(), 14 * 86400);
  EXPECT_DOUBLE_EQ(r.minute_history.count(), 48 * 3600);
  ASSERT_EQ(Parse(app, {"rightsize", "--source", "sqlite:/x.db", "--window", "3d",
                        "--minute-history", "6h"}),
            "");
  EXPECT_DOUBLE_EQ(r.window.count(), 3 * 86400);
  EXPECT_DOUBLE_EQ(r.minute_history.count(), 6 * 3600);
  CLI::App top_app;
  AddTopCommand(top_app, t);
  ASSERT_EQ(Parse(top_app, {"top", "--window", "5m", "--policy", "compute", "--idle", "owner"}),
            "");
  EXPECT_DOUBLE_EQ(t.window.count(), 300);
  EXPECT_EQ(t.policy.basis, cost::Basis::kCompute);
  EXPECT_EQ(t.policy.idle, cost::IdleRule::kOwner);
}

TEST(UsageFlags, BadValuesAreRefusedNamingTheirFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string want;
  };
  const std::string store = "sqlite:/x.db";
  const Case cases[] = {
      {{"report", "--source", store, "--window", "soon"}, "--window: 'soon': expected seconds"},
      {{"report", "--source", store, "--window", "0"}, "--window: '0': not within [1s, 3660d]"},
      {{"report", "--source", store, "--from", "yesterday"}, "--from"},
      {{"report", "--source", store, "--to", "2026-13-01T00:00:00Z"}, "--to"},
      {{"report", "--source", store, "--by", "namespace,team"}, "--by 'namespace,team'"},
      {{"report", "--source", store, "--policy", "blend:2"}, "policy 'blend:2'"},
      {{"report", "--source", store, "--idle", "nobody"}, "idle rule 'nobody'"},
      {{"rightsize", "--source", store, "--window", "soon"}, "--window: 'soon'"},
      {{"rightsize", "--source", store, "--window", "30s"}, "--window: '30s': not within [1m"},
      {{"rightsize", "--source", store, "--minute-history", "2 days"},
       "--minute-history: '2 days'"},
      {{"top", "--window", "0"}, "--window: '0': not within [1s, 1d]"},
      {{"top", "--policy", "cheapest"}, "policy 'cheapest'"},
  };
  for (const auto& c : cases) {
    CLI::App app;
    app::ReportOptions report;
    app::RightsizeOptions rightsize;
    app::TopOptions top;
    AddReportCommand(app, report);
    AddRightsizeCommand(app, rightsize);
    AddTopCommand(app, top);
    const auto error = Parse(app, c.args);
    EXPECT_NE(error.find(c.want), std::string::npos) << c.args[0] << " → " << error;
  }
}

}  // namespace
}  // namespace gpumeter::cli

namespace gpumeter::cli {
namespace {

// One way to name a store everywhere: `--store PATH` (as the agent's) is `--source sqlite:PATH`.
TEST(UsageFlags, StoreNamesTheSameSourceAsSqlite) {
  for (const char* command : {"report", "rightsize"}) {
    SCOPED_TRACE(command);
    CLI::App app;
    app::ReportOptions r;
    app::RightsizeOptions z;
    AddReportCommand(app, r);
    AddRightsizeCommand(app, z);
    ASSERT_EQ(testing::Parse(app, {command, "--store", "/var/lib/gpumeter/usage.db"}), "");
    const app::UsageSource got = std::string(command) == "report" ? r.source : *z.source;
    EXPECT_EQ(got.kind, app::UsageSource::Kind::kStore);
    EXPECT_EQ(got.where, "/var/lib/gpumeter/usage.db");
  }
  CLI::App app;
  app::ReportOptions r;
  AddReportCommand(app, r);
  EXPECT_NE(testing::Parse(app, {"report", "--store", "a.db", "--source", "sqlite:b.db"})
                .find("excludes"),
            std::string::npos);
  CLI::App bare;
  app::ReportOptions r2;
  AddReportCommand(bare, r2);
  EXPECT_EQ(testing::Parse(bare, {"report"}), "--source (or --store PATH) is required");
}

}  // namespace
}  // namespace gpumeter::cli

namespace gpumeter::cli {
namespace {

// The agent prices usage under the same --policy and --idle as report (gpumeter_cost_total), also
// from its environment (the DaemonSet's settings ConfigMap); a bad value names the flag.
TEST(UsageFlags, TheAgentsCostPolicyArrivesTypedFromFlagsOrEnvironment) {
  {
    CLI::App app;
    app::AgentOptions o;
    AddAgentCommand(app, o);
    ASSERT_EQ(testing::Parse(app, {"agent", "--policy", "blend:0.25", "--idle", "separate"}), "");
    EXPECT_EQ(o.policy.Name(), "blend:0.25/idle=separate");
  }
  for (const auto& [args, want] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"agent", "--policy", "gpu"}, "--policy: policy 'gpu'"},
           {{"agent", "--idle", "sideways"}, "--idle: idle rule 'sideways'"}}) {
    CLI::App app;
    app::AgentOptions o;
    AddAgentCommand(app, o);
    EXPECT_NE(testing::Parse(app, args).find(want), std::string::npos) << want;
    EXPECT_EQ(o.policy.Name(), "memory/idle=share") << "a refused value changed the policy";
  }
  ::setenv("GPUMETER_IDLE", "owner", 1);
  CLI::App app;
  app::AgentOptions o;
  AddAgentCommand(app, o);
  const auto error = testing::Parse(app, {"agent"});
  ::unsetenv("GPUMETER_IDLE");
  ASSERT_EQ(error, "");
  EXPECT_EQ(o.policy.Name(), "memory/idle=owner");
}

}  // namespace
}  // namespace gpumeter::cli

namespace gpumeter::cli {
namespace {

// --prometheus-timeout is a duration like every other (a bare number is seconds).
TEST(UsageFlags, ThePrometheusTimeoutIsADuration) {
  for (const auto& [text, want] :
       std::vector<std::pair<std::string, double>>{{"2m", 120}, {"45", 45}, {"1.5s", 1.5}}) {
    CLI::App app;
    app::ReportOptions o;
    AddReportCommand(app, o);
    ASSERT_EQ(testing::Parse(app, {"report", "--source", "prometheus:http://p:9090", "--window",
                                   "1h", "--prometheus-timeout", text}),
              "")
        << text;
    EXPECT_DOUBLE_EQ(o.prometheus.timeout.count(), want) << text;
  }
  CLI::App app;
  app::ReportOptions o;
  AddReportCommand(app, o);
  EXPECT_NE(testing::Parse(app, {"report", "--source", "prometheus:http://p:9090", "--window", "1h",
                                 "--prometheus-timeout", "2h"})
                .find("--prometheus-timeout: '2h': not within [1s, 1h]"),
            std::string::npos);
  EXPECT_DOUBLE_EQ(o.prometheus.timeout.count(), 120) << "a refused value changed the option";
}

// The agent serves the default set of per-container series unless given the full one.
TEST(UsageFlags, ContainerSeriesDefaultOrFull) {
  for (const auto& [args, full] : std::vector<std::pair<std::vector<std::string>, bool>>{
           {{"agent"}, false},
           {{"agent", "--container-series", "default"}, false},
           {{"agent", "--container-series=full"}, true}}) {
    CLI::App app;
    app::AgentOptions o;
    AddAgentCommand(app, o);
    ASSERT_EQ(Parse(app, args), "") << args.back();
    EXPECT_EQ(o.full_container_series, full) << args.back();
  }
  CLI::App app;
  app::AgentOptions o;
  AddAgentCommand(app, o);
  EXPECT_NE(Parse(app, {"agent", "--container-series", "all"}), "");
  EXPECT_FALSE(o.full_container_series);
}

}  // namespace
}  // namespace gpumeter::cli
