// The reference workload of the regression gate (bench/gate.py): fixed work that gpumeter's code
// never changes, run in the same process as the hot-path benchmarks, so each hot path's figure can
// be read as a ratio to it. A loaded or slower machine slows both; a slower hot path moves only
// its own ratio. The work is the hot paths' kind: small allocations, string keys in a sorted map,
// formatting numbers, sorting.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

void BM_Reference(benchmark::State& state) {
  for (auto _ : state) {
    std::mt19937_64 rng(7);  // the same inputs every run
    std::map<std::string, double> totals;
    std::vector<uint64_t> keys(4096);
    for (auto& k : keys) k = rng() % 1000;
    for (size_t i = 0; i < keys.size(); ++i)
      totals["unit-" + std::to_string(keys[i]) + "/owner-" + std::to_string(i % 37)] +=
          static_cast<double>(keys[i]) * 0.5;
    std::vector<double> values;
    values.reserve(totals.size());
    for (const auto& [k, v] : totals) values.push_back(v + static_cast<double>(k.size()));
    std::sort(values.begin(), values.end());
    std::string out;
    for (const double v : values) out += std::to_string(v);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_Reference)->Unit(benchmark::kMicrosecond);

}  // namespace
