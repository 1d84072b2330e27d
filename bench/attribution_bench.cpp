// One attribution step on a large node: 8 GPUs with 7 MIG instances each plus 8 time-sliced
// GPUs (64 units), 500 processes, 400 containers (each holding one unit).
//   - BM_AttributeLargeNode: the core rules only (observations in, ledgers out);
//   - BM_AccountantStepLargeNode: the whole step from device samples (Observe: means, SM shares,
//     MIG energy split; then the rules), with the process's resident memory before and after
//     10,000 steps as counters (rss_growth_kib should be ~0: no state grows with time).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <string>

#include "core/attribution/accountant.h"
#include "core/attribution/attribute.h"
#include "domain/node_snapshot.h"

namespace {

using namespace gpumeter::attribution;
namespace gpu = gpumeter::gpu;

Owner ContainerOf(uint32_t i) {
  return Owner{OwnerKind::kContainer, "ns" + std::to_string(i % 20),
               "pod-" + std::to_string(i % 400), "c"};
}

std::vector<UnitObservation> LargeNode() {
  std::mt19937_64 rng(1);
  std::vector<UnitObservation> units;
  auto unit = [&](std::string uuid, SharingMode mode, uint64_t total, uint64_t used,
                  uint64_t reserved, double busy, std::optional<double> energy) {
    UnitObservation u;
    u.uuid = std::move(uuid);
    u.mode = mode;
    u.memory_total_bytes = total;
    u.memory_used_bytes = used;
    u.memory_reserved_bytes = reserved;
    u.busy_fraction = busy;
    u.energy_joules = energy;
    u.energy_rule = gpumeter::domain::Rule::kEnergyCounterDelta;
    units.push_back(std::move(u));
  };
  for (int g = 0; g < 8; ++g)
    for (int m = 0; m < 7; ++m)
      unit("MIG-" + std::to_string(g) + "-" + std::to_string(m), SharingMode::kMig, 10ull << 30,
           4ull << 30, 0, 0.5, 50.0);
  for (int g = 0; g < 8; ++g)
    unit("GPU-" + std::to_string(g), SharingMode::kTimeSlicing, 80ull << 30, 60ull << 30,
         1ull << 29, 0.8, 800.0);
  for (uint32_t pid = 0; pid < 500; ++pid) {
    ProcessObservation p;
    p.pid = 1000 + pid;
    p.owner = ContainerOf(pid);
    p.memory_bytes = 1ull << 28;
    auto& u = pid < 56 ? units[pid] : units[56 + pid % 8];
    if (u.mode != SharingMode::kMig) p.sm_fraction = 0.001 * static_cast<double>(rng() % 100);
    u.processes.push_back(p);
  }
  for (uint32_t c = 0; c < 400; ++c)
    units[c < 56 ? c : 56 + c % 8].holders.push_back({ContainerOf(c), c < 56 ? 1.0 : 1.0 / 50});
  return units;
}

void BM_AttributeLargeNode(benchmark::State& state) {
  const auto units = LargeNode();
  for (auto _ : state) {
    for (const auto& u : units) {
      auto ledger = AttributeUnit(u, 1.0);
      benchmark::DoNotOptimize(ledger);
    }
  }
}
BENCHMARK(BM_AttributeLargeNode)->Unit(benchmark::kMicrosecond);

// The same node as NVML samples at time t (seconds).
gpu::GpuSnapshot LargeSnapshot(double t) {
  gpu::GpuSnapshot snap;
  const auto now_us = static_cast<uint64_t>(1.7e15 + t * 1e6);
  snap.timestamp_us = now_us;
  uint32_t pid = 1000;
  for (uint32_t g = 0; g < 16; ++g) {
    gpu::DeviceSample d;
    d.index = g;
    d.uuid = "GPU-" + std::to_string(g);
    d.memory = gpu::MemoryInfo{80ull << 30, 60ull << 30, 1ull << 29, 20ull << 30};
    d.energy_joules = 1e6 + t * (300 + 20 * (g % 3) + 10 * std::sin(t));
    d.power_watts = 300;
    if (g < 8) {
      d.mig_enabled = true;
      d.process_utilization_supported = false;
      d.mig_total_slices = 7;
      for (uint32_t m = 0; m < 7; ++m) {
        gpu::MigInstanceSample mi;
        mi.uuid = "MIG-" + std::to_string(g) + "-" + std::to_string(m);
        mi.gpu_instance_id = m;
        mi.slices = 1;
        mi.memory = gpu::MemoryInfo{10ull << 30, 4ull << 30, 0, 6ull << 30};
        mi.sm_active_ratio = 0.3 + 0.05 * m + 0.1 * std::sin(t);
        mi.processes.push_back({pid++, gpu::ProcessType::kCompute, 1ull << 28, m, 0});
        d.mig_instances.push_back(std::move(mi));
      }
    } else {
      d.sm_active_ratio = 0.8;
      d.process_util_window_start_us = now_us - 1000000;
      d.process_util_window_end_us = now_us;
      d.process_util_period_us = 166667;
      for (uint32_t i = 0; i < 56; ++i) {
        const uint32_t p = pid++;
        d.processes.push_back(
            {p, gpu::ProcessType::kCompute, 1ull << 28, std::nullopt, std::nullopt});
        for (uint64_t k = 0; k < 6; ++k)
          d.process_util.push_back(
              {p, now_us - 1000000 + k * 166667, (p * 7 + static_cast<uint32_t>(k)) % 20, 0});
      }
    }
    snap.devices.push_back(std::move(d));
  }
  return snap;
}

long RssKib() {
  std::ifstream in("/proc/self/status");
  std::string key;
  long value = 0;
  while (in >> key) {
    if (key == "VmRSS:") {
      in >> value;
      return value;
    }
    in.ignore(4096, '\n');
  }
  return 0;
}

// The pass's snapshot as the pipeline assembles it: every PID's owner, each unit time-sliced and
// held by one container.
std::shared_ptr<const gpumeter::domain::NodeSnapshot> LargeNodeSnapshot(int i) {
  auto s = std::make_shared<gpumeter::domain::NodeSnapshot>();
  s->ok = true;
  s->gpus = LargeSnapshot(i);
  for (const uint32_t pid : gpumeter::domain::SamplePids(s->gpus)) {
    const Owner o = ContainerOf(pid % 400);
    s->processes.push_back({pid,
                            gpumeter::domain::ProcessStart{pid, std::nullopt},
                            {o.kind, o.ns, o.pod, o.container, "bench"},
                            std::nullopt,
                            "",
                            {}});
  }
  for (const auto& d : s->gpus.devices) {
    s->units.push_back({d.uuid,
                        d.mig_enabled ? SharingMode::kMig : SharingMode::kTimeSlicing,
                        {{ContainerOf(static_cast<uint32_t>(d.uuid.size())), 1.0}}});
    for (const auto& m : d.mig_instances)
      s->units.push_back(
          {m.uuid, SharingMode::kMig, {{ContainerOf(static_cast<uint32_t>(m.uuid.size())), 1.0}}});
  }
  std::sort(s->units.begin(), s->units.end(),
            [](const auto& a, const auto& b) { return a.uuid < b.uuid; });
  return s;
}

void BM_AccountantStepLargeNode(benchmark::State& state) {
  Accountant acc;
  // Inputs are built up front so the loop times the step alone (owners are resolved when the
  // pipeline assembles the snapshot, which BM_PipelinePass times).
  std::vector<std::shared_ptr<const gpumeter::domain::NodeSnapshot>> inputs;
  for (int i = 0; i < 64; ++i) inputs.push_back(LargeNodeSnapshot(i));
  acc.Prime(LargeNodeSnapshot(-1));
  // Warm up past the point where every map and the idle-power fit are populated, then measure
  // resident memory across 10,000 further intervals.
  for (int i = 0; i < 200; ++i)
    benchmark::DoNotOptimize(acc.Step(inputs[static_cast<size_t>(i) % inputs.size()], 1.0));
  const long before = RssKib();
  for (int i = 0; i < 10000; ++i)
    benchmark::DoNotOptimize(acc.Step(inputs[static_cast<size_t>(i) % inputs.size()], 1.0));
  const long after = RssKib();
  size_t i = 0;
  for (auto _ : state) {
    auto ledgers = acc.Step(inputs[i++ % inputs.size()], 1.0);
    benchmark::DoNotOptimize(ledgers);
  }
  state.counters["rss_kib"] = static_cast<double>(after);
  state.counters["rss_growth_kib"] = static_cast<double>(after - before);
}
BENCHMARK(BM_AccountantStepLargeNode)->Unit(benchmark::kMicrosecond);

}  // namespace
