// Unknown subcommands and flags are named with the closest known one, on the real command tree.
#include "cli/unknown_words.h"

#include <gtest/gtest.h>

#include "cli/commands.h"

namespace gpumeter::cli {
namespace {

struct Tree {
  CLI::App root;
  app::ReportOptions report;
  app::RightsizeOptions rightsize;
  app::TopOptions top;
  app::AgentOptions agent;
  Tree() {
    root.set_version_flag("--version", "x");
    AddReportCommand(root, report);
    AddRightsizeCommand(root, rightsize);
    AddTopCommand(root, top);
    AddAgentCommand(root, agent);
  }
};

TEST(UnknownWords, EditDistanceCountsASwapOnce) {
  EXPECT_EQ(EditDistance("report", "report"), 0u);
  EXPECT_EQ(EditDistance("reprot", "report"), 1u);
  EXPECT_EQ(EditDistance("--sourc", "--source"), 1u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
}

TEST(UnknownWords, AMisspeltCommandIsNamedWithTheClosest) {
  Tree t;
  const auto e = UnknownWord(t.root, {"reprot", "--source", "sqlite:x"});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->rfind("unknown command 'reprot'; did you mean report? (commands: ", 0), 0u) << *e;
  EXPECT_NE(e->find("rightsize"), std::string::npos) << "the commands are listed";
  const auto far = UnknownWord(t.root, {"xyzzy"});
  ASSERT_TRUE(far);
  EXPECT_EQ(far->find("did you mean"), std::string::npos) << "nothing close: no guess: " << *far;
  // A flag before any command (CLI11 said only "A subcommand is required").
  const auto early = UnknownWord(t.root, {"--verison"});
  ASSERT_TRUE(early);
  EXPECT_EQ(early->rfind("unknown flag --verison before a command; did you mean --version?", 0), 0u)
      << *early;
  EXPECT_FALSE(UnknownWord(t.root, {"--help"}));
  EXPECT_FALSE(UnknownWord(t.root, {"--version"}));
}

TEST(UnknownWords, AMisspeltFlagIsNamedBeforeTheRequiredOnesAreMissed) {
  Tree t;
  auto e = UnknownWord(t.root, {"report", "--sourc", "sqlite:x"});
  ASSERT_TRUE(e);
  EXPECT_EQ(
      *e,
      "report: unknown flag --sourc; did you mean --source? (gpumeter report --help lists them)");
  e = UnknownWord(t.root, {"rightsize", "--source=sqlite:x", "--windw=14d"});
  ASSERT_TRUE(e);
  EXPECT_NE(e->find("unknown flag --windw; did you mean --window?"), std::string::npos) << *e;
  e = UnknownWord(t.root, {"agent", "--no-process"});
  ASSERT_TRUE(e);
  EXPECT_NE(e->find("did you mean --no-process-series?"), std::string::npos) << *e;
  // Each command's flags only: top has no --margin.
  e = UnknownWord(t.root, {"top", "--margin", "0.1"});
  ASSERT_TRUE(e);
  EXPECT_NE(e->find("top: unknown flag --margin"), std::string::npos) << *e;
}

TEST(UnknownWords, KnownWordsValuesAndWordsAfterADoubleDashPass) {
  Tree t;
  EXPECT_FALSE(
      UnknownWord(t.root, {"report", "--source", "sqlite:x", "--window=1h", "--by", "pod"}));
  EXPECT_FALSE(UnknownWord(t.root, {"report", "--help"}));
  EXPECT_FALSE(UnknownWord(t.root, {"--version"}));
  EXPECT_FALSE(UnknownWord(t.root, {"report", "--source", "-", "-h"}))
      << "values and short flags: CLI11's";
  EXPECT_FALSE(UnknownWord(t.root, {"report", "--", "--anything"}));
  EXPECT_FALSE(UnknownWord(t.root, {})) << "no command: CLI11 says one is required";
}

// Help lists flags as they are typed: no CLI11 default marks such as "--no-process-series{false}".
TEST(UnknownWords, HelpShowsFlagsAsTyped) {
  Tree t;
  for (const char* command : {"agent", "report", "rightsize", "top"}) {
    const std::string help = t.root.get_subcommand(command)->help();
    EXPECT_EQ(help.find("{false}"), std::string::npos) << command << "\n" << help;
    EXPECT_EQ(help.find("{true}"), std::string::npos) << command;
  }
  EXPECT_NE(t.root.get_subcommand("agent")->help().find("--no-process-series "), std::string::npos);
  ASSERT_FALSE(UnknownWord(t.root, {"agent", "--no-process-series"}));
  CLI::App app;
  app::AgentOptions o;
  AddAgentCommand(app, o);
  EXPECT_FALSE(o.process_series) << "the per-process series are opt-in";
  std::vector<const char*> on{"gpumeter", "agent", "--process-series"};
  app.parse(static_cast<int>(on.size()), on.data());
  EXPECT_TRUE(o.process_series);
  // The old way to turn them off still parses (manifests written when they were on by default).
  std::vector<const char*> argv{"gpumeter", "agent", "--no-process-series"};
  app.parse(static_cast<int>(argv.size()), argv.data());
  EXPECT_FALSE(o.process_series);
}

}  // namespace
}  // namespace gpumeter::cli
