#include "app/scenario_node.h"

#include "sim/node/scenario_context.h"

namespace gpumeter::app {

Expected<std::unique_ptr<ScenarioNode>> ScenarioNode::Start(const LoadedScenario& loaded,
                                                            const std::filesystem::path& exe_dir) {
  std::unique_ptr<ScenarioNode> node(new ScenarioNode(loaded));
  auto files = sim::NodeFiles::Create(loaded.scenario);
  if (!files) return tl::unexpected(files.error());
  node->files_ = std::move(*files);
  const std::string program = FakeKubeletProgram(exe_dir);
  if (program.empty())
    return MakeError(ErrorCode::kUnavailable,
                     "gpumeter-fake-kubelet not found next to " + exe_dir.string() +
                         " (build it: cmake --build BUILD --target gpumeter_fake_kubelet_server)");
  const std::string socket = node->files_->kubelet_socket();
  auto kubelet = ChildProcess::Start(program, {loaded.path, socket});
  if (!kubelet) return tl::unexpected(kubelet.error());
  node->kubelet_process_ = std::move(*kubelet);
  auto ready = node->kubelet_process_->WaitUntil(
      [&socket] {
        std::error_code ec;
        return std::filesystem::exists(socket, ec);
      },
      std::chrono::seconds(10));
  if (!ready) return tl::unexpected(ready.error());
  kubelet::PodResourcesOptions ko;
  ko.socket_path = socket;
  node->kubelet_ = std::make_unique<kubelet::PodResourcesSource>(
      std::make_unique<kubelet::PodResourcesClient>(ko));
  node->pods_ = std::make_unique<kube_api::PodsFileSource>(node->files_->pods_file());
  node->slices_ =
      std::make_unique<kube_api::SlicesFileSource>(node->files_->resource_slices_file());
  return node;
}

node::PipelineSources ScenarioNode::sources() {
  return {kubelet_.get(), pods_.get(), slices_.get()};
}

node::PipelineOptions ScenarioNode::pipeline_options() const {
  node::PipelineOptions po;
  po.node = loaded_.scenario.node_name;
  po.proc_root = files_->proc_root();
  // The operator's sharing configuration (as --sharing would give it); MIG parents come from NVML.
  po.evidence = sim::ScenarioSharingEvidence(loaded_.scenario);
  po.evidence.mig_parent.clear();
  return po;
}

}  // namespace gpumeter::app
