// The Kubernetes side of a scenario, stood up for real so the demo runs the production sources:
// a fake kubelet serving the scenario's allocations over gRPC on a unix socket, a PodList file
// with its pods, and a /proc tree of its live processes, all in a fresh temporary directory that
// is removed with the object. Not thread-safe; RefreshProc is meant for the sampling thread.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "common/error.h"
#include "sim/fake_kubelet/fake_kubelet.h"
#include "sim/scenario/model.h"

namespace gpumeter::sim {

class SimulatedNode {
 public:
  // `scenario` must outlive the node. With an empty `dir` a fresh temporary directory is made
  // and removed with the node; a given `dir` is created if needed and left in place.
  static Expected<std::unique_ptr<SimulatedNode>> Create(const scenario::Scenario& scenario,
                                                         const std::filesystem::path& dir = {});
  ~SimulatedNode();
  SimulatedNode(const SimulatedNode&) = delete;
  SimulatedNode& operator=(const SimulatedNode&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path proc_root() const { return dir_ / "proc"; }
  std::filesystem::path pods_file() const { return dir_ / "pods.json"; }
  std::string kubelet_socket() const { return (dir_ / "kubelet.sock").string(); }

  // Makes the /proc tree hold exactly the processes alive at scenario time `t_s`.
  Expected<void> RefreshProc(double t_s);

 private:
  explicit SimulatedNode(const scenario::Scenario& s) : scenario_(s) {}
  const scenario::Scenario& scenario_;
  std::filesystem::path dir_;
  bool owns_dir_ = false;
  kubelet::FakeKubelet kubelet_;
};

}  // namespace gpumeter::sim
