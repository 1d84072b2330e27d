#include "cli/demo.h"

#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <cstdlib>

#include "cli/paths.h"
#include "cli/scenario_context.h"
#include "cli/table.h"
#include "metrics/http_server.h"
#include "nvml/nvml_gpu_source.h"
#include "sampler/sampler.h"
#include "scenario/loader.h"

namespace gpumeter::cli {

void AddDemoCommand(CLI::App& app, DemoOptions& o) {
  auto* cmd = app.add_subcommand("demo", "Run the agent on a simulated node (fake NVML); no GPU or cluster needed");
  cmd->add_option("--scenario", o.scenario, "Bundled scenario NAME or a scenario FILE")->capture_default_str();
  cmd->add_option("--scenario-dir", o.scenario_dir, "Extra directory to search for bundled scenarios");
  cmd->add_option("--nvml-library", o.nvml_library, "NVML library to load (default: the bundled fake)");
  cmd->add_option("--driver-profile", o.driver_profile, "Fake driver release to emulate")
      ->check(CLI::IsMember({"r580", "r535_43", "r470", "r418"}))->capture_default_str();
  cmd->add_option("--duration", o.duration_s, "Stop after SECONDS (0: run until Ctrl-C)")->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_option("--refresh", o.refresh_s, "Print the table every SECONDS")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--interval", o.interval_s, "Sampling interval in seconds")->check(CLI::Range(0.05, 60.0))->capture_default_str();
  cmd->add_option("--call-deadline", o.call_deadline_s, "Deadline per NVML call in seconds")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--speedup", o.speedup, "Scenario seconds per real second")->check(CLI::Range(0.01, 1000.0))->capture_default_str();
  cmd->add_option("--listen", o.listen, "HOST:PORT for /metrics (port 0: any free port)")->capture_default_str();
}

int RunDemo(const DemoOptions& o, const std::string& argv0) {
  const auto exe_dir = ExeDir(argv0);
  // Validate here, so a bad scenario stops the demo with the loader's message instead of a
  // driver-style error code from the fake library.
  auto loaded = LoadScenario(o.scenario, o.scenario_dir, exe_dir);
  if (!loaded) {
    spdlog::error("{}", loaded.error().message);
    return 2;
  }
  const auto path = &loaded->path;
  auto scen = std::make_shared<const scenario::Scenario>(std::move(loaded->scenario));
  if (auto listen = metrics::ParseListen(o.listen); !listen) {
    spdlog::error("{}", listen.error().message);
    return 2;
  }

  // The fake library reads its scenario and clock from the environment at nvmlInit.
  ::setenv("GPUMETER_FAKE_NVML_SCENARIO", path->c_str(), 1);
  ::setenv("GPUMETER_FAKE_NVML_SPEEDUP", fmt::format("{}", o.speedup).c_str(), 1);

  // Block SIGINT/SIGTERM before any thread starts, then wait for them with sigtimedwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  sampler::CallWatch watch;
  nvml::NvmlSourceOptions nvml_options;
  nvml_options.library_candidates = FakeLibraryCandidates(o.nvml_library, o.driver_profile, exe_dir);
  nvml_options.observer = &watch;
  nvml_options.first_util_lookback_us = static_cast<uint64_t>(o.interval_s * 1e6);
  auto source = nvml::NvmlGpuSource::Create(nvml_options);
  if (!source) {
    spdlog::error("{}", source.error().message);
    return 1;
  }
  const auto& caps = (*source)->capabilities();
  const auto start = std::chrono::steady_clock::now();
  auto ctx = MakeScenarioContext(scen, [start, speedup = o.speedup] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() * speedup;
  });

  sampler::Sampler sampler(**source, watch,
                           {std::chrono::milliseconds(static_cast<int64_t>(o.interval_s * 1000)),
                            std::chrono::milliseconds(static_cast<int64_t>(o.call_deadline_s * 1000))});
  metrics::HttpServer http(sampler, ctx);
  if (auto started = http.Start(o.listen); !started) {
    spdlog::error("{}", started.error().message);
    return 1;
  }
  sampler.Start();

  fmt::print("gpumeter demo: scenario '{}' ({}), {} GPU(s), node {}\n", scen->name, *path, scen->gpus.size(), scen->node_name);
  fmt::print("NVML: {} (driver {}, {}; memory: {}; per-process utilization: {}; GPM: {})\n", caps.library_path,
             caps.driver_version.empty() ? "?" : caps.driver_version, caps.process_api, caps.memory_api,
             caps.util_api.empty() ? "none" : caps.util_api, caps.gpm ? "yes" : "no");
  fmt::print("metrics: {}/metrics   health: {}/healthz   ready: {}/readyz\n", http.url(), http.url(), http.url());
  std::fflush(stdout);

  // Per-process samples and GPM activity are rates over the window between two passes.
  sampler.WaitForPass(2, std::chrono::milliseconds(static_cast<int64_t>((o.interval_s + o.call_deadline_s) * 2000)));
  const auto deadline = start + std::chrono::duration<double>(o.duration_s);
  int received = 0;
  for (;;) {
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("\n--- t={:.0f}s (scenario t={:.0f}s) ---\n{}", t, t * o.speedup, RenderTable(sampler.Health(), ctx));
    std::fflush(stdout);
    auto wait = std::chrono::duration<double>(o.refresh_s);
    if (o.duration_s > 0) {
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero()) break;
      if (left < wait) wait = left;
    }
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
    timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    received = sigtimedwait(&signals, nullptr, &ts);
    if (received > 0) break;
  }
  if (received > 0) fmt::print("\nstopping on signal {}\n", received);
  http.Stop();
  sampler.Stop();
  return 0;
}

}  // namespace gpumeter::cli
