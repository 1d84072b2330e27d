#include "sim/node/simulated_node.h"

#include <cstdlib>
#include <fstream>
#include <map>

#include "sim/node/scenario_context.h"
#include "sim/node/scenario_fixture.h"

namespace gpumeter::sim {

Expected<std::unique_ptr<SimulatedNode>> SimulatedNode::Create(const scenario::Scenario& s,
                                                               const std::filesystem::path& dir) {
  std::unique_ptr<SimulatedNode> node(new SimulatedNode(s));
  if (dir.empty()) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpumeter-demo-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
      return MakeError(ErrorCode::kUnavailable, tmpl + ": cannot create a temporary directory");
    node->dir_ = tmpl;
    node->owns_dir_ = true;
  } else {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return MakeError(ErrorCode::kUnavailable, dir.string() + ": " + ec.message());
    node->dir_ = dir;
  }

  std::ofstream pods(node->pods_file());
  pods << ScenarioPodListJson(s);
  if (!pods.flush())
    return MakeError(ErrorCode::kUnavailable, node->pods_file().string() + ": cannot write");

  // The kubelet reports pods with their containers' devices.
  std::map<std::pair<std::string, std::string>, kubelet::FakePod> by_pod;
  for (auto& a : ScenarioAllocations(s)) {
    auto& pod = by_pod[{a.ns, a.pod}];
    pod.ns = a.ns;
    pod.name = a.pod;
    pod.containers.push_back(std::move(a));
  }
  std::vector<kubelet::FakePod> fake_pods;
  for (auto& [k, p] : by_pod) fake_pods.push_back(std::move(p));
  node->kubelet_.SetPods(std::move(fake_pods));
  if (auto started = node->kubelet_.Start(node->kubelet_socket()); !started)
    return tl::unexpected(started.error());
  if (auto proc = node->RefreshProc(0); !proc) return tl::unexpected(proc.error());
  return node;
}

SimulatedNode::~SimulatedNode() {
  kubelet_.Stop();
  std::error_code ec;
  if (owns_dir_) std::filesystem::remove_all(dir_, ec);
}

Expected<void> SimulatedNode::RefreshProc(double t_s) {
  return WriteProcFixture(proc_root(), scenario_, t_s);
}

}  // namespace gpumeter::sim
