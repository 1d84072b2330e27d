#include "cli/scenario_fixture.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "scenario/truth.h"

namespace gpumeter::cli {
namespace {

constexpr double kClockTicksPerSecond = 100;  // USER_HZ on Linux

std::string Underscored(std::string uid) {
  for (auto& ch : uid)
    if (ch == '-') ch = '_';
  return uid;
}

std::string BareId(const std::string& id) {
  const auto sep = id.find("://");
  return sep == std::string::npos ? id : id.substr(sep + 3);
}

std::string Lower(std::string qos) {
  for (auto& ch : qos) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return qos;
}

}  // namespace

std::string ScenarioCgroupPath(const scenario::Pod& pod, const scenario::Container& c) {
  const std::string uid = Underscored(pod.uid);
  const std::string leaf = "/cri-containerd-" + BareId(c.id) + ".scope";
  if (pod.qos == "Guaranteed") return "/kubepods.slice/kubepods-pod" + uid + ".slice" + leaf;
  const std::string q = Lower(pod.qos);
  return "/kubepods.slice/kubepods-" + q + ".slice/kubepods-" + q + "-pod" + uid + ".slice" + leaf;
}

std::string ScenarioPodListJson(const scenario::Scenario& s) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& pod : s.pods) {
    nlohmann::json containers = nlohmann::json::array(), statuses = nlohmann::json::array();
    for (const auto& c : pod.containers) {
      containers.push_back({{"name", c.name}, {"resources", {{"limits", c.requests}}}});
      statuses.push_back({{"name", c.name}, {"containerID", c.id}, {"ready", true}});
    }
    items.push_back({{"metadata", {{"name", pod.name}, {"namespace", pod.ns}, {"uid", pod.uid}, {"labels", pod.labels}}},
                     {"spec", {{"nodeName", s.node_name}, {"containers", containers}}},
                     {"status", {{"phase", "Running"}, {"qosClass", pod.qos}, {"containerStatuses", statuses}}}});
  }
  return nlohmann::json{{"kind", "PodList"}, {"apiVersion", "v1"}, {"metadata", {{"resourceVersion", "1"}}}, {"items", items}}.dump();
}

Expected<void> WriteProcFixture(const std::filesystem::path& root, const scenario::Scenario& s, double t_s) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) return MakeError(ErrorCode::kUnavailable, root.string() + ": " + ec.message());
  std::set<std::string> live;
  for (const auto& p : s.processes) {
    if (!scenario::IsAlive(p, t_s)) continue;
    const auto dir = root / std::to_string(p.pid);
    live.insert(dir.filename().string());
    fs::create_directories(dir, ec);
    if (ec) return MakeError(ErrorCode::kUnavailable, dir.string() + ": " + ec.message());
    std::string cgroup = "/system.slice/" + p.name + ".service";
    if (p.container) {
      const auto* pod = s.FindPod(p.container->ns, p.container->pod);
      if (pod)
        for (const auto& c : pod->containers)
          if (c.name == p.container->container) cgroup = ScenarioCgroupPath(*pod, c);
    }
    const auto start = static_cast<long long>(std::llround(p.start_s * kClockTicksPerSecond)) + 1;
    std::ofstream stat(dir / "stat");
    stat << p.pid << " (" << p.name << ") S 1 " << p.pid << " " << p.pid << " 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 " << start
         << " 0 0\n";
    std::ofstream cg(dir / "cgroup");
    cg << "0::" << cgroup << "\n";
    // A real environment has more than the GPU variables; the reader must drop the rest.
    std::ofstream env(dir / "environ", std::ios::binary);
    env << "PATH=/usr/local/bin:/usr/bin" << '\0';
    for (const auto& [k, v] : p.env) env << k << '=' << v << '\0';
    if (!stat || !cg || !env) return MakeError(ErrorCode::kUnavailable, dir.string() + ": cannot write the fixture");
  }
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const auto name = entry.path().filename().string();
    if (!live.count(name) && !name.empty() && std::isdigit(static_cast<unsigned char>(name[0]))) fs::remove_all(entry.path(), ec);
  }
  return {};
}

}  // namespace gpumeter::cli
