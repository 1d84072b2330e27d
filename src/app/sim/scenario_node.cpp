#include "app/sim/scenario_node.h"

#include <fstream>

#include "sim/node/dcgm_page.h"
#include "sim/node/scenario_context.h"

namespace gpumeter::app {
namespace {

// Waits for the node process to write its dcgm-exporter's URL into `file`.
Expected<std::string> WaitForDcgmUrl(ChildProcess& node, const std::filesystem::path& file) {
  std::string url;
  auto ready = node.WaitUntil(
      [&] {
        std::ifstream in(file);
        return static_cast<bool>(std::getline(in, url)) && !url.empty();
      },
      std::chrono::seconds(10));
  if (!ready) return tl::unexpected(ready.error());
  return url;
}

}  // namespace

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
  // With `dcgm_exporter: true` the node process also serves a dcgm-exporter page and writes its
  // URL into a file.
  const bool dcgm = sim::HasDcgmExporter(loaded.scenario);
  const auto dcgm_file = node->files_->dir() / "dcgm-exporter.url";
  auto kubelet = ChildProcess::Start(
      program, dcgm ? std::vector<std::string>{loaded.path, socket, dcgm_file.string()}
                    : std::vector<std::string>{loaded.path, socket});
  if (!kubelet) return tl::unexpected(kubelet.error());
  node->kubelet_process_ = std::move(*kubelet);
  auto ready = node->kubelet_process_->WaitUntil(
      [&socket] {
        std::error_code ec;
        return std::filesystem::exists(socket, ec);
      },
      std::chrono::seconds(10));
  if (!ready) return tl::unexpected(ready.error());
  if (dcgm) {
    auto url = WaitForDcgmUrl(*node->kubelet_process_, dcgm_file);
    if (!url) return tl::unexpected(url.error());
    node->dcgm_url_ = *url;
  }
  kubelet::PodResourcesOptions ko;
  ko.socket_path = socket;
  node->kubelet_ = std::make_unique<kubelet::PodResourcesSource>(
      std::make_unique<kubelet::PodResourcesClient>(ko));
  node->pods_ = std::make_unique<kube_api::PodsFileSource>(node->files_->pods_file());
  node->slices_ =
      std::make_unique<kube_api::SlicesFileSource>(node->files_->resource_slices_file());
  if (loaded.scenario.node_object)
    node->node_ = std::make_unique<kube_api::NodeFileSource>(node->files_->node_file(),
                                                             loaded.scenario.node_name);
  return node;
}

node::PipelineSources ScenarioNode::sources() {
  return {kubelet_.get(), pods_.get(), slices_.get(), nullptr, node_.get()};
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
