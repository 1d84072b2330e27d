#include "sim/node/scenario_fixture.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "sim/scenario/truth.h"

namespace gpumeter::sim {
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

// Like the kernel's /proc, a reader never sees a half-written file: unchanged files are left
// alone and changed ones are replaced whole (write a temporary file, then rename it).
Expected<void> WriteIfChanged(const std::filesystem::path& path, const std::string& content) {
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream old;
      old << in.rdbuf();
      if (old.str() == content) return {};
    }
  }
  const auto tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out.flush()) return MakeError(ErrorCode::kUnavailable, tmp + ": cannot write the fixture");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return MakeError(ErrorCode::kUnavailable, path.string() + ": " + ec.message());
  return {};
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
    items.push_back(
        {{"metadata",
          {{"name", pod.name}, {"namespace", pod.ns}, {"uid", pod.uid}, {"labels", pod.labels}}},
         {"spec", {{"nodeName", s.node_name}, {"containers", containers}}},
         {"status",
          {{"phase", "Running"}, {"qosClass", pod.qos}, {"containerStatuses", statuses}}}});
  }
  return nlohmann::json{{"kind", "PodList"},
                        {"apiVersion", "v1"},
                        {"metadata", {{"resourceVersion", "1"}}},
                        {"items", items}}
      .dump();
}

Expected<void> WriteProcFixture(const std::filesystem::path& root, const scenario::Scenario& s,
                                double t_s, std::optional<double> unix_s_at_zero) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) return MakeError(ErrorCode::kUnavailable, root.string() + ": " + ec.message());
  // The node booted a whole second (btime has no fraction) at least a second before time 0; the
  // ticks then carry time 0's fraction of a second. Without a clock: ticks from time 0, + 1.
  double boot_offset_s = 1.0 / kClockTicksPerSecond;
  if (unix_s_at_zero) {
    const double boot = std::floor(*unix_s_at_zero) - 1;
    boot_offset_s = *unix_s_at_zero - boot;
    std::ostringstream stat;
    stat << "cpu  0 0 0 0 0 0 0 0 0 0\nbtime " << static_cast<long long>(boot) << "\nprocesses 1\n";
    if (auto w = WriteIfChanged(root / "stat", stat.str()); !w) return w;
  }
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
    const auto start =
        static_cast<long long>(std::llround((p.start_s + boot_offset_s) * kClockTicksPerSecond));
    std::ostringstream stat;
    // The kernel keeps 15 characters of the command name (TASK_COMM_LEN).
    stat << p.pid << " (" << p.name.substr(0, 15) << ") S 1 " << p.pid << " " << p.pid
         << " 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 " << start << " 0 0\n";
    // A real environment has more than the GPU variables; the reader must drop the rest.
    std::string env = std::string("PATH=/usr/local/bin:/usr/bin") + '\0';
    for (const auto& [k, v] : p.env) env += k + "=" + v + '\0';
    for (const auto& [name, content] : {std::pair<const char*, std::string>{"stat", stat.str()},
                                        {"cgroup", "0::" + cgroup + "\n"},
                                        {"environ", env}})
      if (auto w = WriteIfChanged(dir / name, content); !w) return w;
  }
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const auto name = entry.path().filename().string();
    if (!live.count(name) && !name.empty() && std::isdigit(static_cast<unsigned char>(name[0])))
      fs::remove_all(entry.path(), ec);
  }
  return {};
}

}  // namespace gpumeter::sim
