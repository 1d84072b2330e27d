// The usage store and reports from it, at the sizes:
//   - BM_StoreWriteInterval: one interval of 16 units and 1,000 containers (one transaction);
//   - BM_Report30Days: a chargeback by namespace over 30 days of those 1,000 containers, from a
//     store holding them (hourly rollups for the whole hours, minute rows for the edges);
//   - BM_StoreBytesPerContainerDay: a day of one-minute intervals for 100 containers; the file
//     size per container-day as a counter (time is not the point of this one);
//   - BM_RightsizeSixHours: rightsizing histories and recommendations from six hours of minutes.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "core/cost/chargeback.h"
#include "core/cost/pricing.h"
#include "core/rightsize/history.h"
#include "core/rightsize/recommend.h"
#include "store/store.h"

namespace {

using namespace gpumeter;

std::filesystem::path TempDb(const std::string& name) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("gpumeter-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
  return path;
}

// 16 units (8 time-sliced GPUs, 8 MIG instances) shared by `containers` containers over `seconds`.
store::IntervalRecord Interval(int64_t end, double seconds, int containers) {
  store::IntervalRecord r;
  r.end_unix_s = end;
  for (int u = 0; u < 16; ++u) {
    store::UnitRecord rec;
    const std::string id = (u < 8 ? "GPU-" : "MIG-") + std::to_string(u);
    rec.unit = {
        "node-" + std::to_string(u / 4),
        id,
        "GPU-" + std::to_string(u % 8),
        u < 8 ? "NVIDIA H100 80GB HBM3" : "NVIDIA H200",
        u < 8 ? "" : "1g.18gb",
        u < 8 ? gpumeter::domain::SharingMode::kTimeSlicing : gpumeter::domain::SharingMode::kMig,
        u < 8 ? 1.0 : 1.0 / 7};
    rec.seconds = seconds;
    rec.memory_capacity_byte_seconds = 8e10 * seconds;
    rec.energy_joules = 300 * seconds;
    const int per_unit = containers / 16;
    for (int c = 0; c < per_unit; ++c) {
      const int k = u * per_unit + c;
      rec.owners.push_back({{domain::OwnerKind::kContainer, "ns-" + std::to_string(k % 40),
                             "pod-" + std::to_string(k), "main"},
                            8e10 * seconds / (per_unit + 1),
                            seconds / (per_unit + 1),
                            250 * seconds / (per_unit + 1),
                            seconds / per_unit});
    }
    rec.owners.push_back({{domain::OwnerKind::kIdle, {}, {}, {}},
                          8e10 * seconds / (per_unit + 1),
                          seconds / (per_unit + 1),
                          50 * seconds,
                          0});
    r.units.push_back(std::move(rec));
  }
  return r;
}

constexpr int64_t kT0 = 1'796'083'200;  // 2026-12-01T00:00:00Z

void BM_StoreWriteInterval(benchmark::State& state) {
  auto s = store::Store::Open(TempDb("write.db").string());
  if (!s) {
    state.SkipWithError(s.error().message.c_str());
    return;
  }
  int64_t t = kT0;
  const auto rec = Interval(t, 1, 1000);
  for (auto _ : state) {
    auto r = rec;
    r.end_unix_s = t++;
    if (auto w = (*s)->Write(r); !w) state.SkipWithError(w.error().message.c_str());
  }
}
BENCHMARK(BM_StoreWriteInterval)->Unit(benchmark::kMillisecond);

void BM_Report30Days(benchmark::State& state) {
  const auto path = TempDb("month.db");
  {
    auto s = store::Store::Open(path.string());
    if (!s) {
      state.SkipWithError(s.error().message.c_str());
      return;
    }
    // One interval per hour carrying the hour's usage: the same rollups as 3,600 one-second
    // intervals, without writing them (minute rows exist only for the edges a report reads).
    for (int64_t h = 0; h < 30 * 24; ++h)
      if (auto w = (*s)->Write(Interval(kT0 + h * 3600 + 1800, 3600, 1000)); !w)
        state.SkipWithError(w.error().message.c_str());
  }
  auto s = store::Store::OpenReadOnly(path.string());
  const auto pricing = cost::Pricing::Defaults();
  const cost::Policy policy{cost::Basis::kMemory, 0.5, cost::IdleRule::kShare};
  for (auto _ : state) {
    auto usage =
        (*s)->Usage(kT0 - 1234, kT0 + 30 * 86400 + 1234);  // ragged edges: minutes and hours
    auto labels = (*s)->PodLabels();
    if (!usage || !labels) {
      state.SkipWithError("query failed");
      break;
    }
    auto c = cost::BuildChargeback(*usage, *labels, pricing, policy, {"namespace"});
    benchmark::DoNotOptimize(c);
  }
  state.counters["db_mib"] = static_cast<double>(std::filesystem::file_size(path)) / (1 << 20);
}
BENCHMARK(BM_Report30Days)->Unit(benchmark::kMillisecond);

void BM_StoreBytesPerContainerDay(benchmark::State& state) {
  for (auto _ : state) {
    const auto path = TempDb("day.db");
    {
      auto s = store::Store::Open(path.string());
      if (!s) {
        state.SkipWithError(s.error().message.c_str());
        return;
      }
      for (int64_t m = 0; m < 24 * 60; ++m)
        if (auto w = (*s)->Write(Interval(kT0 + m * 60 + 30, 60, 96)); !w)
          state.SkipWithError(w.error().message.c_str());
    }  // closed: the WAL is checkpointed into the file
    state.counters["bytes_per_container_day"] =
        static_cast<double>(std::filesystem::file_size(path)) / 96;
  }
}
BENCHMARK(BM_StoreBytesPerContainerDay)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

// Rightsizing: the usage histories of 1,000 containers on 16 units from six hours of one-minute
// rows (360 intervals; a small store, so the smoke run stays short), then the recommendations.
// Reading is linear in the minutes read: two weeks cost 56 times this.
void BM_RightsizeSixHours(benchmark::State& state) {
  const auto path = TempDb("rightsize.db");
  {
    auto s = store::Store::Open(path.string());
    if (!s) {
      state.SkipWithError(s.error().message.c_str());
      return;
    }
    for (int64_t m = 0; m < 360; ++m)
      if (auto w = (*s)->Write(Interval(kT0 + m * 60 + 30, 60, 1000)); !w)
        state.SkipWithError(w.error().message.c_str());
  }
  auto s = store::Store::OpenReadOnly(path.string());
  const auto pricing = cost::Pricing::Defaults();
  size_t workloads = 0;
  for (auto _ : state) {
    auto h = usage::BuildHistories(**s, kT0, kT0 + 6 * 3600);
    if (!h) {
      state.SkipWithError(h.error().message.c_str());
      break;
    }
    auto rs = rightsize::Recommend(*h, pricing, {});
    workloads = rs.size();
    benchmark::DoNotOptimize(rs);
  }
  state.counters["workloads"] = static_cast<double>(workloads);
  state.counters["db_mib"] = static_cast<double>(std::filesystem::file_size(path)) / (1 << 20);
}
BENCHMARK(BM_RightsizeSixHours)->Unit(benchmark::kMillisecond);
