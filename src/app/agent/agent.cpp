#include "app/agent/agent.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <map>

#include <cstdio>
#include <cstdlib>

#include "app/agent/agent_flags.h"
#include "app/agent/rightsize_runner.h"
#include "app/agent/runtime.h"
#include "app/cluster_access.h"
#include "app/config_files.h"
#include "common/duration.h"
#include "domain/pod_label.h"
#include "sinks/metrics/exposition.h"
#include "sources/dcgm/dcgm_source.h"
#include "sources/kube_api/kubeconfig.h"
#include "sources/kubelet/pod_resources_source.h"
#include "sources/node/node_source.h"
#include "sources/pods/api_server_source.h"
#include "sources/pods/pod_source.h"
#include "sources/slices/resource_slice_source.h"
#include "sources/slices/slices_file_source.h"
#include "store/writer/usage_recorder.h"

namespace gpumeter::app {
namespace {

int Fail(const Error& e, int code) {
  spdlog::error("{}", e.message);
  return code;
}

// The node's evidence and the pipeline's options from the flags; errors name the flag.
Expected<void> ConfigurePipeline(const AgentOptions& o, RuntimeOptions& ro) {
  if (auto listen = metrics::ParseListen(o.listen); !listen) return tl::unexpected(listen.error());
  if (!o.dcgm_metrics.empty() && o.dcgm_metrics.rfind("http://", 0) != 0 &&
      o.dcgm_metrics.rfind("https://", 0) != 0)
    return MakeError(ErrorCode::kInvalidInput,
                     "--dcgm-metrics '" + o.dcgm_metrics +
                         "': expected an http(s):// URL, e.g. http://$(NODE_IP):9400/metrics");
  for (const auto& s : o.sharing) {
    auto parsed = ParseSharingFlag(s);
    if (!parsed) return tl::unexpected(parsed.error());
    ro.pipeline.evidence.configured[parsed->first] = parsed->second;
  }
  auto labels = ParseKeyValues("--node-label", o.node_labels);
  if (!labels) return tl::unexpected(labels.error());
  ro.pipeline.evidence.node_labels = *labels;
  // Two --pod-label keys that map to one label name would make every scrape invalid.
  std::map<std::string, std::string> label_names;
  for (const auto& k : o.pod_labels) {
    const auto [it, fresh] = label_names.emplace(domain::PodLabelName(k), k);
    if (!fresh)
      return MakeError(ErrorCode::kInvalidInput, "--pod-label '" + k + "' and '" + it->second +
                                                     "' both become label " + it->first);
  }
  auto idle = ParseIdlePower(o.idle_power);
  if (!idle) return tl::unexpected(idle.error());
  ro.pipeline.accountant.idle_power_watts = *idle;
  if (!o.device_plugin_config.empty()) {
    auto text = ReadWhole("--device-plugin-config", o.device_plugin_config);
    if (!text) return tl::unexpected(text.error());
    auto cfg = k8s::ParseDevicePluginConfig(*text);
    if (!cfg)
      return MakeError(
          ErrorCode::kInvalidInput,
          "--device-plugin-config " + o.device_plugin_config + ": " + cfg.error().message);
    ro.pipeline.evidence.plugin_config = *cfg;
  }
  return {};
}

// The agent's Kubernetes sources; each is null where the agent runs without it.
struct AgentSources {
  std::unique_ptr<kubelet::PodResourcesSource> kubelet;
  std::unique_ptr<PrivateFile> ca_file;  // the API server's CA, for the HTTP client
  std::unique_ptr<kube_api::PodSource> pods;
  std::unique_ptr<kube_api::SliceSource> slices;
  std::unique_ptr<dcgm::DcgmSource> dcgm;  // reads on its own thread
  std::unique_ptr<kube_api::NodeSource> node;
};

std::unique_ptr<kubelet::PodResourcesSource> KubeletSource(const AgentOptions& o) {
  if (o.pod_resources_socket.empty()) {
    spdlog::warn(
        "no --pod-resources-socket: no container holds any GPU; usage is still attributed to "
        "owners from /proc");
    return nullptr;
  }
  kubelet::PodResourcesOptions ko;
  ko.socket_path = o.pod_resources_socket;
  return std::make_unique<kubelet::PodResourcesSource>(
      std::make_unique<kubelet::PodResourcesClient>(ko));
}

// Starts the sources; 0, or the exit code after logging why not.
int StartSources(const AgentOptions& o, const std::string& node_name, AgentSources& out) {
  out.kubelet = KubeletSource(o);
  std::string why_no_api;
  auto api = ApiServerFor(o.kubeconfig, o.kube_context, &why_no_api);
  if (!api) return Fail(api.error(), 2);
  if (!*api && o.pods_file.empty())
    spdlog::warn(
        "no API server ({}; give --kubeconfig or --pods-file): processes in containers are "
        "unattributed, for want of pod names",
        why_no_api);
  if (*api) {
    auto written = MaterializeCa(**api);
    if (!written) return Fail(written.error(), 1);
    out.ca_file = std::move(*written);
  }
  // Pods from --pods-file, else list/watch from the API server; DRA devices from its
  // ResourceSlices.
  if (!o.pods_file.empty()) {
    out.pods = std::make_unique<kube_api::PodsFileSource>(o.pods_file);
  } else if (*api) {
    kube_api::ApiServerOptions ao;
    ao.config = **api;
    ao.node_name = node_name;
    auto watcher = std::make_unique<kube_api::ApiServerPodSource>(ao);
    watcher->Start();
    out.pods = std::move(watcher);
    spdlog::info("pods of node {} from {} ({})", node_name, (*api)->server, (*api)->source);
  }
  if (!o.dcgm_metrics.empty()) {
    dcgm::DcgmSourceOptions dopt;
    dopt.url = o.dcgm_metrics;
    dopt.max_age_s = o.dcgm_max_age.count();
    out.dcgm = std::make_unique<dcgm::DcgmSource>(dopt);
    out.dcgm->Start();
    spdlog::info("GPU activity where NVML has none from dcgm-exporter at {}", o.dcgm_metrics);
  }
  if (!o.resource_slices_file.empty()) {
    out.slices = std::make_unique<kube_api::SlicesFileSource>(o.resource_slices_file);
  } else if (*api && o.resource_slices) {
    kube_api::SliceSourceOptions so;
    so.config = **api;
    so.node_name = node_name;
    auto lister = std::make_unique<kube_api::ApiServerSliceSource>(so);
    lister->Start();
    out.slices = std::move(lister);
  }
  // The Node object: instance type and region for prices, GFD labels for the sharing mode.
  if (!o.node_file.empty()) {
    out.node = std::make_unique<kube_api::NodeFileSource>(o.node_file, node_name);
  } else if (*api) {
    kube_api::NodeSourceOptions no;
    no.config = **api;
    no.node_name = node_name;
    auto getter = std::make_unique<kube_api::ApiServerNodeSource>(no);
    getter->Start();
    out.node = std::move(getter);
  }
  return 0;
}

// The usage store and the rightsizing read from it; null where not configured or not opened.
struct AgentStore {
  std::unique_ptr<StoreKeeper> keeper;
  std::unique_ptr<UsageRecorder> recorder;
  std::unique_ptr<RightsizeRunner> rightsizer;  // borrows `keeper`: declared after it
};

// A store that cannot be opened yet (a read-only or missing directory) is retried with backoff
// by its keeper while the agent serves metrics; usage waits in memory meanwhile. 0, or the exit
// code.
int OpenStore(const AgentOptions& o, AgentStore& out, RuntimeOptions& ro) {
  if (!o.store.empty()) {
    StoreKeeper::Options ko;
    ko.path = o.store;
    ko.store.minute_retention_days = static_cast<int>(o.store_minute_retention.count());
    out.keeper = std::make_unique<StoreKeeper>(ko);
    // Another program's file, or a newer gpumeter's: a configuration error that waiting will not
    // fix, and the file must stay as it is. Refuse to start, saying why.
    if (auto first = out.keeper->Ensure(StoreKeeper::Clock::now()); !first)
      return Fail(first.error(), 2);
    out.recorder = std::make_unique<UsageRecorder>(
        *out.keeper, static_cast<int64_t>(o.store_pending_max.count()));
    ro.after_pass = [r = out.recorder.get()](const node::NodeState& state) { r->Record(state); };
    ro.pipeline.store_health = [r = out.recorder.get()] {
      return std::optional<node::StoreHealth>(r->Health());
    };
  }
  // Rightsizing from the store, off the sampling thread; the pipeline publishes the latest.
  if (out.keeper && o.rightsize_interval > Seconds(0)) {
    RightsizeOptions rso;
    rso.pricing_file = o.pricing_file;
    rso.min_history = o.rightsize_min_history;
    const auto every = ToMilliseconds(o.rightsize_interval);
    out.rightsizer = std::make_unique<RightsizeRunner>(
        *out.keeper, rso, std::min(every, std::chrono::milliseconds(60'000)), every);
    ro.pipeline.rightsizing = [r = out.rightsizer.get()] { return r->Latest(); };
  }
  return 0;
}

void SetSamplingAndServing(const AgentOptions& o, const std::string& node_name,
                           const AgentSources& sources, RuntimeOptions& ro) {
  if (!o.nvml_library.empty()) ro.nvml.library_candidates = {o.nvml_library};
  ro.nvml.first_util_lookback_us = static_cast<uint64_t>(o.interval.count() * 1e6);
  ro.nvml.watch_xid = true;
  ro.interval = o.interval;
  ro.call_deadline = o.call_deadline;
  ro.drain_interval = o.drain_interval;
  ro.pipeline.node = node_name;
  ro.pipeline.proc_root = o.proc_root;
  ro.sources = {sources.kubelet.get(), sources.pods.get(), sources.slices.get(), sources.dcgm.get(),
                sources.node.get()};
  ro.exposition.pod_label_keys = o.pod_labels;
  ro.exposition.max_series = o.max_series;
  ro.exposition.process_series = o.process_series;
  ro.exposition.container_series = o.full_container_series ? metrics::ContainerSeries::kFull
                                                           : metrics::ContainerSeries::kDefault;
  ro.http.listen = o.listen;
  ro.http.tls_cert_file = o.tls_cert;
  ro.http.tls_key_file = o.tls_key;
  ro.http.bearer_token_file = o.bearer_token_file;
  ro.probe.listen = o.probe_listen;
}

// Serves until SIGINT/SIGTERM, then stops sampling and serves the final counters for the grace
// (a second signal ends it).
void ServeUntilSignal(NodeRuntime& rt, const sigset_t& signals, Seconds grace,
                      UsageRecorder* recorder) {
  int received = 0;
  while ((received = WaitForSignal(signals, std::chrono::seconds(3600))) == 0) {
  }
  spdlog::info("stopping on signal {}", received);
  const bool stopped = StopSamplingWithin(rt, std::chrono::seconds(2));
  // What was held for DCGM activity is booked unknown; then the intervals a busy or locked
  // store held back are written within 2 s, or logged and counted.
  if (stopped) {
    const auto last = rt.FinishAccounting();
    if (recorder) {
      recorder->Record(*last);
      recorder->Flush(std::chrono::seconds(2));  // logs what it could not write, as an error
      rt.PublishStoreHealth();  // gpumeter_store_lost_at_stop_intervals_total, for the grace
    }
  }
  if (grace > Seconds(0)) WaitForSignal(signals, grace);
  if (!stopped) {
    // The sampling thread is stuck in a call that does not return (a driver or a file that
    // blocks): waiting for it would ignore the kubelet's stop. Every interval it finished is
    // already in the store; leave without joining it.
    spdlog::error("sampling did not stop within 2 s (stuck); exiting without it");
    std::fflush(nullptr);
    std::_Exit(1);
  }
}

}  // namespace

int RunAgent(const AgentOptions& o) {
  if (!TuneAllocator()) spdlog::warn("malloc settings refused: memory may creep");
  // Hundreds of connections a port may be open at once (a scraper fleet, or a hostile client):
  // the distribution's default of 1024 descriptors must not be what refuses the next scrape.
  if (const auto files = metrics::RaiseOpenFileLimit(); files < 4096)
    spdlog::warn("open files limited to {} (RLIMIT_NOFILE): connections beyond it are refused",
                 files);
  RuntimeOptions ro;
  if (auto configured = ConfigurePipeline(o, ro); !configured) return Fail(configured.error(), 2);
  auto pricing = LoadPricing(o.pricing_file);
  if (!pricing) return Fail(pricing.error(), 2);
  auto guard_config = LoadGuardConfig(o.guard_config);
  if (!guard_config) return Fail(guard_config.error(), 2);
  ro.pipeline.guard = *guard_config;
  ro.pipeline.pricing = &*pricing;
  ro.pipeline.cost_policy = o.policy;
  const auto signals = BlockStopSignals();  // before any thread starts
  const std::string node_name = NodeName(o.node_name);
  AgentSources sources;
  if (const int code = StartSources(o, node_name, sources); code != 0) return code;
  AgentStore store;
  if (const int code = OpenStore(o, store, ro); code != 0) return code;
  SetSamplingAndServing(o, node_name, sources, ro);
  auto rt = NodeRuntime::Start(std::move(ro));
  if (!rt) return Fail(rt.error(), rt.error().code == ErrorCode::kInvalidInput ? 2 : 1);
  const auto& caps = (*rt)->capabilities();
  spdlog::info("gpumeter agent on node {}: NVML {} (driver {}), serving {}/metrics{}",
               (*rt)->State()->node, caps.library_path,
               caps.driver_version.empty() ? "?" : caps.driver_version, (*rt)->url(),
               (*rt)->probe_url().empty() ? "" : ", probes on " + (*rt)->probe_url());
  ServeUntilSignal(**rt, signals, o.shutdown_grace, store.recorder.get());
  rt->reset();
  // 0 even when intervals were lost at the stop (logged and counted above): a rollout stops
  // every agent, and an exit code other than 0 would mark the pods Error.
  return 0;
}

}  // namespace gpumeter::app
