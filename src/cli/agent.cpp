// `gpumeter agent`: its flags, into app::AgentOptions (src/app/agent/agent.h).
#include <CLI/CLI.hpp>

#include "app/agent/agent.h"
#include "cli/commands.h"

namespace gpumeter::cli {

namespace {

// Where the agent reads its node from: NVML, the kubelet, /proc, the API server, the device plugin.
void AddSourceFlags(CLI::App* cmd, app::AgentOptions& o) {
  cmd->add_option("--node-name", o.node_name,
                  "This node's name (default: $NODE_NAME, else the host name)");
  cmd->add_option("--nvml-library", o.nvml_library,
                  "NVML library to load (default: libnvidia-ml.so.1 from the loader path)");
  cmd->add_option("--pod-resources-socket", o.pod_resources_socket,
                  "The kubelet's PodResources socket ('' to run without it)")
      ->capture_default_str();
  cmd->add_option("--proc-root", o.proc_root,
                  "The host's /proc as mounted in the agent (needs hostPID)")
      ->capture_default_str();
  cmd->add_option(
      "--pods-file", o.pods_file,
      "Read pods from this PodList JSON file (kubectl get pods -o json), re-read on change");
  cmd->add_option(
      "--kubeconfig", o.kubeconfig,
      "Reach the API server through this kubeconfig (default: in-cluster service account)");
  cmd->add_option("--kube-context", o.kube_context,
                  "Context of --kubeconfig (default: its current-context)");
  cmd->add_option("--device-plugin-config", o.device_plugin_config,
                  "The NVIDIA device plugin's config file (sharing: timeSlicing/mps)")
      ->envname("GPUMETER_DEVICE_PLUGIN_CONFIG");
  cmd->add_option("--resource-slices-file", o.resource_slices_file,
                  "Read DRA ResourceSlices from this ResourceSliceList JSON file (kubectl get "
                  "resourceslices -o json), re-read on change, instead of the API server");
  cmd->add_option("--node-file", o.node_file,
                  "Read this node's Node object from this JSON file (kubectl get node NAME -o "
                  "json), re-read on change, instead of the API server: its instance type prices "
                  "the GPUs, its GPU Feature Discovery labels give the sharing mode");
  cmd->add_option("--dcgm-metrics", o.dcgm_metrics,
                  "dcgm-exporter's /metrics on this node, for the activity of MIG instances "
                  "NVML cannot see (A100, A30): e.g. http://$(NODE_IP):9400/metrics "
                  "(docs/deploy.md)")
      ->envname("GPUMETER_DCGM_METRICS");
  AddDurationOption(cmd, "--dcgm-max-age", o.dcgm_max_age,
                    "A GPU's dcgm-exporter series unchanged this long are stale: activity unknown "
                    "(3 x the exporter's collection interval)",
                    Seconds(1), Seconds(86400));
  cmd->add_option("--resource-slices", o.resource_slices,
                  "List DRA ResourceSlices from the API server (true/false; off where the agent "
                  "may not list them)")
      ->envname("GPUMETER_RESOURCE_SLICES")
      ->capture_default_str();
}

// What it keeps and prices: the usage store, prices, guardrails, rightsizing, shutdown.
void AddStoreFlags(CLI::App* cmd, app::AgentOptions& o) {
  cmd->add_option("--store", o.store,
                  "Record usage per minute in this SQLite file, for `gpumeter report`")
      ->envname("GPUMETER_STORE");
  cmd->add_option("--pricing", o.pricing_file,
                  "Pricing file (docs/pricing.md) for gpumeter_cost_total and the cost of idle "
                  "allocations (default: the dated table)")
      ->envname("GPUMETER_PRICING");
  AddPolicyFlags(cmd, o.policy);
  cmd->get_option("--policy")->envname("GPUMETER_POLICY");
  cmd->get_option("--idle")->envname("GPUMETER_IDLE");
  cmd->add_option("--guard-config", o.guard_config,
                  "Guardrail thresholds and severities (docs/guardrails.md)")
      ->envname("GPUMETER_GUARD_CONFIG");
  AddDurationOption(cmd, "--rightsize-interval", o.rightsize_interval,
                    "With --store: recompute the rightsizing metrics from it this often (0: off; "
                    "docs/rightsizing.md)",
                    Seconds(0), Seconds(86400));
  AddDurationOption(cmd, "--rightsize-min-history", o.rightsize_min_history,
                    "Rightsizing says only keep below this much history", Seconds(1),
                    Seconds(400 * 86400));
  AddDurationOption(cmd, "--shutdown-grace", o.shutdown_grace,
                    "After SIGTERM, stop sampling and keep serving the final counters this long "
                    "(a last scrape sees them)",
                    Seconds(0), Seconds(300));
  AddDurationOption(cmd, "--store-pending-max", o.store_pending_max,
                    "Usage kept in memory while the store refuses writes (locked, disk full), "
                    "written when it accepts again",
                    Seconds(60), Seconds(86400));
  cmd->add_option_function<int>(
         "--store-minute-days",
         [&o](const int& days) { o.store_minute_retention = std::chrono::days(days); },
         "Days of per-minute rows to keep (hourly rows: 400 days)")
      ->check(CLI::Range(1, 3650))
      ->default_str(std::to_string(o.store_minute_retention.count()));
}

// Sharing evidence, the exported series, sampling and serving.
void AddServingFlags(CLI::App* cmd, app::AgentOptions& o) {
  cmd->add_option(
      "--sharing", o.sharing,
      "GPU-UUID=time-slicing:N | mps:N | exclusive (repeatable; beats every other evidence)");
  cmd->add_option("--node-label", o.node_labels,
                  "KEY=VALUE node label used as sharing evidence, e.g. nvidia.com/gpu.replicas=4");
  cmd->add_option("--idle-power", o.idle_power,
                  "MODEL_OR_UUID=WATTS idle power (else fitted from the readings)");
  cmd->add_option("--pod-label", o.pod_labels,
                  "Pod label copied onto the owner series as label_<key> (repeatable)");
  cmd->add_option("--max-series", o.max_series, "Most container series per metric in one scrape")
      ->capture_default_str();
  // Callbacks, not CLI11's "!--no-…" flag, whose help reads "--no-process-series{false}".
  cmd->add_flag_callback(
      "--process-series", [&o] { o.process_series = true; },
      "Export the per-process series (gpumeter_process_*: 2 per GPU process, each with a pid "
      "label, so a new series per process); off by default: nothing reports or rightsizing read");
  cmd->add_flag_callback(
      "--no-process-series", [&o] { o.process_series = false; },
      "The default (kept so that manifests written when the series were on still parse)");
  AddContainerSeriesFlag(cmd, o.full_container_series);
  AddSamplingFlags(cmd, o.interval, o.call_deadline, o.drain_interval);
  cmd->add_option("--listen", o.listen,
                  "HOST:PORT for /metrics, /api/v2 (and the deprecated /api/v1), /healthz, /readyz")
      ->capture_default_str();
  cmd->add_option("--probe-listen", o.probe_listen,
                  "HOST:PORT for /healthz and /readyz on an event-driven listener of their own, "
                  "answered however many connections sit idle on either port (docs/deploy.md)");
  cmd->add_option("--tls-cert", o.tls_cert,
                  "Serve HTTPS with this PEM certificate (with --tls-key)");
  cmd->add_option("--tls-key", o.tls_key, "PEM private key of --tls-cert");
  cmd->add_option(
      "--bearer-token-file", o.bearer_token_file,
      "Require 'Authorization: Bearer <token in this file>' (not on /healthz, /readyz)");
}

}  // namespace

void AddAgentCommand(CLI::App& app, app::AgentOptions& o) {
  auto* cmd = app.add_subcommand(
      "agent", "Run the node agent: attribute the GPUs of this node to its pods, serve /metrics");
  AddSourceFlags(cmd, o);
  AddStoreFlags(cmd, o);
  AddServingFlags(cmd, o);
}

}  // namespace gpumeter::cli
