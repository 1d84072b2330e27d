#include "sim/fake_kubelet/simulated_node.h"

#include <map>

#include "sim/node/scenario_context.h"

namespace gpumeter::sim {

std::vector<kubelet::FakePod> ScenarioFakePods(const scenario::Scenario& s) {
  std::map<std::pair<std::string, std::string>, kubelet::FakePod> by_pod;
  for (auto& a : ScenarioAllocations(s)) {
    auto& pod = by_pod[{a.ns, a.pod}];
    pod.ns = a.ns;
    pod.name = a.pod;
    pod.containers.push_back(std::move(a));
  }
  std::vector<kubelet::FakePod> pods;
  for (auto& [k, p] : by_pod) pods.push_back(std::move(p));
  return pods;
}

Expected<std::unique_ptr<SimulatedNode>> SimulatedNode::Create(const scenario::Scenario& s,
                                                               const std::filesystem::path& dir) {
  std::unique_ptr<SimulatedNode> node(new SimulatedNode());
  auto files = NodeFiles::Create(s, dir);
  if (!files) return tl::unexpected(files.error());
  node->files_ = std::move(*files);
  node->kubelet_.SetPods(ScenarioFakePods(s));
  if (auto started = node->kubelet_.Start(node->kubelet_socket()); !started)
    return tl::unexpected(started.error());
  return node;
}

SimulatedNode::~SimulatedNode() { kubelet_.Stop(); }

}  // namespace gpumeter::sim
