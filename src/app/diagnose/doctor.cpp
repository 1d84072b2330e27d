#include "app/diagnose/doctor.h"

#include <fmt/format.h>

#include <chrono>

#include <nlohmann/json.hpp>

#include "app/cluster_access.h"
#include "app/diagnose/doctor_demo.h"

namespace gpumeter::app {

std::vector<CheckResult> RunChecks(const DoctorOptions& o) {
  std::vector<CheckResult> out;
  NvmlFindings nvml;
  // The agent reads the driver's buffers every pass, and every --drain-interval between passes
  // longer than that.
  const bool drains = o.drain_interval.count() > 0 && o.interval > o.drain_interval;
  out.push_back(CheckNvml(o.nvml_library, nvml, (drains ? o.drain_interval : o.interval).count()));
  out.push_back(CheckPodResources(o.pod_resources_socket));
  out.push_back(CheckProc(o.proc_root, nvml));
  const std::string node = NodeName(o.node_name);
  std::string why_no_api, pod_list;
  std::optional<kube_api::ApiServerConfig> api;
  std::unique_ptr<PrivateFile> ca_file;
  std::optional<CheckResult> config_problem;  // the pods check's failure, before any request
  if (o.pods_file.empty()) {
    auto found = ApiServerFor(o.kubeconfig, o.kube_context, &why_no_api);
    if (!found) {
      config_problem =
          CheckResult{"pods", CheckStatus::kFail, found.error().message,
                      "--kubeconfig must name a readable kubeconfig with a current context"};
    } else if (*found) {
      api = **found;
      auto written = MaterializeCa(*api);
      if (written)
        ca_file = std::move(*written);
      else
        config_problem =
            CheckResult{"pods", CheckStatus::kFail, written.error().message,
                        "the agent needs a writable temporary directory (an emptyDir on /tmp)"};
    }
  }
  out.push_back(config_problem ? *config_problem
                               : CheckPods(node, o.pods_file, api, why_no_api, pod_list));
  out.push_back(CheckDra(api, o.resource_slices));
  out.push_back(CheckAttribution(o.proc_root, nvml, pod_list));
  out.push_back(CheckDcgm(o.dcgm_metrics, nvml));
  return out;
}

int RunDoctor(const DoctorOptions& options) {
  DoctorOptions o = options;
  if (!o.demo.empty()) {
    auto node = ReadDemoNode(o.demo);
    if (!node) {
      fmt::print(stderr, "gpumeter doctor: {}\n", node.error().message);
      return 2;
    }
    UseDemoNode(*node,
                static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count()),
                o);
  }
  const auto checks = RunChecks(o);
  bool failed = false;
  for (const auto& c : checks) failed = failed || c.status == CheckStatus::kFail;
  if (o.format == "json") {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& c : checks)
      j.push_back({{"check", c.name},
                   {"status", ToString(c.status)},
                   {"detail", c.detail},
                   {"fix", c.fix}});
    fmt::print("{}\n", nlohmann::json{{"ok", !failed}, {"checks", j}}.dump(
                           2, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    for (const auto& c : checks) {
      fmt::print("{:<5} {:<14} {}\n", ToString(c.status), c.name, c.detail);
      if (!c.fix.empty() && c.status != CheckStatus::kOk) fmt::print("{:20} fix: {}\n", "", c.fix);
    }
    fmt::print("{}\n",
               failed
                   ? "doctor: the agent cannot work on this node as configured (see 'fail' above)"
                   : "doctor: no check failed");
  }
  return failed ? 1 : 0;
}

}  // namespace gpumeter::app
