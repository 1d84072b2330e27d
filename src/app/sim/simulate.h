// `gpumeter simulate`: the accuracy harness. Steps the fake NVML's clock through a scenario and,
// at each sample, runs the agent's production path — NodePipeline over the simulated node's
// kubelet (PodResources over gRPC), pods file, ResourceSlices file and /proc tree, and the fake
// NVML loaded as the real library — then scores per-container memory, compute and energy against
// the scenario's ground truth, per sharing mode, next to what naive device-level labelling (every
// holder gets the device value) would report (sim/score/simulate_score.h says what is
// scored how; sinks/sim/score_report.h prints it).
#pragma once

#include <string>
#include <vector>

namespace gpumeter::app {

struct SimulateOptions {
  std::string scenario = "node-8gpu";
  std::string scenario_dir;
  std::string nvml_library;
  std::string driver_profile = "r580";
  double step_s = 1;
  // As the agent's --drain-interval: with a longer step, the NVML source's buffers are drained
  // this often between passes (from each pass's time). 0: never.
  double drain_s = 5;
  double from_s = 0;
  double to_s = 0;                // 0: the scenario's duration
  std::string noise = "default";  // "default" or "none"
  uint64_t seed = 1;
  std::string format = "table";         // "table" or "json" (the scores as one JSON document)
  std::vector<std::string> idle_power;  // MODEL_OR_UUID=WATTS, as the agent's --idle-power
  bool dcgm_exporter = true;  // false: as if no GPU had `dcgm_exporter: true` (not deployed)
};

int RunSimulate(const SimulateOptions& options, const std::string& argv0);

}  // namespace gpumeter::app
