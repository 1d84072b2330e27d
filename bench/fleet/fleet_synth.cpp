// gpumeter_fleet_synth: writes the scale benchmark's fleet (fleet_model.h) twice from the same
// minutes: as OpenMetrics files for `promtool tsdb create-blocks-from openmetrics`
// (openmetrics_writer.h) and as one usage store per node, through the store the agent writes
// with (store/store.h), so the schema is the agent's own. bench/fleet.sh drives it.
//
//   gpumeter_fleet_synth --out DIR [--seed N] [--nodes 10] [--workloads 1000] [--days 30]
//                        [--raw-hours 50] [--end UNIX_S] [--no-stores] [--no-openmetrics]
//
// DIR/openmetrics/block-<start>.om (one per 2-hour block), DIR/stores/<node>.db; a summary on
// stdout as `key value` lines.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fleet/fleet_model.h"
#include "fleet/openmetrics_writer.h"
#include "store/store.h"

namespace gpumeter::fleet {
namespace {

struct Args {
  std::string out;
  uint64_t seed = 1;
  int nodes = 10, workloads = 1000, days = 30;
  int raw_hours = 50;  // 2 days, and the hours before them that a 2-day increase() looks back on
  int64_t end_unix_s = 0;
  bool stores = true, openmetrics = true;
};

std::optional<Args> Parse(int argc, char** argv) {
  Args a;
  a.end_unix_s = std::chrono::duration_cast<std::chrono::seconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count() /
                 3600 * 3600;  // the last whole hour: hourly records line up with it
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : ""; };
    if (k == "--out")
      a.out = value();
    else if (k == "--seed")
      a.seed = std::strtoull(value(), nullptr, 10);
    else if (k == "--nodes")
      a.nodes = std::atoi(value());
    else if (k == "--workloads")
      a.workloads = std::atoi(value());
    else if (k == "--days")
      a.days = std::atoi(value());
    else if (k == "--raw-hours")
      a.raw_hours = std::atoi(value());
    else if (k == "--end")
      a.end_unix_s = std::strtoll(value(), nullptr, 10) / 3600 * 3600;
    else if (k == "--no-stores")
      a.stores = false;
    else if (k == "--no-openmetrics")
      a.openmetrics = false;
    else
      return std::nullopt;
  }
  if (a.out.empty() || a.nodes < 1 || a.workloads < 1 || a.days < 1 || a.raw_hours < 0)
    return std::nullopt;
  return a;
}

// One node's store, written as the agent's would be after running the whole span: minute rows
// for the minutes it keeps (StoreOptions::minute_retention_days), and for older days one write
// an hour that the store rolls into its hourly rows; the minute rows those leave are then pruned
// as the agent prunes them. Pod labels are written with a pod's first minute.
class NodeStore {
 public:
  static std::unique_ptr<NodeStore> Open(const std::string& path, int64_t minutes_from) {
    auto s = store::Store::Open(path);
    if (!s) {
      std::fprintf(stderr, "%s\n", s.error().message.c_str());
      return nullptr;
    }
    return std::unique_ptr<NodeStore>(new NodeStore(std::move(*s), minutes_from));
  }

  bool Add(const Fleet& fleet, int64_t minute, std::vector<attribution::UnitRecord> units,
           const std::vector<int>& alive) {
    for (int i : alive)
      if (labelled_.insert(i).second) {
        const Pod& p = fleet.pods()[i];
        pending_.pod_labels[{fleet.workloads()[p.workload].ns, p.name}] = p.labels;
      }
    if (minute >= minutes_from_) {
      pending_.units = std::move(units);
      return Write(minute * 60 + 59);
    }
    Accumulate(units);
    return (minute + 1) % 60 != 0 || Write(minute * 60 + 59);
  }

  bool Prune(int64_t now_unix_s) { return Check(store_->Prune(now_unix_s)); }
  int64_t writes() const { return writes_; }

 private:
  NodeStore(std::unique_ptr<store::Store> s, int64_t minutes_from)
      : store_(std::move(s)), minutes_from_(minutes_from) {}

  bool Check(const Expected<void>& r) {
    if (!r) std::fprintf(stderr, "%s\n", r.error().message.c_str());
    return r.has_value();
  }

  bool Write(int64_t end_unix_s) {
    pending_.end_unix_s = end_unix_s;
    const bool ok = Check(store_->Write(pending_));
    pending_ = {};
    ++writes_;
    return ok;
  }

