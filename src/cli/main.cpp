// gpumeter: the one composition root. Each subcommand parses its own options (src/cli/) and wires
// its sources and sinks; nothing registers itself.
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <cstdio>

#include "app/agent.h"
#include "app/audit.h"
#include "app/demo.h"
#include "app/doctor.h"
#include "app/probe.h"
#include "app/report.h"
#include "app/rightsize.h"
#include "app/simulate.h"
#include "sinks/metrics/catalogue.h"

int main(int argc, char** argv) {
  CLI::App app{"gpumeter: per-pod GPU usage and cost on Kubernetes, correct when GPUs are shared"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "gpumeter 0.1.0");
  gpumeter::app::AgentOptions agent;
  gpumeter::app::AddAgentCommand(app, agent);
  gpumeter::app::DemoOptions demo;
  gpumeter::app::AddDemoCommand(app, demo);
  gpumeter::app::SimulateOptions simulate;
  gpumeter::app::AddSimulateCommand(app, simulate);
  gpumeter::app::ProbeOptions probe;
  gpumeter::app::AddProbeCommand(app, probe);
  gpumeter::app::AuditOptions audit;
  gpumeter::app::AddAuditCommand(app, audit);
  gpumeter::app::ReportOptions report;
  gpumeter::app::AddReportCommand(app, report);
  gpumeter::app::RightsizeOptions rightsize;
  gpumeter::app::AddRightsizeCommand(app, rightsize);
  gpumeter::app::DoctorOptions doctor;
  gpumeter::app::AddDoctorCommand(app, doctor);
  app.add_subcommand("metrics-doc",
                     "Print the metric catalogue as the Markdown table in docs/metrics.md");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  if (app.got_subcommand("agent")) return gpumeter::app::RunAgent(agent);
  if (app.got_subcommand("metrics-doc")) {
    std::fputs(gpumeter::metrics::CatalogueMarkdown().c_str(), stdout);
    return 0;
  }
  if (app.got_subcommand("demo")) return gpumeter::app::RunDemo(demo, argv[0]);
  if (app.got_subcommand("simulate")) return gpumeter::app::RunSimulate(simulate, argv[0]);
  if (app.got_subcommand("probe")) return gpumeter::app::RunProbe(probe);
  if (app.got_subcommand("audit")) return gpumeter::app::RunAudit(audit);
  if (app.got_subcommand("report")) return gpumeter::app::RunReport(report);
  if (app.got_subcommand("rightsize")) return gpumeter::app::RunRightsize(rightsize);
  if (app.got_subcommand("doctor")) return gpumeter::app::RunDoctor(doctor);
  return 2;
}
