// `gpumeter probe`: its flags, into app::ProbeOptions (src/app/diagnose/probe.h).
#include <CLI/CLI.hpp>

#include "app/diagnose/probe.h"
#include "cli/commands.h"

namespace gpumeter::cli {

void AddProbeCommand(CLI::App& app, app::ProbeOptions& o) {
  auto* cmd = app.add_subcommand(
      "probe", "Load NVML, sample every GPU twice, print what the driver returned (JSON)");
  cmd->add_option("--nvml-library", o.nvml_library,
                  "NVML library to load (default: libnvidia-ml.so.1)");
  AddDurationOption(cmd, "--interval", o.interval, "Time between the two samples", Seconds(0.2),
                    Seconds(30));
}

}  // namespace gpumeter::cli