  // The hour so far, unit by unit (Fleet::Minute lists a node's units in one order) and owner
  // by owner.
  void Accumulate(const std::vector<attribution::UnitRecord>& units) {
    if (pending_.units.empty()) {
      pending_.units = units;
      return;
    }
    for (size_t i = 0; i < units.size(); ++i) {
      auto& into = pending_.units[i];
      into.seconds += units[i].seconds;
      into.memory_capacity_byte_seconds += units[i].memory_capacity_byte_seconds;
      into.energy_joules += units[i].energy_joules;
      for (const auto& o : units[i].owners) {
        auto it = std::find_if(into.owners.begin(), into.owners.end(),
                               [&](const auto& x) { return x.owner == o.owner; });
        if (it == into.owners.end()) {
          into.owners.push_back(o);
          continue;
        }
        it->memory_byte_seconds += o.memory_byte_seconds;
        it->compute_seconds += o.compute_seconds;
        it->energy_joules += o.energy_joules;
        it->requested_share_seconds += o.requested_share_seconds;
      }
    }
  }

  std::unique_ptr<store::Store> store_;
  int64_t minutes_from_;
  store::IntervalRecord pending_;
  std::set<int> labelled_;
  int64_t writes_ = 0;
};

void Summary(const Fleet& fleet) {
  std::set<std::string> containers;
  for (const auto& p : fleet.pods())
    containers.insert(fleet.workloads()[p.workload].ns + "/" + p.name);
  std::printf("workloads %zu\npods %zu\ncontainers %zu\n", fleet.workloads().size(),
              fleet.pods().size(), containers.size());
}

int Run(const Args& a) {
  const int64_t end = a.end_unix_s / 60, start = end - int64_t{a.days} * 1440;
  Fleet fleet({a.seed, a.nodes, a.workloads, start, end});
  Summary(fleet);
  namespace fs = std::filesystem;
  fs::create_directories(a.out + "/openmetrics");
  fs::create_directories(a.out + "/stores");
  const int64_t minute_days = store::StoreOptions{}.minute_retention_days;
  std::vector<std::unique_ptr<NodeStore>> stores;
  for (int n = 0; a.stores && n < a.nodes; ++n) {
    const std::string path = a.out + "/stores/" + Fleet::NodeName(n) + ".db";
    fs::remove(path), fs::remove(path + "-wal"), fs::remove(path + "-shm");
    stores.push_back(NodeStore::Open(path, end - minute_days * 1440));
    if (!stores.back()) return 1;
  }
  OpenMetricsWriter om(fleet, a.out + "/openmetrics", end - int64_t{a.raw_hours} * 60);
  Timeline timeline(fleet);
  int64_t alive_sum = 0;
  for (int64_t m = start; m < end; ++m) {
    timeline.Advance(m);
    for (int n = 0; n < a.nodes; ++n) {
      auto units = fleet.Minute(n, m, timeline.alive(n));
      alive_sum += static_cast<int64_t>(timeline.alive(n).size());
      if (a.openmetrics) om.AddMinute(n, m, units, timeline.alive(n));
      if (a.stores && !stores[n]->Add(fleet, m, std::move(units), timeline.alive(n))) return 1;
    }
    if (a.openmetrics) om.EndMinute(m);
  }
  if (a.openmetrics) om.Finish(end);
  for (auto& s : stores)
    if (!s->Prune(a.end_unix_s)) return 1;
  const auto& st = om.stats();
  std::printf(
      "end %lld\nstart %lld\nraw_from %lld\nmean_containers_alive %.1f\nraw_series %lld\n"
      "raw_series_max_at_once %lld\nraw_samples %lld\nrecorded_samples %lld\nopenmetrics_bytes "
      "%lld\nopenmetrics_files %lld\n",
      static_cast<long long>(a.end_unix_s), static_cast<long long>(start * 60),
      static_cast<long long>((end - int64_t{a.raw_hours} * 60) * 60),
      static_cast<double>(alive_sum) / static_cast<double>(end - start),
      static_cast<long long>(st.raw_series), static_cast<long long>(st.max_raw_series_now),
      static_cast<long long>(st.raw_samples), static_cast<long long>(st.recorded_samples),
      static_cast<long long>(st.bytes), static_cast<long long>(st.files));
  std::FILE* done = std::fopen((a.out + "/openmetrics/DONE").c_str(), "w");
  if (done) std::fclose(done);
  return 0;
}

}  // namespace
}  // namespace gpumeter::fleet

int main(int argc, char** argv) {
  auto args = gpumeter::fleet::Parse(argc, argv);
  if (!args) {
    std::fprintf(stderr,
                 "usage: gpumeter_fleet_synth --out DIR [--seed N] [--nodes N] [--workloads N] "
                 "[--days N] [--raw-hours N] [--end UNIX_S] [--no-stores] [--no-openmetrics]\n");
    return 2;
  }
  return gpumeter::fleet::Run(*args);
}
