#include "app/demo.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <thread>

#include "app/node_config.h"
#include "app/paths.h"
#include "app/report.h"
#include "app/rightsize.h"
#include "app/rightsize_runner.h"
#include "app/runtime.h"
#include "app/table.h"
#include "app/usage_recorder.h"
#include "sim/node/scenario_context.h"
#include "sim/node/simulated_node.h"
#include "sim/scenario/loader.h"
#include "sources/kube_api/pod_source.h"
#include "sources/kubelet/pod_resources_source.h"

namespace gpumeter::app {

int RunDemo(const DemoOptions& o, const std::string& argv0) {
  const auto exe_dir = ExeDir(argv0);
  // Validate here, so a bad scenario stops the demo with the loader's message instead of a
  // driver-style error code from the fake library.
  auto loaded = LoadScenario(o.scenario, o.scenario_dir, exe_dir);
  if (!loaded) {
    spdlog::error("{}", loaded.error().message);
    return 2;
  }
  const auto path = loaded->path;
  const scenario::Scenario& scen = loaded->scenario;
  if (auto listen = metrics::ParseListen(o.listen); !listen) {
    spdlog::error("{}", listen.error().message);
    return 2;
  }
  auto pricing = LoadPricing(o.pricing_file);
  auto guard_config = LoadGuardConfig(o.guard_config);
  for (const Error* e :
       {pricing ? nullptr : &pricing.error(), guard_config ? nullptr : &guard_config.error()})
    if (e) {
      spdlog::error("{}", e->message);
      return 2;
    }
  // A scenario lasts minutes, not the agent's hour: idle allocations show within the demo.
  if (o.guard_config.empty()) guard_config->idle_window_s = 180;

  // The fake library reads its scenario and clock from the environment at nvmlInit. Its sample
  // stamps are epoch0 + scenario time; the agent's wall clock is made to agree (below), so
  // per-process sample windows line up at any speedup.
  const auto epoch0 = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                                std::chrono::system_clock::now().time_since_epoch())
                                                .count());
  ::setenv("GPUMETER_FAKE_NVML_SCENARIO", path.c_str(), 1);
  ::setenv("GPUMETER_FAKE_NVML_SPEEDUP", fmt::format("{}", o.speedup).c_str(), 1);
  ::setenv("GPUMETER_FAKE_NVML_EPOCH_US", std::to_string(epoch0).c_str(), 1);
  const auto signals = BlockStopSignals();  // before any thread starts

  // The node's Kubernetes side, for real: kubelet socket, pods, /proc.
  auto simnode = sim::SimulatedNode::Create(scen);
  if (!simnode) {
    spdlog::error("{}", simnode.error().message);
    return 1;
  }
  kubelet::PodResourcesOptions ko;
  ko.socket_path = (*simnode)->kubelet_socket();
  kubelet::PodResourcesSource kubelet(std::make_unique<kubelet::PodResourcesClient>(ko));
  node::PodsFileSource pods((*simnode)->pods_file());

  RuntimeOptions ro;
  ro.nvml.library_candidates = FakeLibraryCandidates(o.nvml_library, o.driver_profile, exe_dir);
  ro.nvml.first_util_lookback_us = static_cast<uint64_t>(o.interval_s * 1e6);
  ro.interval_s = o.interval_s;
  ro.call_deadline_s = o.call_deadline_s;
  ro.pipeline.node = scen.node_name;
  ro.pipeline.proc_root = (*simnode)->proc_root();
  ro.pipeline.time_scale = o.speedup;
  // The operator's sharing configuration (as --sharing would give it); MIG parents come from NVML.
  ro.pipeline.evidence = sim::ScenarioSharingEvidence(scen);
  ro.pipeline.evidence.mig_parent.clear();
  ro.sources = {&kubelet, &pods, nullptr};
  ro.pipeline.guard = *guard_config;
  ro.pipeline.pricing = &*pricing;
  ro.exposition.pod_label_keys = {"team"};
  ro.http.listen = o.listen;
  // The scenario clock the fake NVML runs on: wall time × speedup since it started.
  const auto start = std::chrono::steady_clock::now();
  auto scenario_now = [start, speedup = o.speedup] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() *
           speedup;
  };
  ro.nvml.wall_clock_us = [epoch0, scenario_now] {
    return epoch0 + static_cast<uint64_t>(scenario_now() * 1e6);
  };
  ro.before_pass = [&simnode, scenario_now] {
    if (auto r = (*simnode)->RefreshProc(scenario_now()); !r)
      spdlog::warn("demo /proc fixture: {}", r.error().message);
  };
  // Usage into the store, as the agent does with --store; the closing chargeback is read back from
  // it.
  const std::string store_path =
      o.store.empty() ? ((*simnode)->dir() / "usage.db").string() : o.store;
  auto store = store::Store::Open(store_path);
  if (!store) {
    spdlog::error("{}", store.error().message);
    return 1;
  }
  UsageRecorder recorder(**store);
  ro.after_pass = [&recorder](const node::NodeState& state) { recorder.Record(state); };
  // Rightsizing metrics from the same store, every 5 s (a demo's history is minutes long).
  RightsizeOptions rightsize_options;
  rightsize_options.pricing_file = o.pricing_file;
  rightsize_options.min_history = "2m";
  RightsizeRunner rightsizer(**store, rightsize_options, std::chrono::seconds(5),
                             std::chrono::seconds(5));  // borrows the store, declared above
  ro.pipeline.rightsizing = [&rightsizer] { return rightsizer.Latest(); };
  auto rt = NodeRuntime::Start(std::move(ro));
  if (!rt) {
    spdlog::error("{}", rt.error().message);
    return 1;
  }
  const auto& caps = (*rt)->capabilities();
  fmt::print("gpumeter demo: scenario '{}' ({}), {} GPU(s), node {}\n", scen.name, path,
             scen.gpus.size(), scen.node_name);
  fmt::print("NVML: {} (driver {}, {}; memory: {}; per-process utilization: {}; GPM: {})\n",
             caps.library_path, caps.driver_version.empty() ? "?" : caps.driver_version,
             caps.process_api, caps.memory_api, caps.util_api.empty() ? "none" : caps.util_api,
             caps.gpm ? "yes" : "no");
  fmt::print("kubelet: {} (fake, gRPC)   pods: {}   /proc: {}\n", (*simnode)->kubelet_socket(),
             (*simnode)->pods_file().string(), (*simnode)->proc_root().string());
  fmt::print("metrics: {}/metrics   health: {}/healthz   ready: {}/readyz\n", (*rt)->url(),
             (*rt)->url(), (*rt)->url());
  fmt::print("usage store: {}\n", store_path);
  std::fflush(stdout);

  // Per-process samples and GPM activity are rates over the window between two passes.
  (*rt)->WaitForPass(2, std::chrono::milliseconds(
                            static_cast<int64_t>((o.interval_s + o.call_deadline_s) * 2000)));
  const auto deadline = start + std::chrono::duration<double>(o.duration_s);
  int received = 0;
  for (;;) {
    const double t =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("\n--- t={:.0f}s (scenario t={:.0f}s) ---\n{}", t, t * o.speedup,
               RenderTable((*rt)->Health(), *(*rt)->State()));
    std::fflush(stdout);
    std::chrono::duration<double> wait(o.refresh_s);
    if (o.duration_s > 0) {
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero()) break;
      if (left < wait) wait = left;
    }
    received = WaitForSignal(signals, wait);
    if (received > 0) break;
  }
  if (received > 0) fmt::print("\nstopping on signal {}\n", received);
  (*rt)->StopSampling();  // the store now holds every interval; /metrics shows the same totals
  if (o.shutdown_grace_s > 0)
    std::this_thread::sleep_for(std::chrono::duration<double>(o.shutdown_grace_s));
  rt->reset();
  ReportOptions ro_report;
  ro_report.source = "sqlite:" + store_path;
  ro_report.pricing_file = o.pricing_file;
  ro_report.by = "namespace";
  auto summary = RenderReport(ro_report, 0);
  if (!summary) {
    spdlog::error("chargeback: {}", summary.error().message);
    return 1;
  }
  fmt::print("\n--- chargeback (from {}; `gpumeter report --source sqlite:PATH` for more) ---\n{}",
             store_path, *summary);
  // Rightsizing from the same store. A demo lasts minutes: the minimum history is 2 minutes, not
  // the day a real recommendation wants (docs/rightsizing.md).
  auto sizes = RenderRightsize(**store, rightsize_options);
  if (!sizes) {
    spdlog::error("rightsizing: {}", sizes.error().message);
    return 1;
  }
  fmt::print(
      "\n--- rightsizing (history of minutes, not days: a demo; `gpumeter rightsize --source "
      "sqlite:PATH`) ---\n{}",
      *sizes);
  return 0;
}

}  // namespace gpumeter::app
