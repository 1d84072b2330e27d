// gpumeter-fake-kubelet: serves a scenario's allocations as the kubelet's PodResources API on a
// unix socket until SIGTERM or SIGINT. The demo starts it as a child process, so that the gpumeter
// binary itself carries no fake. With DCGM_URL_FILE, and GPUs with `dcgm_exporter: true` in the
// scenario, it also serves their dcgm-exporter page on a loopback port and writes its URL to that
// file; its scenario clock is the fake NVML's (GPUMETER_FAKE_NVML_EPOCH_US, _SPEEDUP, _START_S).
// Usage: gpumeter-fake-kubelet SCENARIO_FILE SOCKET [DCGM_URL_FILE]
#include <fmt/format.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "sim/fake_kubelet/fake_dcgm_exporter.h"
#include "sim/fake_kubelet/simulated_node.h"
#include "sim/node/dcgm_page.h"
#include "sim/scenario/loader.h"

namespace {

double EnvDouble(const char* name, double def) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtod(v, nullptr) : def;
}

// Scenario time as the demo's fake NVML counts it: since its epoch, at its speedup.
double ScenarioNow() {
  const double epoch_s = EnvDouble("GPUMETER_FAKE_NVML_EPOCH_US", 0) / 1e6;
  const double now_s =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  return EnvDouble("GPUMETER_FAKE_NVML_START_S", 0) +
         (epoch_s > 0 ? now_s - epoch_s : 0) * EnvDouble("GPUMETER_FAKE_NVML_SPEEDUP", 1);
}

// Serves the scenario's dcgm-exporter page and writes its URL to `url_file`; false on failure.
bool ServeDcgm(const gpumeter::scenario::Scenario& s, gpumeter::sim::FakeDcgmExporter& exporter,
               const char* url_file) {
  if (auto started = exporter.Start(s, ScenarioNow, "127.0.0.1"); !started) {
    fmt::print(stderr, "{}\n", started.error().message);
    return false;
  }
  std::ofstream out(url_file);
  out << exporter.url() << "\n";
  if (!out.flush()) {
    fmt::print(stderr, "cannot write {}\n", url_file);
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    fmt::print(stderr, "usage: {} SCENARIO_FILE SOCKET [DCGM_URL_FILE]\n", argv[0]);
    return 2;
  }
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before gRPC starts its threads
  auto scenario = gpumeter::scenario::LoadScenarioFile(argv[1]);
  if (!scenario) {
    fmt::print(stderr, "{}\n", scenario.error().message);
    return 2;
  }
  gpumeter::kubelet::FakeKubelet kubelet;
  kubelet.SetPods(gpumeter::sim::ScenarioFakePods(*scenario));
  if (auto started = kubelet.Start(argv[2]); !started) {
    fmt::print(stderr, "{}\n", started.error().message);
    return 1;
  }
  gpumeter::sim::FakeDcgmExporter exporter;
  if (argc == 4 && gpumeter::sim::HasDcgmExporter(*scenario) &&
      !ServeDcgm(*scenario, exporter, argv[3])) {
    kubelet.Stop();
    return 1;
  }
  fmt::print("serving {}\n", argv[2]);
  std::fflush(stdout);
  int received = 0;
  while (sigwait(&signals, &received) != 0) {
  }
  exporter.Stop();
  kubelet.Stop();
  return 0;
}
