// `gpumeter agent`: the node agent. Samples the real NVML, asks the kubelet which containers hold
// which devices, reads pods from the API server (in-cluster, --kubeconfig, or --pods-file) and
// owners from /proc, and
// serves the attributed usage on /metrics until SIGTERM.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/duration.h"
#include "core/cost/allocate.h"

namespace gpumeter::app {

struct AgentOptions {
  std::string node_name;  // default: $NODE_NAME, else the host name
  std::string nvml_library;
  std::string pod_resources_socket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  std::string proc_root = "/proc";
  std::string pods_file;
  std::string kubeconfig;  // default: in-cluster when KUBERNETES_SERVICE_HOST is set
  std::string kube_context;
  std::string device_plugin_config;
  bool resource_slices = true;
  // DRA devices from this ResourceSliceList JSON file instead of the API server (re-read on
  // change).
  std::string resource_slices_file;
  // The node's Node object from this JSON file (`kubectl get node NAME -o json`) instead of the
  // API server (re-read on change); empty: from the API server when one is configured.
  std::string node_file;
  // dcgm-exporter's page on this node (http://$(NODE_IP):9400/metrics); empty: none.
  std::string dcgm_metrics;
  Seconds dcgm_max_age{90};  // a GPU's series unchanged this long are stale (unknown)
  std::string store;         // usage store (SQLite); empty: none
  std::string pricing_file;  // prices of usage and idle allocations (default: the dated table)
  cost::Policy policy;       // how gpumeter_cost_total splits each unit's cost (--policy, --idle)
  std::string guard_config;  // guardrail thresholds and severities (default: docs/guardrails.md)
  Seconds rightsize_interval{3600};      // recompute rightsizing from the store this often (0: off)
  Seconds rightsize_min_history{86400};  // below this much history rightsizing says only keep
  std::chrono::days store_minute_retention{14};  // per-minute rows kept this long
  Seconds store_pending_max{3600};  // usage kept in memory while the store refuses writes
  Seconds shutdown_grace{0};  // after SIGTERM: serve the final counters this long, sampling stopped
  std::vector<std::string> sharing;      // UUID=MODE[:REPLICAS]
  std::vector<std::string> node_labels;  // KEY=VALUE
  std::vector<std::string> idle_power;   // MODEL_OR_UUID=WATTS
  std::vector<std::string> pod_labels;
  size_t max_series = 20000;
  // --process-series: export gpumeter_process_* (a pid label each, unbounded: opt-in).
  bool process_series = false;
  // --container-series full: the per-owner families of the full set besides the default set's
  // (at most 8 series per container and unit: docs/metrics.md, "Default set").
  bool full_container_series = false;
  Seconds interval{1};
  Seconds call_deadline{2};
  // Between passes longer than this, the driver's sample buffers are read (they hold ~10 s), so a
  // long interval loses none of its per-process or power samples. 0: never.
  Seconds drain_interval{5};
  std::string listen = "0.0.0.0:9402";
  std::string probe_listen;  // HOST:PORT of the probe listener; empty: none
  std::string tls_cert, tls_key, bearer_token_file;
};

// Runs until SIGINT/SIGTERM; returns the exit code (0 ok, 1 runtime failure, 2 bad input).
int RunAgent(const AgentOptions& options);

}  // namespace gpumeter::app
