// The fleet's series as Prometheus would hold them, as OpenMetrics text for `promtool tsdb
// create-blocks-from openmetrics`: the agents' raw counters (and the gauges the reports read) at a
// 15 s scrape over a recent range, and the hourly recorded series of the `gpumeter.hourly` group
// (deploy/kubernetes/monitoring/prometheusrule.yaml) over the whole span.
//
// One file per 2-hour block (aligned as Prometheus aligns its blocks), written as the minutes
// go by and renamed into place when complete: promtool 2.42 parses its whole input once per 2-hour
// block it covers, so one file for 30 days would be parsed 360 times; and the caller can convert
// and delete each file while the next is written, so the disk never holds the whole text.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/attribution/usage_record.h"
#include "fleet/fleet_model.h"

namespace gpumeter::fleet {

struct OpenMetricsStats {
  int64_t raw_samples = 0, recorded_samples = 0, bytes = 0, files = 0;
  int64_t raw_series = 0;          // distinct raw series (every family)
  int64_t max_raw_series_now = 0;  // the most raw series present at one minute (the head's)
};

class OpenMetricsWriter {
 public:
  // Files go to `dir` (which must exist); raw scrapes from `raw_from_minute` on (Unix minutes).
  OpenMetricsWriter(const Fleet& fleet, std::string dir, int64_t raw_from_minute);

  // One node's minute: its units (Fleet::Minute) and the pods alive on it.
  void AddMinute(int node, int64_t minute, const std::vector<attribution::UnitRecord>& units,
                 const std::vector<int>& alive);
  // After every node's `minute`: closes the hour and the 2-hour file that end with it.
  void EndMinute(int64_t minute);
  // After the last minute: a scrape at the end instant, and the last file.
  void Finish(int64_t end_minute);
  const OpenMetricsStats& stats() const { return stats_; }

 private:
  // A series of one node: its counters (3 for a unit, 4 for an owner) since the agent started,
  // their growth in the current hour, and the last minute it was used or held.
  struct Series {
    int family = 0;  // the first of its counter families (kUnitFamilies or kOwnerFamilies)
    double total[4] = {0, 0, 0, 0}, hour[4] = {0, 0, 0, 0};
    int64_t last_active = 0;
    bool in_hour = false, container = false, raw_seen = false;
  };
  enum Family {
    kUnitSeconds,
    kUnitMemory,
    kUnitEnergy,
    kMemory,
    kCompute,
    kEnergy,
    kRequested,
    kUnitInfo,
    kShareRatio,
    kWorkloadInfo,
    kPodLabels,
    kFamilies
  };

  void Counter(int node, int64_t minute, const std::string& labels, int first_family, int count,
               const double* amounts);
  void Gauge(int node, int64_t minute, Family family, const std::string& labels);
  void Scrapes(int family, const std::string& labels, int node, int64_t minute, double before,
               double grows);
  void Line(std::string& out, const std::string& name, const std::string& labels,
            const std::string& instance, double value, int64_t unix_s);
  void CloseHour(int64_t hour_end_minute);
  void Flush();

  const Fleet& fleet_;
  std::string dir_;
  int64_t raw_from_ = 0, window_start_ = -1;
  std::vector<std::map<std::string, Series>> series_;  // by node, keyed by the labels' text
  // By node: (family, labels) -> the last minute the gauge was seen in the current hour.
  std::vector<std::map<std::pair<int, std::string>, int64_t>> gauges_hour_;
  std::vector<std::string> instance_;                          // by node: ",instance=…"
  std::string raw_[kFamilies], recorded_[kFamilies], marker_;  // this file's lines
  std::set<std::string> raw_seen_;
  int64_t raw_now_ = 0, raw_now_minute_ = -1;
  OpenMetricsStats stats_;
};

}  // namespace gpumeter::fleet
