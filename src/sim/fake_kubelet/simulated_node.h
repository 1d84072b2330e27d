// The Kubernetes side of a scenario, stood up in-process for tests: its NodeFiles (pods file,
// /proc tree) and a FakeKubelet serving the scenario's allocations over gRPC on the node's socket.
// Not thread-safe; RefreshProc is meant for the sampling thread.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "sim/fake_kubelet/fake_kubelet.h"
#include "sim/node/node_files.h"
#include "sim/scenario/model.h"

namespace gpumeter::sim {

// What the kubelet would list for the scenario's pods: each pod with its containers' devices.
std::vector<kubelet::FakePod> ScenarioFakePods(const scenario::Scenario& s);

class SimulatedNode {
 public:
  // `scenario` must outlive the node. With an empty `dir` a fresh temporary directory is made
  // and removed with the node; a given `dir` is created if needed and left in place.
  static Expected<std::unique_ptr<SimulatedNode>> Create(const scenario::Scenario& scenario,
                                                         const std::filesystem::path& dir = {});
  ~SimulatedNode();
  SimulatedNode(const SimulatedNode&) = delete;
  SimulatedNode& operator=(const SimulatedNode&) = delete;

  const std::filesystem::path& dir() const { return files_->dir(); }
  std::filesystem::path proc_root() const { return files_->proc_root(); }
  std::filesystem::path pods_file() const { return files_->pods_file(); }
  std::string kubelet_socket() const { return files_->kubelet_socket(); }

  // Makes the /proc tree hold exactly the processes alive at scenario time `t_s`.
  Expected<void> RefreshProc(double t_s) { return files_->RefreshProc(t_s); }

 private:
  SimulatedNode() = default;
  std::unique_ptr<NodeFiles> files_;
  kubelet::FakeKubelet kubelet_;
};

}  // namespace gpumeter::sim
