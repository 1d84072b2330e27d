#include "app/sim/demo.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "app/agent/rightsize_runner.h"
#include "app/agent/runtime.h"
#include "app/config_files.h"
#include "app/diagnose/doctor_demo.h"
#include "app/sim/paths.h"
#include "app/sim/scenario_node.h"
#include "app/usage/report.h"
#include "app/usage/rightsize.h"
#include "sim/scenario/loader.h"
#include "sinks/sim/table.h"
#include "sources/dcgm/dcgm_source.h"
#include "store/writer/usage_recorder.h"

namespace gpumeter::app {
namespace {

// What the options name, loaded and checked before anything starts.
struct DemoInputs {
  LoadedScenario loaded;
  cost::Pricing pricing;
  guard::GuardConfig guard;
};

Expected<DemoInputs> LoadInputs(const DemoOptions& o, const std::filesystem::path& exe_dir) {
  // Run until Ctrl-C, faster than real time, into a store that is kept: its minutes would run
  // ahead of now with no end to set the clock back from.
  if (o.speedup > 1 && o.duration.count() == 0 && !o.store.empty())
    return MakeError(
        ErrorCode::kInvalidInput,
        fmt::format("--speedup {} with --store and --duration 0: the scenario clock runs {}x the "
                    "wall clock, so the store would record minutes after now with no end to start "
                    "the clock back from; give --duration (the clock then starts in the past and "
                    "ends now)",
                    o.speedup, o.speedup));
  // Validate here, so a bad scenario stops the demo with the loader's message instead of a
  // driver-style error code from the fake library.
  auto loaded = LoadScenario(o.scenario, o.scenario_dir, exe_dir);
  if (!loaded) return tl::unexpected(loaded.error());
  if (auto listen = metrics::ParseListen(o.listen); !listen) return tl::unexpected(listen.error());
  auto pricing = LoadPricing(o.pricing_file);
  if (!pricing) return tl::unexpected(pricing.error());
  auto guard_config = LoadGuardConfig(o.guard_config);
  if (!guard_config) return tl::unexpected(guard_config.error());
  // A scenario lasts minutes, not the agent's hour: idle allocations show within the demo.
  // The demo's minutes are a few seconds each: an idle allocation shows in 3 minutes, clocks held
  // down in 3 seconds (docs/guardrails.md).
  if (o.guard_config.empty()) guard_config->idle_window_s = 180, guard_config->slowdown_hold_s = 3;
  return DemoInputs{std::move(*loaded), std::move(*pricing), std::move(*guard_config)};
}

// The fake library reads its scenario and clock from the environment at nvmlInit. Its sample
// stamps are epoch0 + scenario time; the agent's wall clock is made to agree, so per-process
// sample windows line up at any speedup. Faster than real time, the scenario clock starts
// duration × (speedup − 1) in the past, so that it reaches now as the demo ends: the store never
// holds a minute after now (`report` right after the demo reads what it recorded, and the
// default window ends now). Returns epoch0 (µs since the Unix epoch).
uint64_t SetFakeNvmlEnvironment(const std::string& scenario_path, double speedup,
                                Seconds duration) {
  const auto now_us = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                                std::chrono::system_clock::now().time_since_epoch())
                                                .count());
  const auto ahead_us =
      speedup > 1 ? static_cast<uint64_t>(duration.count() * (speedup - 1) * 1e6) : uint64_t{0};
  const uint64_t epoch0 = now_us - std::min(ahead_us, now_us);
  ::setenv("GPUMETER_FAKE_NVML_SCENARIO", scenario_path.c_str(), 1);
  ::setenv("GPUMETER_FAKE_NVML_SPEEDUP", fmt::format("{}", speedup).c_str(), 1);
  ::setenv("GPUMETER_FAKE_NVML_EPOCH_US", std::to_string(epoch0).c_str(), 1);
  return epoch0;
}

// The scenario clock the fake NVML runs on: wall time × speedup since `start`.
std::function<double()> ScenarioClock(std::chrono::steady_clock::time_point start, double speedup) {
  return [start, speedup] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() *
           speedup;
  };
}

RuntimeOptions DemoRuntime(const DemoOptions& o, const DemoInputs& in, ScenarioNode& node,
                           const std::filesystem::path& exe_dir) {
  RuntimeOptions ro;
  ro.nvml.library_candidates = FakeLibraryCandidates(o.nvml_library, o.driver_profile, exe_dir);
  ro.nvml.first_util_lookback_us = static_cast<uint64_t>(o.interval.count() * 1e6);
  ro.nvml.watch_xid = true;
  ro.interval = o.interval;
  ro.call_deadline = o.call_deadline;
  ro.drain_interval = o.drain_interval;
  ro.pipeline = node.pipeline_options();
  ro.sources = node.sources();
  ro.pipeline.time_scale = o.speedup;
  ro.pipeline.guard = in.guard;
  ro.pipeline.pricing = &in.pricing;
  ro.pipeline.cost_policy = o.policy;
  ro.exposition.pod_label_keys = {"team"};
  // The demo shows how each GPU process resolves to its pod; an agent exports them on request.
  ro.exposition.process_series = true;
  // The agent's default set unless asked for the full one: what a scrape of the demo shows is
  // what an agent's shows.
  ro.exposition.container_series = o.full_container_series ? metrics::ContainerSeries::kFull
                                                           : metrics::ContainerSeries::kDefault;
  ro.http.listen = o.listen;
  ro.probe.listen = o.probe_listen;
  return ro;
}

