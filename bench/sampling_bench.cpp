// Benchmarks of the foundation's hot paths, over the fake NVML with a pinned clock:
//   - one sampling pass of the 8-GPU node (every NVML call the agent makes per interval);
//   - one node-pipeline pass (pods, /proc owners, allocations, attribution) over a fixture /proc;
//   - the /proc reads a drain makes for processes it meets between passes;
//   - one /metrics render from the latest NodeState (what each scrape costs).
// Run: build/bench/gpumeter_bench  (medians: --benchmark_repetitions=9
// --benchmark_report_aggregates_only=true)
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <fstream>

#include "node/pipeline/pipeline.h"
#include "sim/node/scenario_fixture.h"
#include "sim/scenario/loader.h"
#include "sinks/metrics/exposition.h"
#include "sources/proc/process_source.h"
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

// The 8-GPU scenario as a node: a fixture /proc and pods file in a temp dir, no kubelet.
struct NodeFixture {
  NodeFixture()
      : dir(std::filesystem::temp_directory_path() /
            ("gpumeter-bench-" + std::to_string(::getpid()))) {
    scen = *gpumeter::scenario::LoadScenarioFile(ScenarioPath("node-8gpu"));
    (void)gpumeter::sim::WriteProcFixture(dir / "proc", scen, 101);
    std::ofstream(dir / "pods.json") << gpumeter::sim::ScenarioPodListJson(scen);
    pods = std::make_unique<gpumeter::kube_api::PodsFileSource>(dir / "pods.json");
    gpumeter::node::PipelineOptions po;
    po.node = scen.node_name;
    po.proc_root = dir / "proc";
    pipeline = std::make_unique<gpumeter::node::NodePipeline>(
        gpumeter::node::PipelineSources{nullptr, pods.get(), nullptr}, po);
  }
  ~NodeFixture() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::filesystem::path dir;
  gpumeter::scenario::Scenario scen;
  std::unique_ptr<gpumeter::kube_api::PodsFileSource> pods;
  std::unique_ptr<gpumeter::node::NodePipeline> pipeline;
};

std::shared_ptr<const gpumeter::gpu::SampleResult> PassAt(FakeNvml& fake, double t, int64_t seq) {
  fake.SetTime(t);
  auto r = std::make_shared<gpumeter::gpu::SampleResult>();
  r->ok = true;
  r->sequence = static_cast<uint64_t>(seq);
  r->taken = std::chrono::steady_clock::time_point{} + std::chrono::seconds(seq);
  r->snapshot = fake.Sample();
  return r;
}

void BM_PipelinePass(benchmark::State& state) {
  FakeNvml fake("r580", ScenarioPath("node-8gpu"), 100);
  NodeFixture node;
  // Samples taken up front: the loop measures the pipeline only.
  std::vector<std::shared_ptr<const gpumeter::gpu::SampleResult>> passes;
  for (int i = 0; i < 64; ++i) passes.push_back(PassAt(fake, 100 + i, i + 1));
  int64_t seq = 1000;
  size_t i = 0;
  for (auto _ : state) {
    auto p = std::make_shared<gpumeter::gpu::SampleResult>(*passes[i++ % passes.size()]);
    p->taken = std::chrono::steady_clock::time_point{} + std::chrono::seconds(++seq);
    node.pipeline->OnPass(std::move(p));
  }
}
BENCHMARK(BM_PipelinePass)->Unit(benchmark::kMicrosecond);

// What a drain costs the process source: every process of the 8-GPU node met between passes
// for the first time, so each is read from the fixture /proc there and then (stat, cgroup,
// environ, its owner among the pods). Per PID: items_per_second. A drain that meets only known
// PIDs reads nothing.
void BM_DrainIdentifyNewPids(benchmark::State& state) {
  NodeFixture node;
  std::vector<uint32_t> pids;
  for (const auto& p : node.scen.processes) pids.push_back(p.pid);
  node.pods->Poll(std::chrono::steady_clock::now());
  const auto pods = node.pods->Current();
  if (!pods) {
    state.SkipWithError("the fixture's pods file did not load");
    return;
  }
  gpumeter::k8s::ProcessSource source(node.dir / "proc", *pods);
  for (auto _ : state) {
    source.Met(pids);
    source.Watch({});  // an empty pass: forgets them, so the next drain reads them afresh
    source.Poll(std::chrono::steady_clock::now());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(pids.size()));
}
BENCHMARK(BM_DrainIdentifyNewPids)->Unit(benchmark::kMicrosecond);

