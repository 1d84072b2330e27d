// Durations on the command line: parsed once, by the flag, into std::chrono values the use cases
// receive; a bad one is refused naming the flag and the text.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/tests/parse.h"

namespace gpumeter::cli {
namespace {

using testing::Parse;

TEST(DurationFlag, BareSecondsOrAUnitWithinItsRangeAndTheDefaultShown) {
  struct Case {
    std::string text;
    double want_s;  // < 0: refused
    std::string error;
  };
  const Case cases[] = {
      {"2", 2, ""},
      {"250ms", 0.25, ""},
      {"1.5s", 1.5, ""},
      {"2m", 120, ""},
      {"0.05", -1, "--wait: '0.05': not within [0.1s, 1h]"},
      {"2h", -1, "--wait: '2h': not within [0.1s, 1h]"},
      {"soon", -1, "--wait: 'soon': expected seconds or a number and a unit"},
      {"-3", -1, "--wait"},
  };
  for (const auto& c : cases) {
    CLI::App app;
    Seconds wait{7};
    auto* opt = AddDurationOption(&app, "--wait", wait, "How long", Seconds(0.1), Seconds(3600));
    EXPECT_EQ(opt->get_default_str(), "7s");
    const auto error = Parse(app, {"--wait", c.text});
    if (c.want_s >= 0) {
      EXPECT_EQ(error, "") << c.text;
      EXPECT_DOUBLE_EQ(wait.count(), c.want_s) << c.text;
    } else {
      EXPECT_NE(error.find(c.error), std::string::npos) << c.text << " → " << error;
      EXPECT_DOUBLE_EQ(wait.count(), 7) << c.text << ": a refused value changed the option";
    }
  }
}

TEST(DurationFlag, TheAgentsDurationsAreTypedWhereTheyAreParsed) {
  CLI::App app;
  app::AgentOptions o;
  AddAgentCommand(app, o);
  ASSERT_EQ(Parse(app, {"agent", "--interval", "500ms", "--call-deadline", "3", "--dcgm-max-age",
                        "2m", "--rightsize-interval", "0", "--rightsize-min-history", "7d",
                        "--store-pending-max", "1h", "--store-minute-days", "30",
                        "--shutdown-grace", "15s"}),
            "");
  EXPECT_DOUBLE_EQ(o.interval.count(), 0.5);
  EXPECT_DOUBLE_EQ(o.call_deadline.count(), 3);
  EXPECT_DOUBLE_EQ(o.dcgm_max_age.count(), 120);
  EXPECT_DOUBLE_EQ(o.rightsize_interval.count(), 0);
  EXPECT_DOUBLE_EQ(o.rightsize_min_history.count(), 7 * 86400);
  EXPECT_DOUBLE_EQ(o.store_pending_max.count(), 3600);
  EXPECT_EQ(o.store_minute_retention.count(), 30);
  EXPECT_DOUBLE_EQ(o.shutdown_grace.count(), 15);
}

TEST(DurationFlag, DrainIntervalTakesUnitsAndZero) {
  for (const auto& [text, want] :
       std::vector<std::pair<std::string, double>>{{"2500ms", 2.5}, {"0", 0}, {"1m", 60}}) {
    CLI::App app;
    app::AgentOptions o;
    AddAgentCommand(app, o);
    ASSERT_EQ(Parse(app, {"agent", "--drain-interval", text}), "") << text;
    EXPECT_DOUBLE_EQ(o.drain_interval.count(), want) << text;
  }
}

TEST(DurationFlag, BadDurationsOfTheCommandsNameTheirFlag) {
  const std::vector<std::vector<std::string>> cases = {
      {"agent", "--rightsize-min-history", "1x"},
      {"agent", "--interval", "90"},  // above a minute
      {"agent", "--store-pending-max", "10s"},
      {"rightsize", "--source", "sqlite:/x.db", "--min-history", "1x"},
      {"top", "--interval", "0"},
      {"probe", "--interval", "1h"},
      {"agent", "--drain-interval", "61"},  // the driver keeps ~10 s: a minute is the most
      {"agent", "--drain-interval", "-1s"},
      {"doctor", "--drain-interval", "2m"},
  };
  for (const auto& args : cases) {
    CLI::App app;
    app::AgentOptions agent;
    app::RightsizeOptions rightsize;
    app::TopOptions top;
    app::ProbeOptions probe;
    app::DoctorOptions doctor;
    AddAgentCommand(app, agent);
    AddDoctorCommand(app, doctor);
    AddRightsizeCommand(app, rightsize);
    AddTopCommand(app, top);
    AddProbeCommand(app, probe);
    const auto error = Parse(app, args);
    const std::string flag = args[args.size() - 2];
    EXPECT_NE(error.find(flag + ": '" + args.back() + "'"), std::string::npos)
        << args[0] << " " << flag << " → " << error;
  }
}

}  // namespace
}  // namespace gpumeter::cli
