#include "app/diagnose/doctor_demo.h"

#include <fmt/format.h>
#include <stdlib.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <system_error>

#include "common/bounded_file.h"
#include "common/yaml/reader.h"

namespace gpumeter::app {

Expected<void> WriteDemoNode(const std::filesystem::path& file, const DemoNode& n) {
  YAML::Emitter out;
  out << YAML::Comment("gpumeter doctor --demo " + file.string() + ": this demo's node")
      << YAML::BeginMap;
  for (const auto& [key, value] :
       {std::pair<const char*, const std::string&>{"node_name", n.node_name},
        {"nvml_library", n.nvml_library},
        {"pod_resources_socket", n.pod_resources_socket},
        {"proc_root", n.proc_root},
        {"pods_file", n.pods_file},
        {"dcgm_metrics", n.dcgm_metrics},
        {"scenario", n.scenario}})
    out << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << value;
  out << YAML::Key << "speedup" << YAML::Value << fmt::format("{}", n.speedup);
  out << YAML::Key << "epoch_us" << YAML::Value << n.epoch_us;
  out << YAML::Key << "started_us" << YAML::Value << n.started_us << YAML::EndMap;
  // Written beside and renamed over: a doctor reading it never sees half a file.
  const auto tmp = std::filesystem::path(file.string() + ".tmp");
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << out.c_str() << "\n";
    if (!f.flush()) return MakeError(ErrorCode::kUnavailable, "cannot write " + tmp.string());
  }
  std::error_code ec;
  std::filesystem::rename(tmp, file, ec);
  if (ec)
    return MakeError(ErrorCode::kUnavailable,
                     "cannot write " + file.string() + ": " + ec.message());
  return {};
}

Expected<DemoNode> ReadDemoNode(const std::string& file) {
  auto text = ReadBoundedFile(file, 64u << 10);
  if (!text) return MakeError(ErrorCode::kInvalidInput, "--demo: " + text.error().message);
  return yaml::Parse<DemoNode>(*text, file, [](const yaml::Field& root) {
    root.ExpectMap({"node_name", "nvml_library", "pod_resources_socket", "proc_root", "pods_file",
                    "dcgm_metrics", "scenario", "speedup", "epoch_us", "started_us"});
    DemoNode n;
    auto path = [&](const char* key) {
      const auto f = root.Child(key);
      std::string s = f.Str();
      if (s.empty() || s.front() != '/') f.Fail("an absolute path");
      return s;
    };
    n.node_name = root.Child("node_name").Str();
    n.nvml_library = path("nvml_library");
    n.pod_resources_socket = path("pod_resources_socket");
    n.proc_root = path("proc_root");
    n.pods_file = path("pods_file");
    n.scenario = path("scenario");
    n.dcgm_metrics = root.Str("dcgm_metrics", "");
    const auto speedup = root.Child("speedup");
    n.speedup = speedup.Double();
    if (!(n.speedup > 0 && n.speedup <= 1e6)) speedup.Fail("a speedup in (0, 1e6]");
    n.epoch_us = root.Child("epoch_us").UInt();
    n.started_us = root.Child("started_us").UInt();
    return n;
  });
}

void UseDemoNode(const DemoNode& n, uint64_t now_us, DoctorOptions& o) {
  o.node_name = n.node_name;
  o.nvml_library = n.nvml_library;
  o.pod_resources_socket = n.pod_resources_socket;
  o.proc_root = n.proc_root;
  o.pods_file = n.pods_file;
  o.dcgm_metrics = n.dcgm_metrics;
  o.resource_slices = false;  // the demo's slices are a file the doctor's API check cannot read
  ::setenv("GPUMETER_FAKE_NVML_SCENARIO", n.scenario.c_str(), 1);
  ::setenv("GPUMETER_FAKE_NVML_SPEEDUP", fmt::format("{}", n.speedup).c_str(), 1);
  const double t_s =
      now_us > n.started_us ? static_cast<double>(now_us - n.started_us) / 1e6 * n.speedup : 0;
  ::setenv("GPUMETER_FAKE_NVML_START_S", fmt::format("{}", t_s).c_str(), 1);
  ::setenv("GPUMETER_FAKE_NVML_EPOCH_US",
           std::to_string(n.epoch_us + static_cast<uint64_t>(t_s * 1e6)).c_str(), 1);
}

}  // namespace gpumeter::app
