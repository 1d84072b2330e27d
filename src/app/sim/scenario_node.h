// A scenario's node as `gpumeter demo` and `gpumeter simulate` both stand it up, so that both run
// the agent's production sources: the node's files (pods file, /proc tree, ResourceSlices file),
// the gpumeter-fake-kubelet process serving PodResources on the node's socket (the gpumeter binary
// links no fake), and over them the agent's own sources — the PodResources client, the pods-file
// source and the ResourceSlices-file source — with the pipeline options the node implies.
// Not thread-safe; RefreshProc is meant for the sampling thread. Owns everything it starts.
#pragma once

#include <filesystem>
#include <memory>

#include "app/sim/child_process.h"
#include "app/sim/paths.h"
#include "common/error.h"
#include "node/pipeline/pipeline.h"
#include "sim/node/node_files.h"
#include "sources/kubelet/pod_resources_source.h"
#include "sources/node/node_source.h"
#include "sources/pods/pod_source.h"
#include "sources/slices/slices_file_source.h"

namespace gpumeter::app {

class ScenarioNode {
 public:
  // Writes the node's files (in a fresh temporary directory, removed with the object) and starts
  // the fake kubelet found next to `exe_dir`; returns once its socket exists. `loaded` must
  // outlive the node. Errors name the program or path.
  static Expected<std::unique_ptr<ScenarioNode>> Start(const LoadedScenario& loaded,
                                                       const std::filesystem::path& exe_dir);
  ScenarioNode(const ScenarioNode&) = delete;
  ScenarioNode& operator=(const ScenarioNode&) = delete;

  // The agent's sources over the node (borrowed: valid while the node lives).
  node::PipelineSources sources();
  // The node's name, /proc root and the operator's sharing configuration (MIG parents come from
  // NVML each pass, as on a real node).
  node::PipelineOptions pipeline_options() const;
  const sim::NodeFiles& files() const { return *files_; }
  // The node process's dcgm-exporter page; empty when the scenario has none (dcgm_exporter).
  const std::string& dcgm_url() const { return dcgm_url_; }
  // Makes the /proc tree hold exactly the processes alive at scenario time `t_s`.
  Expected<void> RefreshProc(double t_s) { return files_->RefreshProc(t_s); }

 private:
  explicit ScenarioNode(const LoadedScenario& loaded) : loaded_(loaded) {}
  const LoadedScenario& loaded_;
  std::unique_ptr<sim::NodeFiles> files_;
  std::unique_ptr<ChildProcess> kubelet_process_;
  std::unique_ptr<kubelet::PodResourcesSource> kubelet_;
  std::unique_ptr<kube_api::PodsFileSource> pods_;
  std::unique_ptr<kube_api::SlicesFileSource> slices_;
  std::unique_ptr<kube_api::NodeFileSource> node_;  // null: the scenario has no node_object
  std::string dcgm_url_;
};

}  // namespace gpumeter::app
