#include "sources/history/prometheus_history.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "sources/history/prometheus_source.h"

namespace gpumeter::history {
namespace {

using attribution::OwnerAmounts;
using attribution::UnitKey;
using attribution::UnitRecord;

constexpr int64_t kStep = 60;          // seconds: the store's minutes
constexpr int64_t kPiece = 6 * 3600;   // seconds of minutes per range query
constexpr double kCoveredShare = 0.9;  // of a day's hours recorded, to read it per hour

const std::pair<const char*, double UnitRecord::*> kUnitCounters[] = {
    {"gpumeter_unit_seconds_total", &UnitRecord::seconds},
    {"gpumeter_unit_memory_capacity_byte_seconds_total",
     &UnitRecord::memory_capacity_byte_seconds}};
const std::pair<const char*, double OwnerAmounts::*> kOwnerCounters[] = {
    {"gpumeter_memory_byte_seconds_total", &OwnerAmounts::memory_byte_seconds},
    {"gpumeter_compute_seconds_total", &OwnerAmounts::compute_seconds},
    {"gpumeter_requested_share_seconds_total", &OwnerAmounts::requested_share_seconds},
    {"gpumeter_compute_unknown_seconds_total", &OwnerAmounts::compute_unknown_seconds}};
// Each scrape target's series apart (instance, job): a recreated agent pod is a new target whose
// counters start at 0, and summing it with the old one's would read the old one's end as a reset.
const char* const kUnitLabels = "instance, job, node, unit";
const char* const kOwnerLabels = "instance, job, node, unit, namespace, pod, container, owner_kind";

// A counter's latest value at each step, through staleness markers and over an hour: the minute in
// which an agent stopped (its last scrape, then a marker) keeps its growth, as the store keeps the
// rows of that minute; and a gap in the scrapes under an hour (Prometheus restarting) reads as the
// value before it, so what grew in the gap comes in one minute with the unit's own time for the
// gap (the minute weighs as many minutes), not as a series born with its whole count. A series
// that ended reads as its last value for an hour: growth 0, and owners with nothing at all in a
// minute are dropped (Buckets::Take).
std::string Latest(const char* metric, const std::string& matchers) {
  return "(last_over_time(" + std::string(metric) + matchers + "[1h]))";
}

using UnitId = std::pair<std::string, std::string>;  // (node, unit)
using OwnerId = std::tuple<std::string, std::string, std::string, std::string>;

// Usage being gathered: per bucket start, per unit, its record and its owners by identity.
struct Buckets {
  struct Unit {
    UnitRecord record;
    std::map<OwnerId, OwnerAmounts> owners;
  };
  std::map<int64_t, std::map<UnitId, Unit>> at;

  Unit& Of(int64_t t, const UnitId& u) { return at[t][u]; }

  static OwnerId OwnerOf(const std::map<std::string, std::string>& l) {
    return {LabelValue(l, "owner_kind"), LabelValue(l, "namespace"), LabelValue(l, "pod"),
            LabelValue(l, "container")};
  }
  void AddOwner(int64_t t, const std::map<std::string, std::string>& l, double OwnerAmounts::*f,
                double v) {
    auto& o = Of(t, {LabelValue(l, "node"), LabelValue(l, "unit")}).owners[OwnerOf(l)];
    o.owner = {domain::OwnerKindFromString(LabelValue(l, "owner_kind")), LabelValue(l, "namespace"),
               LabelValue(l, "pod"), LabelValue(l, "container")};
    o.*f += v;
  }

