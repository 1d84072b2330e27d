// A scenario's node for the agent's end-to-end test: a fake kubelet on DIR/kubelet.sock, the
// pods in DIR/pods.json and the live processes in DIR/proc, refreshed every 100 ms at scenario
// time START + elapsed (the fake NVML's clock with GPUMETER_FAKE_NVML_START_S=START). Runs until
// SIGTERM/SIGINT. Usage: gpumeter_fake_node SCENARIO_FILE DIR START_S
#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <cstdlib>

#include "app/runtime.h"
#include "sim/fake_kubelet/simulated_node.h"
#include "sim/scenario/loader.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    fmt::print(stderr, "usage: {} SCENARIO_FILE DIR START_S\n", argv[0]);
    return 2;
  }
  auto scen = gpumeter::scenario::LoadScenarioFile(argv[1]);
  if (!scen) {
    fmt::print(stderr, "{}\n", scen.error().message);
    return 2;
  }
  const double start_s = std::strtod(argv[3], nullptr);
  const auto signals = gpumeter::app::BlockStopSignals();
  auto node = gpumeter::sim::SimulatedNode::Create(*scen, argv[2]);
  if (!node) {
    fmt::print(stderr, "{}\n", node.error().message);
    return 1;
  }
  const auto t0 = std::chrono::steady_clock::now();
  fmt::print("serving {}\n", (*node)->kubelet_socket());
  std::fflush(stdout);
  while (gpumeter::app::WaitForSignal(signals, std::chrono::milliseconds(100)) == 0) {
    const double t =
        start_s + std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (auto r = (*node)->RefreshProc(t); !r) fmt::print(stderr, "{}\n", r.error().message);
  }
  return 0;
}
