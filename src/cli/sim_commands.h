// The simulated node's subcommands, demo and simulate: their flags into the options of
// app/demo.h and app/simulate.h. Linked into `gpumeter`, not into `gpumeter-agent-only`.
#pragma once

#include <CLI/CLI.hpp>

#include "app/sim/demo.h"
#include "app/sim/simulate.h"

namespace gpumeter::cli {

void AddDemoCommand(CLI::App& app, app::DemoOptions& options);
void AddSimulateCommand(CLI::App& app, app::SimulateOptions& options);

}  // namespace gpumeter::cli