void PrintBanner(const DemoInputs& in, const ScenarioNode& node, const NodeRuntime& rt,
                 const std::string& store_path) {
  const auto& scen = in.loaded.scenario;
  const auto& caps = rt.capabilities();
  fmt::print("gpumeter demo: scenario '{}' ({}), {} GPU(s), node {}\n", scen.name, in.loaded.path,
             scen.gpus.size(), scen.node_name);
  fmt::print("NVML: {} (driver {}, {}; memory: {}; per-process utilization: {}; GPM: {})\n",
             caps.library_path, caps.driver_version.empty() ? "?" : caps.driver_version,
             caps.process_api, caps.memory_api, caps.util_api.empty() ? "none" : caps.util_api,
             caps.gpm ? "yes" : "no");
  fmt::print("kubelet: {} (fake, gRPC)   pods: {}   /proc: {}\n", node.files().kubelet_socket(),
             node.files().pods_file().string(), node.files().proc_root().string());
  fmt::print("resource slices: {}\n", node.files().resource_slices_file().string());
  if (!node.dcgm_url().empty())
    fmt::print("dcgm-exporter: {} (fake; GR engine activity of MIG instances)\n", node.dcgm_url());
  const std::string probes = rt.probe_url().empty() ? rt.url() : rt.probe_url();
  fmt::print("metrics: {}/metrics   health: {}/healthz   ready: {}/readyz\n", rt.url(), probes,
             probes);
  fmt::print("usage store: {}\n", store_path);
  std::fflush(stdout);
}

// The node's dcgm-exporter, as the agent's --dcgm-metrics reads it, on the scenario's clock;
// null when the scenario has none.
std::unique_ptr<dcgm::DcgmSource> StartDcgm(const ScenarioNode& node, const DemoOptions& o,
                                            std::function<uint64_t()> wall_clock_us) {
  if (node.dcgm_url().empty()) return nullptr;
  dcgm::DcgmSourceOptions dopt;
  dopt.url = node.dcgm_url();
  dopt.poll_interval_s = std::min(2.0, o.interval.count());
  dopt.clock_s = [clock = std::move(wall_clock_us)] { return static_cast<double>(clock()) / 1e6; };
  auto dcgm = std::make_unique<dcgm::DcgmSource>(dopt);
  dcgm->Start();
  return dcgm;
}

// Writes what `gpumeter doctor --demo FILE` needs to check this node as the agent sees it
// (app/diagnose/doctor_demo.h), and prints the command.
void PrintDoctorFile(const DemoInputs& in, const DemoOptions& o, const ScenarioNode& node,
                     const NodeRuntime& rt, uint64_t epoch0, uint64_t started_us) {
  namespace fs = std::filesystem;
  const auto file = node.files().dir() / "doctor.yaml";
  const auto& files = node.files();
  if (auto w = WriteDemoNode(
          file,
          {in.loaded.scenario.node_name, fs::absolute(rt.capabilities().library_path).string(),
           fs::absolute(files.kubelet_socket()).string(), fs::absolute(files.proc_root()).string(),
           fs::absolute(files.pods_file()).string(), node.dcgm_url(),
           fs::absolute(in.loaded.path).string(), o.speedup, epoch0, started_us});
      w)
    fmt::print("doctor: gpumeter doctor --demo {}\n", file.string());
  else
    spdlog::warn("{}", w.error().message);
  std::fflush(stdout);
}

// Prints the table every --refresh until --duration passes or a signal comes; the signal, or 0.
int ShowUntilDone(const DemoOptions& o, const NodeRuntime& rt, const sigset_t& signals,
                  std::chrono::steady_clock::time_point start) {
  // Per-process samples and GPM activity are rates over the window between two passes.
  rt.WaitForPass(2, ToMilliseconds(2 * (o.interval + o.call_deadline)));
  const auto deadline = start + o.duration;
  for (;;) {
    const double t =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("\n--- t={:.0f}s (scenario t={:.0f}s) ---\n{}", t, t * o.speedup,
               RenderTable(rt.Health(), *rt.State()));
    std::fflush(stdout);
    Seconds wait = o.refresh;
    if (o.duration > Seconds(0)) {
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero()) return 0;
      if (left < wait) wait = left;
    }
    if (const int received = WaitForSignal(signals, wait); received > 0) return received;
  }
}