  // The records, each unit described by `ids` (a unit without info keeps its node and UUID).
  std::map<int64_t, std::vector<UnitRecord>> Take(const UnitIdentities& ids) {
    std::map<int64_t, std::vector<UnitRecord>> out;
    for (auto& [t, units] : at)
      for (auto& [id, u] : units) {
        const auto it = ids.find(id);
        u.record.unit = it != ids.end() ? it->second
                                        : UnitKey{id.first, id.second, "", "", "", std::nullopt, 1};
        for (auto& [k, o] : u.owners)
          if (o.memory_byte_seconds > 0 || o.compute_seconds > 0 || o.requested_share_seconds > 0 ||
              o.compute_unknown_seconds > 0)
            u.record.owners.push_back(std::move(o));
        out[t].push_back(std::move(u.record));
      }
    return out;
  }
};

}  // namespace

std::map<int64_t, double> StepGrowth(const std::vector<std::pair<int64_t, double>>& all,
                                     int64_t start_s, int64_t end_s, int64_t step_s) {
  // Only the points the query asked for: a reply's times are not trusted to bound the gaps.
  std::vector<std::pair<int64_t, double>> points;
  for (const auto& p : all)
    if (p.first >= start_s * 1000 && p.first <= end_s * 1000) points.push_back(p);
  std::map<int64_t, double> out;
  for (size_t i = 0; i < points.size(); ++i) {
    const int64_t t = (points[i].first + 500) / 1000;
    const double v = points[i].second;
    if (i == 0) {
      if (t > start_s) out[t - step_s] += v;  // born in the step before its first point
      continue;
    }
    const int64_t prev_t = (points[i - 1].first + 500) / 1000;
    const double prev = points[i - 1].second;
    if (v < prev) {  // reset: the agent restarted and counted v since
      out[t - step_s] += v;
      continue;
    }
    // Over a gap (scrapes missed) the growth is spread over its steps, not put in one.
    const int64_t steps = std::max<int64_t>(1, (t - prev_t) / step_s);
    for (int64_t k = 0; k < steps; ++k)
      out[prev_t + k * step_s] += (v - prev) / static_cast<double>(steps);
  }
  return out;
}

PrometheusHistory::PrometheusHistory(PrometheusApi api, HistoryScope scope, int64_t now_unix_s,
                                     int64_t lookback_s, int64_t minute_horizon_s)
    : api_(std::move(api)),
      scope_(std::move(scope)),
      // The minute in progress is read too (as from a store, whose rows for it are written):
      // a step after now evaluates to the latest sample.
      now_((now_unix_s + kStep - 1) / kStep * kStep),
      lookback_(lookback_s),
      minute_horizon_(minute_horizon_s) {}

std::string PrometheusHistory::HistoryName() const { return "prometheus " + api_.url(); }

std::string PrometheusHistory::UnitMatchers() const {
  return scope_.node.empty() ? "" : "{node=" + PromQuote(scope_.node) + "}";
}

std::string PrometheusHistory::OwnerMatchers() const {
  std::string m;
  if (!scope_.node.empty()) m = "node=" + PromQuote(scope_.node);
  // Idle and unattributed rows have no namespace: they say whether a minute is known.
  if (!scope_.ns.empty())
    m += (m.empty() ? "" : ",") + std::string("namespace=~") + PromQuote(scope_.ns + "|");
  return m.empty() ? "" : "{" + m + "}";
}

Expected<std::optional<std::pair<int64_t, int64_t>>> PrometheusHistory::HistorySpan() const {
  const int64_t from = now_ - lookback_;
  auto evals = RecordedEvaluations(api_, from, now_);
  if (!evals) return tl::unexpected(evals.error());
  evaluations_ = std::move(*evals);
  std::sort(evaluations_.begin(), evaluations_.end());
  // One per hour however many marker series hold it (several Prometheus, an HA pair).
  evaluations_.erase(std::unique(evaluations_.begin(), evaluations_.end()), evaluations_.end());
  // The first hour with raw data: a step of an hour finds it to within the hour before. The
  // steps end at now (data younger than an hour is found), and start an hour before `from`.
  const int64_t steps_from = now_ - (lookback_ / 3600 + 1) * 3600;
  // Each step looks over the hour before it, so no sample between steps is missed.
  auto raw = api_.QueryRange(
      "count(last_over_time(gpumeter_unit_seconds_total" + UnitMatchers() + "[1h]))", steps_from,
      now_, 3600);
  if (!raw) return tl::unexpected(raw.error());
  std::optional<int64_t> first;
  for (const auto& s : *raw)
    if (!s.points.empty()) first = (s.points.front().first + 500) / 1000 - 3600;
  if (!evaluations_.empty())
    first = std::min(first.value_or(evaluations_.front()), evaluations_.front() - 3600);
  if (!first) return std::nullopt;
  return std::make_pair(std::max(from, *first / kStep * kStep), now_);
}

// A pod's workload can change under the same name (a bare pod adopted by a controller, a
// StatefulSet replaced by a Deployment of the pod's name): each pod gets the workload it had
// last. Recorded hours say when (the rule's value: the last time in the hour); raw series of a pod
// with more than one are timed by LastSeen. Raw (newer) beats recorded.
Expected<history::PodWorkloadMap> PrometheusHistory::HistoryPodWorkloads() const {
  using Workload = std::pair<std::string, std::string>;  // kind, name
  const std::string by = "namespace, pod, workload_kind, workload";
  const std::string m = OwnerMatchers();
  auto workload_of = [](const PromSample& s) {
    return Workload{LabelValue(s.labels, "workload_kind"), LabelValue(s.labels, "workload")};
  };
  // `over`: max_over_time (recorded: the latest time) or last_over_time (raw: present).
  auto read = [&](const std::string& series, int64_t range, const char* over,
                  PodCandidates<Workload>& out) -> Expected<void> {
    auto r = api_.Query(
        "max by (" + by + ") (" + over + "(" + series + m + "[" + std::to_string(range) + "s]))",
        now_);
    if (!r) return tl::unexpected(r.error());
    for (const auto& s : *r)
      out[{LabelValue(s.labels, "namespace"), LabelValue(s.labels, "pod")}][workload_of(s)] =
          s.value;
    return {};
  };
  PodCandidates<Workload> recorded, raw;
  const int64_t raw_range = std::min(lookback_, minute_horizon_);
  if (auto r =
          read(RecordedName("gpumeter_pod_workload_info"), lookback_, "max_over_time", recorded);
      !r)
    return tl::unexpected(r.error());
  if (auto r = read("gpumeter_pod_workload_info", raw_range, "last_over_time", raw); !r)
    return tl::unexpected(r.error());
  if (auto t = TimeAmbiguousPods(api_, "gpumeter_pod_workload_info", by, raw_range, now_, raw,
                                 workload_of);
      !t)
    return tl::unexpected(t.error());
  history::PodWorkloadMap out;
  for (const auto* candidates : {&recorded, &raw})
    ForEachLatest(*candidates, [&](const auto& pod, const Workload& w) {
      out[pod] = {w.first, w.second};
    });
  return out;
}

bool PrometheusHistory::Covered(int64_t from, int64_t to) const {
  if (to > now_ - minute_horizon_) return false;
  const auto lo = std::upper_bound(evaluations_.begin(), evaluations_.end(), from);
  const auto hi = std::upper_bound(evaluations_.begin(), evaluations_.end(), to);
  return static_cast<double>(hi - lo) >= kCoveredShare * static_cast<double>(to - from) / 3600;
}

Expected<PrometheusHistory::Records> PrometheusHistory::HistoryMinutes(int64_t from,
                                                                       int64_t to) const {
  if (to <= from) return Records{};
  if (Covered(from, to)) {
    hourly_hours_ += static_cast<double>(to - from) / 3600;
    return ReadHours(from, to);
  }
  minute_hours_ += static_cast<double>(to - from) / 3600;
  return ReadMinutes(from, to);
}

Expected<PrometheusHistory::Records> PrometheusHistory::ReadMinutes(int64_t from,
                                                                    int64_t to) const {
  from = from / kStep * kStep;
  Buckets b;
  for (int64_t a = from; a < to; a += kPiece) {
    const int64_t z = std::min(to, a + kPiece);
    for (const auto& [metric, field] : kUnitCounters) {
      auto r = api_.QueryRange(
          "sum by (" + std::string(kUnitLabels) + ") " + Latest(metric, UnitMatchers()), a, z,
          kStep);
      if (!r) return tl::unexpected(r.error());
      for (const auto& s : *r)
        for (const auto& [t, v] : StepGrowth(s.points, a, z, kStep))
          if (t >= from && t < to)
            b.Of(t, {LabelValue(s.labels, "node"), LabelValue(s.labels, "unit")}).record.*field +=
                v;
    }
    for (const auto& [metric, field] : kOwnerCounters) {
      auto r = api_.QueryRange(
          "sum by (" + std::string(kOwnerLabels) + ") " + Latest(metric, OwnerMatchers()), a, z,
          kStep);
      if (!r) return tl::unexpected(r.error());
      for (const auto& s : *r)
        for (const auto& [t, v] : StepGrowth(s.points, a, z, kStep))
          if (t >= from && t < to) b.AddOwner(t, s.labels, field, v);
    }
  }
  auto ids = ReadUnitIdentities(api_, to, to - from + kStep, false, UnitMatchers());
  if (!ids) return tl::unexpected(ids.error());
  return b.Take(*ids);
}

Expected<PrometheusHistory::Records> PrometheusHistory::ReadHours(int64_t from, int64_t to) const {
  // The evaluations in (from, to]: each is the hour before it, keyed by that hour's start.
  const std::string range = "[" + std::to_string(to - from) + "s]";
  // The first hour reaches back before `from`: keep it only where the day before was read per
  // hour too (else those minutes were read already, and rows must come in time order).
  const int64_t earliest = Covered(from - HistoryReadSeconds(), from) ? from - 3600 : from;
  Buckets b;
  for (const auto& [metric, field] : kUnitCounters) {
    auto r = api_.QueryRaw(RecordedName(metric) + UnitMatchers() + range, to);
    if (!r) return tl::unexpected(r.error());
    for (const auto& s : *r)
      for (const auto& [t_ms, v] : s.points)
        if (const int64_t t = (t_ms + 500) / 1000 - 3600; t >= earliest)
          b.Of(t, {LabelValue(s.labels, "node"), LabelValue(s.labels, "unit")}).record.*field += v;
  }
  for (const auto& [metric, field] : kOwnerCounters) {
    auto r = api_.QueryRaw(RecordedName(metric) + OwnerMatchers() + range, to);
    if (!r) return tl::unexpected(r.error());
    for (const auto& s : *r)
      for (const auto& [t_ms, v] : s.points)
        if (const int64_t t = (t_ms + 500) / 1000 - 3600; t >= earliest)
          b.AddOwner(t, s.labels, field, v);
  }
  auto ids = ReadUnitIdentities(api_, to, to - from, true, UnitMatchers());
  if (!ids) return tl::unexpected(ids.error());
  return b.Take(*ids);
}

std::string PrometheusHistory::Describe() const {
  std::string out =
      fmt::format("{}: per-minute raw series for {:.1f} h", HistoryName(), minute_hours_);
  if (hourly_hours_ > 0) out += fmt::format(", recorded hourly series for {:.0f} h", hourly_hours_);
  return out;
}

}  // namespace gpumeter::history
