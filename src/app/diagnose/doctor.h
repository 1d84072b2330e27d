// `gpumeter doctor`: run on a node (or in the agent's pod) with the agent's flags, it tries every
// source the agent needs (NVML, the kubelet's PodResources, /proc with host PIDs, pods from the
// API server or a file, ResourceSlices) and says what is wrong and how to fix it.
#pragma once

#include <string>
#include <vector>

#include "app/diagnose/doctor_checks.h"
#include "common/duration.h"

namespace gpumeter::app {

struct DoctorOptions {
  std::string node_name;  // default: $NODE_NAME, else the host name
  std::string nvml_library;
  std::string pod_resources_socket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  std::string proc_root = "/proc";
  std::string pods_file;
  std::string kubeconfig, kube_context;
  bool resource_slices = true;  // as the agent's --resource-slices (GPUMETER_RESOURCE_SLICES)
  std::string dcgm_metrics;     // as the agent's --dcgm-metrics (GPUMETER_DCGM_METRICS)
  std::string format = "text";  // text | json
  Seconds interval{1};          // the agent's --interval, checked against the driver's buffer
  Seconds drain_interval{5};    // the agent's --drain-interval (its buffers read this often)
  std::string demo;  // a demo's doctor.yaml (doctor_demo.h): its node instead of the flags above
};

// Every check, in order; an unreadable kubeconfig is the pods check's failure.
std::vector<CheckResult> RunChecks(const DoctorOptions& options);

// Prints the checks; returns 0 when none failed, 1 when one did, 2 on bad flags.
int RunDoctor(const DoctorOptions& options);

}  // namespace gpumeter::app
