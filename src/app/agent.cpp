#include "app/agent.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <map>

#include <cstdlib>

#include "app/agent_flags.h"
#include "app/node_config.h"
#include "app/rightsize_runner.h"
#include "app/runtime.h"
#include "app/usage_recorder.h"
#include "common/duration.h"
#include "sinks/metrics/exposition.h"
#include "sources/kube_api/api_server_source.h"
#include "sources/kube_api/kubeconfig.h"
#include "sources/kube_api/pod_source.h"
#include "sources/kube_api/resource_slice_source.h"
#include "sources/kubelet/pod_resources_source.h"

namespace gpumeter::app {

int RunAgent(const AgentOptions& o) {
  RuntimeOptions ro;
  auto fail = [](const Error& e, int code) {
    spdlog::error("{}", e.message);
    return code;
  };
  if (auto listen = metrics::ParseListen(o.listen); !listen) return fail(listen.error(), 2);
  for (const auto& s : o.sharing) {
    auto parsed = ParseSharingFlag(s);
    if (!parsed) return fail(parsed.error(), 2);
    ro.pipeline.evidence.configured[parsed->first] = parsed->second;
  }
  auto labels = ParseKeyValues("--node-label", o.node_labels);
  if (!labels) return fail(labels.error(), 2);
  ro.pipeline.evidence.node_labels = *labels;
  // Two --pod-label keys that map to one label name would make every scrape invalid.
  std::map<std::string, std::string> label_names;
  for (const auto& k : o.pod_labels) {
    const auto [it, fresh] = label_names.emplace(metrics::PodLabelName(k), k);
    if (!fresh)
      return fail({ErrorCode::kInvalidInput, "--pod-label '" + k + "' and '" + it->second +
                                                 "' both become label " + it->first},
                  2);
  }
  auto idle = ParseIdlePower(o.idle_power);
  if (!idle) return fail(idle.error(), 2);
  ro.pipeline.accountant.idle_power_watts = *idle;
  if (!o.device_plugin_config.empty()) {
    auto text = ReadWhole("--device-plugin-config", o.device_plugin_config);
    if (!text) return fail(text.error(), 2);
    auto cfg = k8s::ParseDevicePluginConfig(*text);
    if (!cfg)
      return fail({ErrorCode::kInvalidInput,
                   "--device-plugin-config " + o.device_plugin_config + ": " + cfg.error().message},
                  2);
    ro.pipeline.evidence.plugin_config = *cfg;
  }
  auto pricing = LoadPricing(o.pricing_file);
  if (!pricing) return fail(pricing.error(), 2);
  auto guard_config = LoadGuardConfig(o.guard_config);
  if (!guard_config) return fail(guard_config.error(), 2);
  ro.pipeline.guard = *guard_config;
  ro.pipeline.pricing = &*pricing;
  const auto signals = BlockStopSignals();  // before any thread starts

  std::unique_ptr<kubelet::PodResourcesSource> kubelet;
  if (!o.pod_resources_socket.empty()) {
    kubelet::PodResourcesOptions ko;
    ko.socket_path = o.pod_resources_socket;
    kubelet = std::make_unique<kubelet::PodResourcesSource>(
        std::make_unique<kubelet::PodResourcesClient>(ko));
  } else {
    spdlog::warn(
        "no --pod-resources-socket: no container holds any GPU; usage is still attributed to "
        "owners from /proc");
  }
  const std::string node_name = NodeName(o.node_name);
  std::string why_no_api;
  auto api = ApiServerFor(o.kubeconfig, o.kube_context, &why_no_api);
  if (!api) return fail(api.error(), 2);
  if (!*api && o.pods_file.empty())
    spdlog::warn(
        "no API server ({}; give --kubeconfig or --pods-file): processes in containers are "
        "unattributed, for want of pod names",
        why_no_api);
  std::unique_ptr<PrivateFile> ca_file;
  if (*api) {
    auto written = MaterializeCa(**api);
    if (!written) return fail(written.error(), 1);
    ca_file = std::move(*written);
  }
  // Pods from --pods-file, else list/watch from the API server; DRA devices from its
  // ResourceSlices.
  std::unique_ptr<node::PodSource> pods;
  std::unique_ptr<node::ApiServerSliceSource> slices;
  if (!o.pods_file.empty()) {
    pods = std::make_unique<node::PodsFileSource>(o.pods_file);
  } else if (*api) {
    node::ApiServerOptions ao;
    ao.config = **api;
    ao.node_name = node_name;
    auto watcher = std::make_unique<node::ApiServerPodSource>(ao);
    watcher->Start();
    pods = std::move(watcher);
    spdlog::info("pods of node {} from {} ({})", node_name, (*api)->server, (*api)->source);
  }
  if (*api && o.resource_slices) {
    node::SliceSourceOptions so;
    so.config = **api;
    so.node_name = node_name;
    slices = std::make_unique<node::ApiServerSliceSource>(so);
    slices->Start();
  }

  // The usage store: a store that cannot be opened is an error in the log, not a stopped agent.
  std::unique_ptr<store::Store> usage_store;
  std::unique_ptr<UsageRecorder> recorder;
  if (!o.store.empty()) {
    store::StoreOptions sto;
    sto.minute_retention_days = o.store_minute_days;
    auto opened = store::Store::Open(o.store, sto);
    if (opened) {
      usage_store = std::move(*opened);
      recorder = std::make_unique<UsageRecorder>(*usage_store);
      ro.after_pass = [r = recorder.get()](const node::NodeState& state) { r->Record(state); };
      spdlog::info("recording usage in {}", o.store);
    } else {
      spdlog::error("{} (running without the store: metrics are served, usage is not recorded)",
                    opened.error().message);
    }
  }
  // Rightsizing from the store, off the sampling thread; the pipeline publishes the latest.
  std::unique_ptr<RightsizeRunner> rightsizer;
  if (usage_store && o.rightsize_interval_s > 0) {
    if (auto d = ParseDurationSeconds(o.rightsize_min_history); !d)
      return fail({ErrorCode::kInvalidInput, "--rightsize-min-history " + d.error().message}, 2);
    RightsizeOptions rso;
    rso.pricing_file = o.pricing_file;
    rso.min_history = o.rightsize_min_history;
    const auto every =
        std::chrono::milliseconds(static_cast<int64_t>(o.rightsize_interval_s * 1000));
    // Borrows the store (declared above, so it outlives the runner) and reads it on its thread.
    rightsizer = std::make_unique<RightsizeRunner>(
        *usage_store, rso, std::min(every, std::chrono::milliseconds(60'000)), every);
    ro.pipeline.rightsizing = [r = rightsizer.get()] { return r->Latest(); };
  }
  if (!o.nvml_library.empty()) ro.nvml.library_candidates = {o.nvml_library};
  ro.nvml.first_util_lookback_us = static_cast<uint64_t>(o.interval_s * 1e6);
  ro.interval_s = o.interval_s;
  ro.call_deadline_s = o.call_deadline_s;
  ro.pipeline.node = node_name;
  ro.pipeline.proc_root = o.proc_root;
  ro.sources = {kubelet.get(), pods.get(), slices.get()};
  ro.exposition.pod_label_keys = o.pod_labels;
  ro.exposition.max_series = o.max_series;
  ro.http = {o.listen, o.tls_cert, o.tls_key, o.bearer_token_file};
  auto rt = NodeRuntime::Start(std::move(ro));
  if (!rt) return fail(rt.error(), rt.error().code == ErrorCode::kInvalidInput ? 2 : 1);
  const auto& caps = (*rt)->capabilities();
  spdlog::info("gpumeter agent on node {}: NVML {} (driver {}), serving {}/metrics",
               (*rt)->State()->node, caps.library_path,
               caps.driver_version.empty() ? "?" : caps.driver_version, (*rt)->url());
  int received = 0;
  while ((received = WaitForSignal(signals, std::chrono::seconds(3600))) == 0) {
  }
  spdlog::info("stopping on signal {}", received);
  (*rt)->StopSampling();
  if (o.shutdown_grace_s > 0)
    WaitForSignal(signals,
                  std::chrono::duration<double>(o.shutdown_grace_s));  // a second signal ends it
  rt->reset();
  return 0;
}

}  // namespace gpumeter::app
