// Benchmarks of the foundation's hot paths, over the fake NVML with a pinned clock:
//   - one sampling pass of the 8-GPU node (every NVML call the agent makes per interval);
//   - one /metrics render from the latest sample (what each scrape costs).
// Run: build/bench/gpumeter_bench  (medians: --benchmark_repetitions=9 --benchmark_report_aggregates_only=true)
#include <benchmark/benchmark.h>

#include "cli/scenario_context.h"
#include "metrics/snapshot_metrics.h"
#include "scenario/loader.h"
#include "support/fake_nvml.h"

namespace {

using gpumeter::testing::FakeNvml;
using gpumeter::testing::ScenarioPath;

void BM_SamplePass(benchmark::State& state, const char* scenario, const char* profile) {
  FakeNvml fake(profile, ScenarioPath(scenario), 100);
  double t = 100;
  for (auto _ : state) {
    t += 1;  // one scenario second per pass, as the agent's interval
    fake.SetTime(t);
    auto snap = fake.source().Sample();
    benchmark::DoNotOptimize(snap);
  }
}
BENCHMARK_CAPTURE(BM_SamplePass, node8gpu_r580, "node-8gpu", "r580")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_SamplePass, node8gpu_r470, "node-8gpu", "r470")->Unit(benchmark::kMicrosecond);

void BM_RenderMetrics(benchmark::State& state) {
  FakeNvml fake("r580", ScenarioPath("node-8gpu"), 100);
  (void)fake.Sample();
  fake.SetTime(101);
  auto result = std::make_shared<gpumeter::sampler::SampleResult>();
  result->ok = true;
  result->snapshot = fake.Sample();
  gpumeter::sampler::SamplerHealth health;
  health.latest = health.last_good = result;
  auto scen = gpumeter::scenario::LoadScenarioFile(ScenarioPath("node-8gpu"));
  const auto ctx = gpumeter::cli::MakeScenarioContext(
      std::make_shared<const gpumeter::scenario::Scenario>(std::move(*scen)), [] { return 101.0; });
  size_t bytes = 0;
  for (auto _ : state) {
    const auto text = gpumeter::metrics::RenderText(
        gpumeter::metrics::BuildFamilies(health, ctx, std::chrono::steady_clock::now()));
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_RenderMetrics)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
