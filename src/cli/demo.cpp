// `gpumeter demo`: its flags, into app::DemoOptions (src/app/sim/demo.h).
#include <CLI/CLI.hpp>

#include "app/sim/demo.h"
#include "cli/commands.h"
#include "cli/sim_commands.h"

namespace gpumeter::cli {

void AddDemoCommand(CLI::App& app, app::DemoOptions& o) {
  auto* cmd = app.add_subcommand(
      "demo", "Run the agent on a simulated node (fake NVML); no GPU or cluster needed");
  cmd->add_option("--scenario", o.scenario, "Bundled scenario NAME or a scenario FILE")
      ->capture_default_str();
  cmd->add_option("--scenario-dir", o.scenario_dir,
                  "Extra directory to search for bundled scenarios");
  cmd->add_option("--nvml-library", o.nvml_library,
                  "NVML library to load (default: the bundled fake)");
  cmd->add_option("--driver-profile", o.driver_profile, "Fake driver release to emulate")
      ->check(CLI::IsMember({"r580", "r535_43", "r470", "r418"}))
      ->capture_default_str();
  AddDurationOption(cmd, "--duration", o.duration, "Stop after this long (0: run until Ctrl-C)",
                    Seconds(0), Seconds(365 * 86400));
  AddDurationOption(cmd, "--refresh", o.refresh, "Print the table this often", Seconds(0.01),
                    Seconds(86400));
  AddSamplingFlags(cmd, o.interval, o.call_deadline, o.drain_interval);
  AddContainerSeriesFlag(cmd, o.full_container_series);
  cmd->add_option("--speedup", o.speedup,
                  "Scenario seconds per real second (above 1, the scenario's clock starts "
                  "--duration x (speedup - 1) in the past and ends now)")
      ->check(CLI::Range(0.01, 1000.0))
      ->capture_default_str();
  cmd->add_option("--listen", o.listen, "HOST:PORT for /metrics (port 0: any free port)")
      ->capture_default_str();
  cmd->add_option("--probe-listen", o.probe_listen,
                  "HOST:PORT for /healthz and /readyz on an event-driven listener of their own, "
                  "answered however many connections sit idle on either port (docs/deploy.md)");
  cmd->add_option(
      "--store", o.store,
      "Write usage to this SQLite store (kept; default: a temporary one) for `gpumeter report`");
  cmd->add_option("--pricing", o.pricing_file,
                  "Pricing file for the closing chargeback and idle findings (default: the dated "
                  "default table)");
  AddPolicyFlags(cmd, o.policy);
  cmd->add_option("--guard-config", o.guard_config,
                  "Guardrail thresholds and severities (default: the agent's, idle window 3m)");
  AddDurationOption(cmd, "--shutdown-grace", o.shutdown_grace,
                    "On stop, serve the final counters this long after sampling ends", Seconds(0),
                    Seconds(300));
}

}  // namespace gpumeter::cli
