// `gpumeter doctor`: its flags, into app::DoctorOptions (src/app/diagnose/doctor.h).
#include <CLI/CLI.hpp>

#include "app/diagnose/doctor.h"
#include "cli/commands.h"

namespace gpumeter::cli {

void AddDoctorCommand(CLI::App& app, app::DoctorOptions& o) {
  auto* cmd = app.add_subcommand(
      "doctor", "Check every source the agent needs on this node and say how to fix what is wrong");
  auto* node = cmd->add_option("--node-name", o.node_name,
                               "This node's name (default: $NODE_NAME, else the host name)");
  auto* nvml =
      cmd->add_option("--nvml-library", o.nvml_library,
                      "NVML library to load (default: libnvidia-ml.so.1 from the loader path)");
  auto* socket = cmd->add_option("--pod-resources-socket", o.pod_resources_socket,
                                 "The kubelet's PodResources socket")
                     ->capture_default_str();
  AddDurationOption(cmd, "--interval", o.interval,
                    "The agent's sampling interval, checked against the span of per-process "
                    "samples the driver keeps",
                    Seconds(0.05), Seconds(3600));
  AddDurationOption(cmd, "--drain-interval", o.drain_interval,
                    "The agent's --drain-interval (0: its buffers are read at each pass only)",
                    Seconds(0), Seconds(60));
  auto* proc =
      cmd->add_option("--proc-root", o.proc_root, "The host's /proc as mounted in the agent")
          ->capture_default_str();
  auto* pods = cmd->add_option("--pods-file", o.pods_file,
                               "Check this PodList JSON file instead of the API server");
  cmd->add_option("--kubeconfig", o.kubeconfig,
                  "Reach the API server through this kubeconfig (default: in-cluster)");
  cmd->add_option("--kube-context", o.kube_context, "Context of --kubeconfig");
  cmd->add_option("--resource-slices", o.resource_slices,
                  "Whether the agent lists DRA ResourceSlices (as its flag)")
      ->envname("GPUMETER_RESOURCE_SLICES")
      ->capture_default_str();
  auto* dcgm =
      cmd->add_option("--dcgm-metrics", o.dcgm_metrics,
                      "dcgm-exporter's page, as the agent's --dcgm-metrics (checked when given)")
          ->envname("GPUMETER_DCGM_METRICS");
  cmd->add_option("--demo", o.demo,
                  "Check a running demo's node: the doctor.yaml its banner names (its fake NVML, "
                  "kubelet, /proc and pods) instead of the flags for them")
      ->excludes(node)
      ->excludes(nvml)
      ->excludes(socket)
      ->excludes(proc)
      ->excludes(pods)
      ->excludes(dcgm);
  cmd->add_option("--format", o.format, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

}  // namespace gpumeter::cli
