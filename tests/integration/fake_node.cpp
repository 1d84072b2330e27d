// A scenario's node for the agent's end-to-end test: a fake kubelet on DIR/kubelet.sock, the
// pods in DIR/pods.json and the live processes in DIR/proc, refreshed every 100 ms at scenario
// time START + elapsed (the fake NVML's clock with GPUMETER_FAKE_NVML_START_S=START); where the
// scenario has GPUs with `dcgm_exporter: true`, their dcgm-exporter page on a loopback port on the
// same clock, its URL in DIR/dcgm.url. Runs until SIGTERM/SIGINT.
// Usage: gpumeter_fake_node SCENARIO_FILE DIR START_S
#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "app/agent/runtime.h"
#include "sim/fake_kubelet/fake_dcgm_exporter.h"
#include "sim/fake_kubelet/simulated_node.h"
#include "sim/node/dcgm_page.h"
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
  const auto now = [t0, start_s] {
    return start_s + std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  gpumeter::sim::FakeDcgmExporter exporter;
  if (gpumeter::sim::HasDcgmExporter(*scen)) {
    if (auto started = exporter.Start(*scen, now, "127.0.0.1"); !started) {
      fmt::print(stderr, "{}\n", started.error().message);
      return 1;
    }
    std::ofstream url(std::filesystem::path(argv[2]) / "dcgm.url");
    url << exporter.url() << "\n";
    if (!url.flush()) {
      fmt::print(stderr, "cannot write {}/dcgm.url\n", argv[2]);
      return 1;
    }
  }
  fmt::print("serving {}\n", (*node)->kubelet_socket());
  std::fflush(stdout);
  while (gpumeter::app::WaitForSignal(signals, std::chrono::milliseconds(100)) == 0) {
    if (auto r = (*node)->RefreshProc(now()); !r) fmt::print(stderr, "{}\n", r.error().message);
  }
  return 0;
}
