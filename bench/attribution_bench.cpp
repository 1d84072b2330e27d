// One attribution step on a large node: 8 GPUs with 7 MIG instances each plus 8 time-sliced
// GPUs (64 units), 500 processes, 400 containers.
#include <benchmark/benchmark.h>

#include <random>

#include "attribution/attribute.h"

namespace {

using namespace gpumeter::attribution;

std::vector<UnitObservation> LargeNode() {
  std::mt19937_64 rng(1);
  std::vector<UnitObservation> units;
  for (int g = 0; g < 8; ++g)
    for (int m = 0; m < 7; ++m)
      units.push_back({"MIG-" + std::to_string(g) + "-" + std::to_string(m), SharingMode::kMig, 10ull << 30,
                       4ull << 30, 0, 0.5, {}, std::nullopt, ""});
  for (int g = 0; g < 8; ++g)
    units.push_back({"GPU-" + std::to_string(g), SharingMode::kTimeSlicing, 80ull << 30, 60ull << 30, 1ull << 29, 0.8, {}, 800.0, "energy counter delta"});
  for (uint32_t pid = 0; pid < 500; ++pid) {
    ProcessObservation p;
    p.pid = 1000 + pid;
    p.owner = Owner{OwnerKind::kContainer, "ns" + std::to_string(pid % 20), "pod-" + std::to_string(pid % 400), "c"};
    p.memory_bytes = 1ull << 28;
    auto& u = pid < 56 ? units[pid] : units[56 + pid % 8];
    if (u.mode != SharingMode::kMig) p.sm_fraction = 0.001 * static_cast<double>(rng() % 100);
    u.processes.push_back(p);
  }
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

}  // namespace
