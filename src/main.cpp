// gpumeter: the one composition root. Each subcommand parses its own options (src/cli/) and wires
// its sources and sinks; nothing registers itself.
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <cstdio>

#include "cli/agent.h"
#include "cli/audit.h"
#include "cli/demo.h"
#include "cli/doctor.h"
#include "cli/probe.h"
#include "cli/report.h"
#include "cli/rightsize.h"
#include "cli/simulate.h"
#include "metrics/catalogue.h"

int main(int argc, char** argv) {
  CLI::App app{"gpumeter: per-pod GPU usage and cost on Kubernetes, correct when GPUs are shared"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "gpumeter 0.1.0");
  gpumeter::cli::AgentOptions agent;
  gpumeter::cli::AddAgentCommand(app, agent);
  gpumeter::cli::DemoOptions demo;
  gpumeter::cli::AddDemoCommand(app, demo);
  gpumeter::cli::SimulateOptions simulate;
  gpumeter::cli::AddSimulateCommand(app, simulate);
  gpumeter::cli::ProbeOptions probe;
  gpumeter::cli::AddProbeCommand(app, probe);
  gpumeter::cli::AuditOptions audit;
  gpumeter::cli::AddAuditCommand(app, audit);
  gpumeter::cli::ReportOptions report;
  gpumeter::cli::AddReportCommand(app, report);
  gpumeter::cli::RightsizeOptions rightsize;
  gpumeter::cli::AddRightsizeCommand(app, rightsize);
  gpumeter::cli::DoctorOptions doctor;
  gpumeter::cli::AddDoctorCommand(app, doctor);
  app.add_subcommand("metrics-doc",
                     "Print the metric catalogue as the Markdown table in docs/metrics.md");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  if (app.got_subcommand("agent")) return gpumeter::cli::RunAgent(agent);
  if (app.got_subcommand("metrics-doc")) {
    std::fputs(gpumeter::metrics::CatalogueMarkdown().c_str(), stdout);
    return 0;
  }
  if (app.got_subcommand("demo")) return gpumeter::cli::RunDemo(demo, argv[0]);
  if (app.got_subcommand("simulate")) return gpumeter::cli::RunSimulate(simulate, argv[0]);
  if (app.got_subcommand("probe")) return gpumeter::cli::RunProbe(probe);
  if (app.got_subcommand("audit")) return gpumeter::cli::RunAudit(audit);
  if (app.got_subcommand("report")) return gpumeter::cli::RunReport(report);
  if (app.got_subcommand("rightsize")) return gpumeter::cli::RunRightsize(rightsize);
  if (app.got_subcommand("doctor")) return gpumeter::cli::RunDoctor(doctor);
  return 2;
}
