#include "fleet/openmetrics_writer.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <iterator>

namespace gpumeter::fleet {
namespace {

constexpr int64_t kScrapesPerMinute = 4;  // a 15 s scrape
constexpr int64_t kTail = 60;             // minutes a container's series stays after its pod

struct FamilyName {
  const char* raw;       // as the agent serves it (counters without their _total)
  const char* recorded;  // the gpumeter.hourly group's record
  bool counter;
};
constexpr FamilyName kNames[] = {
    {"gpumeter_unit_seconds", "gpumeter:unit_seconds:increase1h", true},
    {"gpumeter_unit_memory_capacity_byte_seconds",
     "gpumeter:unit_memory_capacity_byte_seconds:increase1h", true},
    {"gpumeter_unit_energy_joules", "gpumeter:unit_energy_joules:increase1h", true},
    {"gpumeter_memory_byte_seconds", "gpumeter:memory_byte_seconds:increase1h", true},
    {"gpumeter_compute_seconds", "gpumeter:compute_seconds:increase1h", true},
    {"gpumeter_energy_joules", "gpumeter:energy_joules:increase1h", true},
    {"gpumeter_requested_share_seconds", "gpumeter:requested_share_seconds:increase1h", true},
    {"gpumeter_unit_info", "gpumeter:unit_info:max1h", false},
    {"gpumeter_unit_gpu_share_ratio", "gpumeter:unit_gpu_share_ratio:max1h", false},
    {"gpumeter_pod_workload_info", "gpumeter:pod_workload_info:max1h", false},
    {"gpumeter_pod_labels_info", "gpumeter:pod_labels_info:max1h", false}};

constexpr const char* kMarker = "gpumeter:hourly_rules:evaluation";

std::string Quote(const char* key, const std::string& value) {
  return std::string(key) + "=\"" + value + "\"";
}

// The owner series' labels, in the agent's order (tests/golden/node-8gpu-r580.prom); the pod's
// team (--pod-label team) is on gpumeter_pod_labels_info, never here.
std::string OwnerLabels(const attribution::UnitRecord& u, const attribution::OwnerAmounts& o) {
  return Quote("node", u.unit.node) + "," + Quote("unit", u.unit.uuid) + "," +
         Quote("gpu_uuid", u.unit.gpu_uuid) + "," + Quote("model", u.unit.model) + "," +
         Quote("mig_profile", u.unit.mig_profile) + "," + Quote("namespace", o.owner.ns) + "," +
         Quote("pod", o.owner.pod) + "," + Quote("container", o.owner.container) + "," +
         Quote("owner_kind", domain::ToString(o.owner.kind));
}

}  // namespace

OpenMetricsWriter::OpenMetricsWriter(const Fleet& fleet, std::string dir, int64_t raw_from_minute)
    : fleet_(fleet),
      dir_(std::move(dir)),
      raw_from_(raw_from_minute),
      series_(fleet.options().nodes),
      gauges_hour_(fleet.options().nodes) {
  // Prometheus adds the scrape's target labels to every raw series; the rules sum them away.
  for (int node = 0; node < fleet.options().nodes; ++node)
    instance_.push_back(",instance=\"10.0." + std::to_string(node / 250) + "." +
                        std::to_string(node % 250 + 1) + ":9402\",job=\"gpumeter\"");
}

void OpenMetricsWriter::Line(std::string& out, const std::string& name, const std::string& labels,
                             const std::string& instance, double value, int64_t unix_s) {
  if (labels.empty() && instance.empty())
    fmt::format_to(std::back_inserter(out), "{} {} {}\n", name, value, unix_s);
  else
    fmt::format_to(std::back_inserter(out), "{}{{{}{}}} {} {}\n", name, labels, instance, value,
                   unix_s);
}

void OpenMetricsWriter::Scrapes(int family, const std::string& labels, int node, int64_t minute,
                                double before, double grows) {
  if (minute < raw_from_) return;
  const std::string name =
      std::string(kNames[family].raw) + (kNames[family].counter ? "_total" : "");
  for (int64_t k = 0; k < kScrapesPerMinute; ++k)
    Line(raw_[family], name, labels, instance_[node],
         before + grows * static_cast<double>(k) / kScrapesPerMinute,
         minute * 60 + k * 60 / kScrapesPerMinute);
  stats_.raw_samples += kScrapesPerMinute;
  ++raw_now_;
}

void OpenMetricsWriter::Counter(int node, int64_t minute, const std::string& labels,
                                int first_family, int count, const double* amounts) {
  Series& s = series_[node][labels];
  s.family = first_family;
  s.last_active = minute;
  s.in_hour = true;
  if (minute >= raw_from_ && !s.raw_seen) s.raw_seen = true, stats_.raw_series += count;
  for (int k = 0; k < count; ++k) {
    Scrapes(first_family + k, labels, node, minute, s.total[k], amounts[k]);
    s.total[k] += amounts[k];
    s.hour[k] += amounts[k];
  }
}

void OpenMetricsWriter::Gauge(int node, int64_t minute, Family family, const std::string& labels) {
  if (minute >= raw_from_ && raw_seen_.insert(std::to_string(family) + labels).second)
    ++stats_.raw_series;
  Scrapes(family, labels, node, minute, 1, 0);
  gauges_hour_[node][{family, labels}] = minute;
}

void OpenMetricsWriter::AddMinute(int node, int64_t minute,
                                  const std::vector<attribution::UnitRecord>& units,
                                  const std::vector<int>& alive) {
  if (window_start_ < 0) window_start_ = minute / 120 * 120;
  for (const auto& u : units) {
    const std::string unit = Quote("node", u.unit.node) + "," + Quote("unit", u.unit.uuid);
    const double unit_amounts[] = {u.seconds, u.memory_capacity_byte_seconds, u.energy_joules};
    Counter(node, minute, unit, kUnitSeconds, 3, unit_amounts);
    const bool shared = u.unit.mode != domain::SharingMode::kExclusive;
    Gauge(node, minute, kUnitInfo,
          unit + "," + Quote("gpu_uuid", u.unit.gpu_uuid) + "," +
              Quote("gpu", std::to_string(std::stoi(u.unit.uuid.substr(8, 4), nullptr, 16))) + "," +
              Quote("model", u.unit.model) + "," + Quote("mig_profile", "") + "," +
              Quote("sharing_mode", domain::ToStringOr(u.unit.mode, "")) + "," +
              Quote("replicas", shared ? std::to_string(Fleet::kReplicas) : "1") + "," +
              Quote("evidence", "configured for this GPU"));
    Gauge(node, minute, kShareRatio, unit);
    for (const auto& o : u.owners) {
      const bool container = o.owner.kind == domain::OwnerKind::kContainer;
      const std::string labels = OwnerLabels(u, o);
      const double amounts[] = {o.memory_byte_seconds, o.compute_seconds, o.energy_joules,
                                o.requested_share_seconds};
      Counter(node, minute, labels, kMemory, 4, amounts);
      series_[node][labels].container = container;
    }
  }
  for (int i : alive) {
    const Pod& p = fleet_.pods()[i];
    const Workload& w = fleet_.workloads()[p.workload];
    Gauge(node, minute, kWorkloadInfo,
          Quote("node", Fleet::NodeName(node)) + "," + Quote("namespace", w.ns) + "," +
              Quote("pod", p.name) + "," + Quote("workload_kind", w.kind) + "," +
              Quote("workload", w.name));
    Gauge(node, minute, kPodLabels,
          Quote("node", Fleet::NodeName(node)) + "," + Quote("namespace", w.ns) + "," +
              Quote("pod", p.name) + "," + Quote("label_team", Fleet::TeamOf(w.ns)));
  }
  // A container's series stays an hour after its pod (docs/metrics.md), not growing.
  for (auto& [labels, s] : series_[node])
    if (s.container && s.last_active < minute && minute - s.last_active <= kTail) {
      s.in_hour = true;
      for (int k = 0; k < 4; ++k) Scrapes(kMemory + k, labels, node, minute, s.total[k], 0);
    }
}

void OpenMetricsWriter::CloseHour(int64_t hour_end_minute) {
  const int64_t at = hour_end_minute * 60;
  for (size_t node = 0; node < series_.size(); ++node) {
    auto& all = series_[node];
    for (auto it = all.begin(); it != all.end();) {
      Series& s = it->second;
      const int count = s.family == kUnitSeconds ? 3 : 4;
      if (s.in_hour) {
        for (int k = 0; k < count; ++k)
          Line(recorded_[s.family + k], kNames[s.family + k].recorded, it->first, "", s.hour[k],
               at);
        stats_.recorded_samples += count;
      }
      std::fill(std::begin(s.hour), std::end(s.hour), 0.0);
      s.in_hour = false;
      it = s.container && hour_end_minute - s.last_active > kTail ? all.erase(it) : std::next(it);
    }
    // Info series record 1; the pods' labels and workloads the last time they were scraped in the
    // hour, as gpumeter:pod_labels_info:max1h and gpumeter:pod_workload_info:max1h do.
    for (const auto& [key, last_minute] : gauges_hour_[node])
      Line(recorded_[key.first], kNames[key.first].recorded, key.second, "",
           key.first == kPodLabels || key.first == kWorkloadInfo
               ? static_cast<double>(last_minute * 60 +
                                     (kScrapesPerMinute - 1) * 60 / kScrapesPerMinute)
               : 1.0,
           at);
    stats_.recorded_samples += static_cast<int64_t>(gauges_hour_[node].size());
    gauges_hour_[node].clear();
  }
  // The group's marker: one sample per evaluation, from which readers learn which hours the
  // rules covered (src/sources/history/recorded_coverage.h).
  Line(marker_, kMarker, "", "", 1, at);
  ++stats_.recorded_samples;
}

void OpenMetricsWriter::Flush() {
  std::string body;
  for (int f = 0; f < kFamilies; ++f) {
    if (!raw_[f].empty())
      body +=
          fmt::format("# TYPE {} {}\n", kNames[f].raw, kNames[f].counter ? "counter" : "gauge") +
          raw_[f];
    if (!recorded_[f].empty())
      body += fmt::format("# TYPE {} gauge\n", kNames[f].recorded) + recorded_[f];
    raw_[f].clear();
    recorded_[f].clear();
  }
  if (!marker_.empty()) body += fmt::format("# TYPE {} gauge\n", kMarker) + marker_;
  marker_.clear();
  if (body.empty()) return;
  body += "# EOF\n";
  // Written aside and renamed: a reader converting files as they appear sees only whole ones.
  const std::string path = dir_ + "/block-" + std::to_string(window_start_ * 60) + ".om";
  if (std::FILE* f = std::fopen((path + ".tmp").c_str(), "wb")) {
    std::fwrite(body.data(), 1, body.size(), f);
    std::fclose(f);
    std::filesystem::rename(path + ".tmp", path);
  }
  stats_.bytes += static_cast<int64_t>(body.size());
  ++stats_.files;
}

void OpenMetricsWriter::EndMinute(int64_t minute) {
  stats_.max_raw_series_now = std::max(stats_.max_raw_series_now, raw_now_);
  raw_now_ = 0;
  const int64_t next = minute + 1;
  if (next % 120 == 0) {
    Flush();
    window_start_ = next;
  }
  if (next % 60 == 0) CloseHour(next);
}

void OpenMetricsWriter::Finish(int64_t end_minute) {
  // One more scrape at the end instant, so a window ending there has its last value.
  const int64_t at = end_minute * 60;
  for (size_t node = 0; node < series_.size(); ++node)
    for (const auto& [labels, s] : series_[node]) {
      if (s.container && end_minute - 1 - s.last_active > kTail) continue;
      const int count = s.family == kUnitSeconds ? 3 : 4;
      for (int k = 0; k < count; ++k)
        Line(raw_[s.family + k], std::string(kNames[s.family + k].raw) + "_total", labels,
             instance_[node], s.total[k], at);
      stats_.raw_samples += count;
    }
  Flush();  // EndMinute moved window_start_ to the window that holds the end instant
}

}  // namespace gpumeter::fleet
