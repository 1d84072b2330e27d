// `gpumeter probe`: its flags, into app::ProbeOptions (src/app/probe.h).
#include <CLI/CLI.hpp>

#include "app/probe.h"
#include "cli/commands.h"

namespace gpumeter::cli {

void AddProbeCommand(CLI::App& app, app::ProbeOptions& o) {
  auto* cmd = app.add_subcommand(
      "probe", "Load NVML, sample every GPU twice, print what the driver returned (JSON)");
  cmd->add_option("--nvml-library", o.nvml_library,
                  "NVML library to load (default: libnvidia-ml.so.1)");
  cmd->add_option("--interval", o.interval_s, "Seconds between the two samples")
      ->check(CLI::Range(0.2, 30.0))
      ->capture_default_str();
}

}  // namespace gpumeter::cli
