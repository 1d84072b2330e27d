// gpumeter: the command line. Declares every subcommand's flags (src/cli/), parses them into that
// subcommand's typed options and hands them to its use case (src/app/), which wires the sources
// and sinks it needs: each use case is the composition root of its run. Nothing registers itself.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "app/diagnose/metrics_doc.h"
#include "cli/commands.h"
#include "cli/unknown_words.h"
#ifdef GPUMETER_WITH_SIM
#include "cli/sim_commands.h"
#endif

int main(int argc, char** argv) {
  using namespace gpumeter;
  CLI::App cli{"gpumeter: per-pod GPU usage and cost on Kubernetes, correct when GPUs are shared"};
  cli.require_subcommand(1);
  cli.set_version_flag("--version", "gpumeter 0.1.0");
  app::AgentOptions agent;
  cli::AddAgentCommand(cli, agent);
#ifdef GPUMETER_WITH_SIM
  app::DemoOptions demo;
  cli::AddDemoCommand(cli, demo);
  app::SimulateOptions simulate;
  cli::AddSimulateCommand(cli, simulate);
#endif
  app::ProbeOptions probe;
  cli::AddProbeCommand(cli, probe);
  app::AuditOptions audit;
  cli::AddAuditCommand(cli, audit);
  app::ReportOptions report;
  cli::AddReportCommand(cli, report);
  app::RightsizeOptions rightsize;
  cli::AddRightsizeCommand(cli, rightsize);
  app::DoctorOptions doctor;
  cli::AddDoctorCommand(cli, doctor);
  app::TopOptions top;
  cli::AddTopCommand(cli, top);
  cli.add_subcommand("metrics-doc",
                     "Print the metric catalogue as the Markdown table in docs/metrics.md");
  // One error style: a command that runs and ends says "gpumeter: error: …" on stderr
  // for a bad flag as for a failure; the agent and the demo run for long and log with timestamps.
  if (const auto unknown = cli::UnknownWord(cli, std::vector<std::string>(argv + 1, argv + argc))) {
    std::fprintf(stderr, "gpumeter: error: %s\n", unknown->c_str());
    return 2;
  }
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return cli.exit(e);  // --help, --version: what was asked for
    const std::string command = argc > 1 && argv[1][0] != '-' ? argv[1] : "";
    std::fprintf(stderr, "gpumeter: error: %s%s (gpumeter %s--help lists the flags)\n",
                 command.empty() ? "" : (command + ": ").c_str(), e.what(),
                 command.empty() ? "" : (command + " ").c_str());
    return 2;
  }
  // The log goes to stderr for every subcommand: stdout is the output (a table, JSON, CSV,
  // FOCUS, a page) and a warning must never land inside it.
  spdlog::set_default_logger(spdlog::stderr_color_mt("gpumeter"));
  const bool long_running = cli.got_subcommand("agent")
#ifdef GPUMETER_WITH_SIM
                            || cli.got_subcommand("demo")
#endif
      ;
  spdlog::set_pattern(long_running ? "%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v" : "gpumeter: %^%l%$: %v");
  if (cli.got_subcommand("agent")) return app::RunAgent(agent);
  if (cli.got_subcommand("metrics-doc")) return app::RunMetricsDoc();
#ifdef GPUMETER_WITH_SIM
  if (cli.got_subcommand("demo")) return app::RunDemo(demo, argv[0]);
  if (cli.got_subcommand("simulate")) return app::RunSimulate(simulate, argv[0]);
#endif
  if (cli.got_subcommand("probe")) return app::RunProbe(probe);
  if (cli.got_subcommand("audit")) return app::RunAudit(audit);
  if (cli.got_subcommand("report")) return app::RunReport(report);
  if (cli.got_subcommand("rightsize")) return app::RunRightsize(rightsize);
  if (cli.got_subcommand("doctor")) return app::RunDoctor(doctor);
  if (cli.got_subcommand("top")) return app::RunTop(top);
  return 2;
}
