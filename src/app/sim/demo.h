// `gpumeter demo`: the agent on a simulated node, through the production path for every source:
// the fake libnvidia-ml.so.1 loaded through the same dlopen path as the driver's, a fake kubelet
// serving the scenario's allocations over gRPC on a unix socket, a pods file and a /proc tree
// built from the scenario. It prints a refreshed table (processes by pod, each unit's holders,
// mode and shares) and serves /metrics until --duration passes or Ctrl-C.
#pragma once

#include <string>

#include "common/duration.h"
#include "core/cost/allocate.h"

namespace gpumeter::app {

struct DemoOptions {
  std::string scenario = "node-8gpu";
  std::string scenario_dir;  // extra directory searched for bundled scenarios
  std::string nvml_library;  // default: the fake library built next to the binary
  std::string driver_profile = "r580";
  Seconds duration{30};  // 0: until a signal
  Seconds refresh{5};
  Seconds interval{1};
  Seconds call_deadline{2};
  // Between passes longer than this, the driver's sample buffers are read (they hold ~10 s), so a
  // long interval loses none of its per-process or power samples. 0: never.
  Seconds drain_interval{5};
  double speedup = 1;
  std::string listen = "127.0.0.1:9402";
  std::string probe_listen;  // HOST:PORT of the probe listener; empty: none
  std::string store;         // usage store; default: one in the demo's temporary directory
  std::string pricing_file;  // for the closing chargeback and idle findings (default: the dated
                             // default table)
  std::string guard_config;  // guardrails (default: the agent's, with a 3-minute idle window to fit
                             // the scenario)
  cost::Policy policy;       // gpumeter_cost_total and the closing chargeback (--policy, --idle)
  Seconds shutdown_grace{0};  // keep serving the final counters this long after sampling stops
  // --container-series full: the full set of per-owner series; by default the agent's default set.
  bool full_container_series = false;
};

// Runs the demo; returns the process exit code (0 ok, 1 runtime failure, 2 bad input).
int RunDemo(const DemoOptions& options, const std::string& argv0);

}  // namespace gpumeter::app