void BM_RenderMetrics(benchmark::State& state) {
  FakeNvml fake("r580", ScenarioPath("node-8gpu"), 100);
  NodeFixture node;
  for (int i = 0; i < 3; ++i) node.pipeline->OnPass(PassAt(fake, 100 + i, i + 1));
  gpumeter::gpu::SamplerHealth health;
  health.latest = health.last_good = node.pipeline->Latest()->last_good;
  const auto st = node.pipeline->Latest();
  size_t bytes = 0;
  for (auto _ : state) {
    const auto text = gpumeter::metrics::RenderText(
        gpumeter::metrics::BuildFamilies(health, *st, {}, std::chrono::steady_clock::now()));
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_RenderMetrics)->Unit(benchmark::kMicrosecond);

// A NodeState with about 20,000 owner series: 64 units with 45 containers each (7 owner series
// per container), as a large, busy node would publish.
gpumeter::node::NodeState LargeState() {
  using gpumeter::domain::Owner;
  using gpumeter::domain::OwnerKind;
  gpumeter::node::NodeState s;
  s.node = "node-large";
  s.intervals = 10;
  for (int u = 0; u < 64; ++u) {
    gpumeter::node::UnitInfo unit;
    unit.uuid = unit.gpu_uuid =
        "GPU-" + std::to_string(1000000 + u) + "-aaaa-bbbb-cccc-dddddddddddd";
    unit.model = "NVIDIA H100 80GB HBM3";
    unit.mode = gpumeter::domain::SharingMode::kTimeSlicing;
    unit.replicas = 48;
    unit.evidence = "device plugin config (sharing.timeSlicing)";
    s.unit_totals[unit.uuid] = {600, 6e13, 2e5, 0, 10, 0, 0, 0, std::nullopt};
    for (int c = 0; c < 45; ++c) {
      const std::string pod =
          "inference-" + std::to_string(u) + "-" + std::to_string(c) + "-7d9f8c6b5-x2k4p";
      unit.holders.push_back({"team-" + std::to_string(c % 12), pod, "server", 1.0 / 48, 1});
      auto& t = s.totals[{unit.uuid, Owner{OwnerKind::kContainer, "team-" + std::to_string(c % 12),
                                           pod, "server"}}];
      t.compute_seconds = 12.5 + c, t.memory_byte_seconds = 1e12 * c, t.energy_joules = 4000.25 * c;
      t.requested_share_seconds = 12.5, t.last_interval = 10, t.last_memory_bytes = 2e9,
      t.last_compute_ratio = 0.02;
    }
    for (auto kind : {OwnerKind::kIdle, OwnerKind::kSystem, OwnerKind::kUnattributed}) {
      auto& t = s.totals[{unit.uuid, Owner{kind, {}, {}, {}}}];
      t.compute_seconds = 10, t.last_interval = 10;
    }
    s.units.push_back(std::move(unit));
  }
  return s;
}

void BM_Render20kSeries(benchmark::State& state, bool openmetrics) {
  const auto st = LargeState();
  gpumeter::gpu::SamplerHealth health;
  // The full set: the series this measures (about 20,000) are the ones a node with
  // --container-series full serves.
  gpumeter::metrics::ExpositionOptions options;
  options.container_series = gpumeter::metrics::ContainerSeries::kFull;
  size_t series = 0, bytes = 0;
  for (auto _ : state) {
    const auto families =
        gpumeter::metrics::BuildFamilies(health, st, options, std::chrono::steady_clock::now());
    const auto text = openmetrics ? gpumeter::metrics::RenderOpenMetrics(families)
                                  : gpumeter::metrics::RenderText(families);
    series = families.series();
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["series"] = static_cast<double>(series);
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK_CAPTURE(BM_Render20kSeries, text, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Render20kSeries, openmetrics, true)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
