// The files a scenario's node shows the agent's Kubernetes sources: the API server's PodList as a
// pods file, its ResourceSlices as a file and a /proc tree, in a directory (a fresh temporary one,
// removed with the object, or a given one, left in place). The kubelet socket's path is named here
// too; who serves it is the caller's choice (an in-process FakeKubelet in tests, the
// gpumeter-fake-kubelet process in the demo). Not thread-safe; RefreshProc is meant for the
// sampling thread.
#pragma once

#include <filesystem>
#include <memory>

#include "common/error.h"
#include "sim/scenario/model.h"

namespace gpumeter::sim {

class NodeFiles {
 public:
  // `scenario` must outlive the object. Writes the pods file and the /proc tree at time 0.
  static Expected<std::unique_ptr<NodeFiles>> Create(const scenario::Scenario& scenario,
                                                     const std::filesystem::path& dir = {});
  ~NodeFiles();
  NodeFiles(const NodeFiles&) = delete;
  NodeFiles& operator=(const NodeFiles&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path proc_root() const { return dir_ / "proc"; }
  std::filesystem::path pods_file() const { return dir_ / "pods.json"; }
  // The node's ResourceSliceList, as the API server would list it (written at Create).
  std::filesystem::path resource_slices_file() const { return dir_ / "resourceslices.json"; }
  // The Node object (scenario node_object); not written when the scenario has none.
  std::filesystem::path node_file() const { return dir_ / "node.json"; }
  std::string kubelet_socket() const { return (dir_ / "kubelet.sock").string(); }

  // Makes the /proc tree hold exactly the processes alive at scenario time `t_s`.
  Expected<void> RefreshProc(double t_s);

 private:
  explicit NodeFiles(const scenario::Scenario& s) : scenario_(s) {}
  const scenario::Scenario& scenario_;
  std::filesystem::path dir_;
  bool owns_dir_ = false;
};

}  // namespace gpumeter::sim
