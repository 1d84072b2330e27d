// `gpumeter simulate`: the accuracy harness. Steps the fake NVML's clock through a scenario,
// runs the real pipeline (NVML source → observations → attribution) each interval, and scores
// per-container memory and compute against the scenario's ground truth, per sharing mode, next
// to what naive device-level labelling (every holder gets the device value) would report.
#pragma once

#include <string>

namespace gpumeter::app {

struct SimulateOptions {
  std::string scenario = "node-8gpu";
  std::string scenario_dir;
  std::string nvml_library;
  std::string driver_profile = "r580";
  double step_s = 1;
  double from_s = 0;
  double to_s = 0;                // 0: the scenario's duration
  std::string noise = "default";  // "default" or "none"
  uint64_t seed = 1;
};

int RunSimulate(const SimulateOptions& options, const std::string& argv0);

}  // namespace gpumeter::app
