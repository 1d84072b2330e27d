// gpumeter-fake-kubelet: serves a scenario's allocations as the kubelet's PodResources API on a
// unix socket until SIGTERM or SIGINT. The demo starts it as a child process, so that the gpumeter
// binary itself carries no fake. Usage: gpumeter-fake-kubelet SCENARIO_FILE SOCKET
#include <fmt/format.h>
#include <signal.h>

#include <cstdio>

#include "sim/fake_kubelet/simulated_node.h"
#include "sim/scenario/loader.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    fmt::print(stderr, "usage: {} SCENARIO_FILE SOCKET\n", argv[0]);
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
  fmt::print("serving {}\n", argv[2]);
  std::fflush(stdout);
  int received = 0;
  while (sigwait(&signals, &received) != 0) {
  }
  kubelet.Stop();
  return 0;
}
