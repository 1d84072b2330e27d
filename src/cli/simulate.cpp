// `gpumeter simulate`: its flags, into app::SimulateOptions (src/app/sim/simulate.h).
#include <CLI/CLI.hpp>

#include "app/sim/simulate.h"
#include "cli/commands.h"
#include "cli/sim_commands.h"

namespace gpumeter::cli {

void AddSimulateCommand(CLI::App& app, app::SimulateOptions& o) {
  auto* cmd = app.add_subcommand("simulate",
                                 "Score attribution against a scenario's ground truth (fake NVML)");
  cmd->add_option("--scenario", o.scenario, "Bundled scenario NAME or a scenario FILE")
      ->capture_default_str();
  cmd->add_option("--scenario-dir", o.scenario_dir,
                  "Extra directory to search for bundled scenarios");
  cmd->add_option("--nvml-library", o.nvml_library, "Fake NVML library (default: the bundled one)");
  cmd->add_option("--driver-profile", o.driver_profile, "Fake driver release to emulate")
      ->check(CLI::IsMember({"r580", "r535_43", "r470", "r418"}))
      ->capture_default_str();
  AddDurationOption(cmd, "--step", o.step_s, "Sampling interval in scenario time", Seconds(0.2),
                    Seconds(60));
  AddDurationOption(cmd, "--drain-interval", o.drain_s,
                    "As the agent's: drain NVML's sample buffers this often between passes when "
                    "the step is longer (0: only at each pass)",
                    Seconds(0), Seconds(60));
  AddDurationOption(cmd, "--from", o.from_s, "Start at this scenario time", Seconds(0),
                    Seconds(30 * 86400));
  AddDurationOption(cmd, "--to", o.to_s, "Stop at this scenario time (0: the scenario's duration)",
                    Seconds(0), Seconds(30 * 86400));
  cmd->add_option("--noise", o.noise,
                  "Sampling noise: default (jitter ±10 % of a step, 3 % dropped, 2 % half a step "
                  "late) or none")
      ->check(CLI::IsMember({"default", "none"}))
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed of the noise")->capture_default_str();
  cmd->add_option("--idle-power", o.idle_power,
                  "MODEL_OR_UUID=WATTS idle power, as the agent's flag (else fitted, or the "
                  "board's power while nothing ran)");
  cmd->add_flag_callback(
      "--no-dcgm-exporter", [&o] { o.dcgm_exporter = false; },
      "Simulate the node without dcgm-exporter, whatever the scenario says (MIG "
      "activity on GPUs without GPM is then unknown)");
  cmd->add_option("--format", o.format,
                  "Output: table, or json (per mode and per container; the log on stderr)")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
}

}  // namespace gpumeter::cli
