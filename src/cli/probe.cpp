// `gpumeter probe`: its flags, into app::ProbeOptions (src/app/diagnose/probe.h).
#include <CLI/CLI.hpp>

#include "app/diagnose/probe.h"
#include "cli/commands.h"

namespace gpumeter::cli {

void AddProbeCommand(CLI::App& app, app::ProbeOptions& o) {
  auto* cmd = app.add_subcommand(
      "probe",
      "Load NVML, sample every GPU (twice by default), print what the driver returned (JSON)");
  cmd->add_option("--nvml-library", o.nvml_library,
                  "NVML library to load (default: libnvidia-ml.so.1)");
  AddDurationOption(cmd, "--interval", o.interval, "Time between samples", Seconds(0.2),
                    Seconds(30));
  cmd->add_option("--samples", o.samples, "How many samples to take")
      ->check(CLI::Range(2, 3600))
      ->capture_default_str();
}

}  // namespace gpumeter::cli