// The closing chargeback and rightsizing, read back from the store the run recorded.
int PrintClosing(const DemoOptions& o, const std::string& store_path, const store::Store& store,
                 const RightsizeOptions& rightsize_options) {
  ReportOptions ro_report;
  ro_report.source = {UsageSource::Kind::kStore, store_path};
  ro_report.pricing_file = o.pricing_file;
  ro_report.policy = o.policy;
  auto summary = RenderReport(ro_report, 0);
  if (!summary) {
    spdlog::error("chargeback: {}", summary.error().message);
    return 1;
  }
  fmt::print("\n--- chargeback (from {}; `gpumeter report --source sqlite:PATH` for more) ---\n{}",
             store_path, *summary);
  // A demo lasts minutes: the minimum history is 2 minutes, not the day a real recommendation
  // wants (docs/rightsizing.md).
  auto sizes = RenderRightsize(store, rightsize_options);
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

}  // namespace

int RunDemo(const DemoOptions& o, const std::string& argv0) {
  const auto exe_dir = ExeDir(argv0);
  auto in = LoadInputs(o, exe_dir);
  if (!in) {
    spdlog::error("{}", in.error().message);
    return 2;
  }
  const uint64_t epoch0 = SetFakeNvmlEnvironment(in->loaded.path, o.speedup, o.duration);
  const auto signals = BlockStopSignals();  // before any thread starts
  auto node = ScenarioNode::Start(in->loaded, exe_dir);
  if (!node) {
    spdlog::error("{}", node.error().message);
    return 1;
  }
  RuntimeOptions ro = DemoRuntime(o, *in, **node, exe_dir);
  const auto start = std::chrono::steady_clock::now();
  const auto started_us =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count());
  const auto scenario_now = ScenarioClock(start, o.speedup);
  ro.nvml.wall_clock_us = [epoch0, scenario_now] {
    return epoch0 + static_cast<uint64_t>(scenario_now() * 1e6);
  };
  const auto dcgm = StartDcgm(**node, o, ro.nvml.wall_clock_us);
  ro.sources.dcgm = dcgm.get();
  ro.before_pass = [scen_node = node->get(), scenario_now] {
    if (auto r = scen_node->RefreshProc(scenario_now()); !r)
      spdlog::warn("demo /proc fixture: {}", r.error().message);
  };
  ro.before_drain = ro.before_pass;
  // Usage into the store, as the agent does with --store; the closing chargeback reads it back.
  const std::string store_path =
      o.store.empty() ? ((*node)->files().dir() / "usage.db").string() : o.store;
  // Watched like the agent's: a deleted or replaced file is opened again (store_keeper.h).
  StoreKeeper keeper(
      {store_path, {}, std::chrono::seconds(5), std::chrono::seconds(1), std::chrono::seconds(60)});
  if (auto first = keeper.Ensure(StoreKeeper::Clock::now());
      !first || *first != StoreKeeper::Event::kOpen) {
    spdlog::error("{}", first ? keeper.Status().last_error : first.error().message);
    return 1;
  }
  UsageRecorder recorder(keeper);
  ro.after_pass = [&recorder](const node::NodeState& state) { recorder.Record(state); };
  ro.pipeline.store_health = [&recorder] {
    return std::optional<node::StoreHealth>(recorder.Health());
  };
  // Rightsizing metrics from the same store, every 5 s (a demo's history is minutes long).
  RightsizeOptions rightsize_options;
  rightsize_options.pricing_file = o.pricing_file;
  rightsize_options.min_history = Seconds(120);
  RightsizeRunner rightsizer(keeper, rightsize_options, std::chrono::seconds(5),
                             std::chrono::seconds(5));  // borrows the keeper, declared above
  ro.pipeline.rightsizing = [&rightsizer] { return rightsizer.Latest(); };
  auto rt = NodeRuntime::Start(std::move(ro));
  if (!rt) {
    spdlog::error("{}", rt.error().message);
    return 1;
  }
  PrintBanner(*in, **node, **rt, store_path);
  PrintDoctorFile(*in, o, **node, **rt, epoch0, started_us);
  if (const int received = ShowUntilDone(o, **rt, signals, start); received > 0)
    fmt::print("\nstopping on signal {}\n", received);
  (*rt)->StopSampling();  // the store now holds every interval; /metrics shows the same totals
  recorder.Flush(std::chrono::seconds(2));  // what a busy store still holds back: written, or said
  if (o.shutdown_grace > Seconds(0)) std::this_thread::sleep_for(o.shutdown_grace);
  rt->reset();
  const auto store = keeper.Current();
  if (!store) {
    spdlog::error("{}", keeper.Status().last_error);
    return 1;
  }
  return PrintClosing(o, store_path, *store, rightsize_options);
}

}  // namespace gpumeter::app
