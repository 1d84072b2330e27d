#include "sources/history/prometheus_history.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "common/all_at_once.h"
#include "domain/metric_names.h"
#include "sources/history/prometheus_source.h"

namespace gpumeter::history {
namespace {

namespace names = domain::metric_names;

using attribution::OwnerAmounts;
using attribution::UnitKey;
using attribution::UnitRecord;

constexpr int64_t kStep = 60;          // seconds: the store's minutes
constexpr int64_t kPiece = 6 * 3600;   // seconds of minutes per range query
constexpr double kCoveredShare = 0.9;  // of a day's hours recorded, to read it per hour

struct UnitValues {
  double seconds = 0, memory_capacity_byte_seconds = 0;
};
const std::pair<const char*, double UnitValues::*> kUnitCounters[] = {
    {names::kUnitSeconds, &UnitValues::seconds},
    {names::kUnitMemoryCapacity, &UnitValues::memory_capacity_byte_seconds}};
// In the order of Buckets::Take's fields.
const char* const kOwnerCounters[] = {
    names::kMemoryByteSeconds,     names::kComputeSeconds,    names::kRequestedShareSeconds,
    names::kComputeUnknownSeconds, names::kMemoryBusySeconds, names::kMemoryBusyUnknownSeconds};
// gpumeter_memory_busy_seconds_total is exported for every row by agents that measure traffic and
// export the full set of series: an owner without a point of it at a time (an agent before it, or
// one with the default set) has its traffic unknown then.
constexpr size_t kTrafficField = 4;

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

// The owner counters' fields, in kOwnerCounters' order.
constexpr size_t kOwnerFields = std::size(kOwnerCounters);
using OwnerValues = std::array<double, kOwnerFields>;

// Usage being gathered over one read. A series is resolved to its unit and owner once (labels
// compared as strings per series, never per point); its points add into dense per-time slots.
// Times are the keys the records will have (minute or hour starts), indexed as first seen.
// A unit has a record at a time where any of its series (or its owners') had a point then, as
// a store has a row for each minute it wrote; owners with nothing at that time are left out.
class Buckets {
 public:
  size_t UnitOf(const std::map<std::string, std::string>& l) {
    const auto [it, added] =
        unit_index_.try_emplace({LabelValue(l, "node"), LabelValue(l, "unit")}, units_.size());
    if (added) units_.emplace_back();
    return it->second;
  }
  size_t OwnerOf(size_t unit, const std::map<std::string, std::string>& l) {
    auto& index = units_[unit].owners;
    const auto [it, added] =
        index.try_emplace(OwnerId{LabelValue(l, "owner_kind"), LabelValue(l, "namespace"),
                                  LabelValue(l, "pod"), LabelValue(l, "container")},
                          owners_.size());
    if (added)
      owners_.push_back(
          {unit,
           {domain::OwnerKindFromString(LabelValue(l, "owner_kind")), LabelValue(l, "namespace"),
            LabelValue(l, "pod"), LabelValue(l, "container")},
           {},
           {}});
    return it->second;
  }
  void AddUnit(size_t unit, int64_t t, double UnitValues::*f, double v) {
    const size_t i = Time(t);
    auto& u = units_[unit];
    Grow(u.values, i);
    Grow(u.present, i);
    u.values[i].*f += v;
    u.present[i] = 1;
  }
  void AddOwner(size_t owner, int64_t t, size_t field, double v) {
    const size_t i = Time(t);
    auto& o = owners_[owner];
    Grow(o.values, i);
    o.values[i][field] += v;
    if (field == kTrafficField) {
      Grow(o.traffic_seen, i);
      o.traffic_seen[i] = 1;
    }
    auto& present = units_[o.unit].present;
    Grow(present, i);
    present[i] = 1;
  }

  // The records by time, units in (node, UUID) order and owners in (kind, namespace, pod,
  // container) order; each unit described by `ids` (one without info keeps its node and UUID).
  std::map<int64_t, std::vector<UnitRecord>> Take(const UnitIdentities& ids) const {
    static constexpr double OwnerAmounts::*kFields[] = {
        &OwnerAmounts::memory_byte_seconds,     &OwnerAmounts::compute_seconds,
        &OwnerAmounts::requested_share_seconds, &OwnerAmounts::compute_unknown_seconds,
        &OwnerAmounts::memory_busy_seconds,     &OwnerAmounts::memory_busy_unknown_seconds};
    static_assert(std::size(kFields) == kOwnerFields);
    std::map<int64_t, std::vector<UnitRecord>> out;
    for (const auto& [t, i] : times_)
      for (const auto& [id, u] : unit_index_) {
        const auto& unit = units_[u];
        if (i >= unit.present.size() || !unit.present[i]) continue;
        UnitRecord r;
        const auto it = ids.find(id);
        r.unit = it != ids.end() ? it->second
                                 : UnitKey{id.first, id.second, "", "", "", std::nullopt, 1};
        if (i < unit.values.size()) {
          r.seconds = unit.values[i].seconds;
          r.memory_capacity_byte_seconds = unit.values[i].memory_capacity_byte_seconds;
        }
        for (const auto& [oid, o] : unit.owners) {
          const auto& owner = owners_[o];
          if (i >= owner.values.size()) continue;
          const auto& v = owner.values[i];
          if (std::none_of(v.begin(), v.end(), [](double x) { return x > 0; })) continue;
          OwnerAmounts a;
          a.owner = owner.owner;
          for (size_t f = 0; f < kOwnerFields; ++f) a.*kFields[f] = v[f];
          if (a.owner.kind == domain::OwnerKind::kContainer &&
              (i >= owner.traffic_seen.size() || !owner.traffic_seen[i]))
            a.memory_busy_unknown_seconds = r.seconds;
          r.owners.push_back(std::move(a));
        }
        out[t].push_back(std::move(r));
      }
    return out;
  }

 private:
  struct Unit {
    std::vector<UnitValues> values;  // by time index
    std::vector<char> present;       // by time index
    std::map<OwnerId, size_t> owners;
  };
  struct Owner {
    size_t unit;
    attribution::Owner owner;
    std::vector<OwnerValues> values;  // by time index
    std::vector<char> traffic_seen;   // by time index: a gpumeter_memory_busy_seconds_total point
  };
  // A map of a few hundred times at most (a 6-hour read's minutes): cheap next to the labels.
  size_t Time(int64_t t) { return times_.try_emplace(t, times_.size()).first->second; }
  template <typename T>
  static void Grow(std::vector<T>& v, size_t i) {
    if (v.size() <= i) v.resize(i + 1);
  }

  std::map<int64_t, size_t> times_;
  std::map<UnitId, size_t> unit_index_;
  std::vector<Unit> units_;
  std::vector<Owner> owners_;
};

}  // namespace

void StepGrowthInto(const std::vector<std::pair<int64_t, double>>& points, int64_t start_s,
                    int64_t end_s, int64_t step_s, std::vector<std::pair<int64_t, double>>& out) {
  out.clear();
  // Only the points the query asked for: a reply's times are not trusted to bound the gaps.
  const auto asked = [&](const std::pair<int64_t, double>& p) {
    return p.first >= start_s * 1000 && p.first <= end_s * 1000;
  };
  const std::pair<int64_t, double>* prev = nullptr;
  for (const auto& p : points) {
    if (!asked(p)) continue;
    const int64_t t = (p.first + 500) / 1000;
    const double v = p.second;
    if (prev == nullptr) {
      if (t > start_s) out.emplace_back(t - step_s, v);  // born in the step before its first point
    } else if (const int64_t prev_t = (prev->first + 500) / 1000; v < prev->second) {
      out.emplace_back(t - step_s, v);  // reset: the agent restarted and counted v since
    } else {
      // Over a gap (scrapes missed) the growth is spread over its steps, not put in one.
      const int64_t steps = std::max<int64_t>(1, (t - prev_t) / step_s);
      for (int64_t k = 0; k < steps; ++k)
        out.emplace_back(prev_t + k * step_s, (v - prev->second) / static_cast<double>(steps));
    }
    prev = &p;
  }
}

std::map<int64_t, double> StepGrowth(const std::vector<std::pair<int64_t, double>>& points,
                                     int64_t start_s, int64_t end_s, int64_t step_s) {
  std::vector<std::pair<int64_t, double>> steps;
  StepGrowthInto(points, start_s, end_s, step_s, steps);
  std::map<int64_t, double> out;
  for (const auto& [t, v] : steps) out[t] += v;
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
      "count(last_over_time(" + std::string(names::kUnitSeconds) + UnitMatchers() + "[1h]))",
      steps_from, now_, 3600);
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
Expected<usage::PodWorkloadMap> PrometheusHistory::HistoryPodWorkloads() const {
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
  if (auto r = read(RecordedName(names::kPodWorkloadInfo), lookback_, "max_over_time", recorded);
      !r)
    return tl::unexpected(r.error());
  if (auto r = read(names::kPodWorkloadInfo, raw_range, "last_over_time", raw); !r)
    return tl::unexpected(r.error());
  if (auto t =
          TimeAmbiguousPods(api_, names::kPodWorkloadInfo, by, raw_range, now_, raw, workload_of);
      !t)
    return tl::unexpected(t.error());
  usage::PodWorkloadMap out;
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
  std::vector<std::pair<int64_t, double>> growth;  // reused: one series' steps at a time
  // Each series on its own, not summed by Prometheus (`sum by` over every owner label took ~6
  // times as long to evaluate as the selection; docs/fleet.md): series that share a unit and
  // owner but differ in other labels (a relabelling's, another scrape target's) add up here.
  auto each_step = [&](const PromSeries& s, int64_t a, int64_t z, auto&& add) {
    StepGrowthInto(s.points, a, z, kStep, growth);
    for (const auto& [t, v] : growth)
      if (t >= from && t < to) add(t, v);
  };
  for (int64_t a = from; a < to; a += kPiece) {
    const int64_t z = std::min(to, a + kPiece);
    // The piece's counters at once, units' first (each query decoded on its own thread).
    std::vector<std::function<Expected<std::vector<PromSeries>>()>> reads;
    for (const auto& [metric, field] : kUnitCounters)
      reads.emplace_back([this, q = Latest(metric, UnitMatchers()), a, z] {
        return api_.QueryRange(q, a, z, kStep);
      });
    for (const char* metric : kOwnerCounters)
      reads.emplace_back([this, q = Latest(metric, OwnerMatchers()), a, z] {
        return api_.QueryRange(q, a, z, kStep);
      });
    auto replies = AllAtOnce(reads, kQueriesAtOnce);
    for (size_t i = 0; i < replies.size(); ++i) {
      if (!replies[i]) return tl::unexpected(replies[i].error());
      for (const auto& s : *replies[i]) {
        const size_t unit = b.UnitOf(s.labels);
        if (i < std::size(kUnitCounters)) {
          const auto field = kUnitCounters[i].second;
          each_step(s, a, z, [&](int64_t t, double v) { b.AddUnit(unit, t, field, v); });
        } else {
          const size_t f = i - std::size(kUnitCounters), owner = b.OwnerOf(unit, s.labels);
          each_step(s, a, z, [&](int64_t t, double v) { b.AddOwner(owner, t, f, v); });
        }
      }
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
  std::vector<std::function<Expected<std::vector<PromSeries>>()>> reads;
  for (const auto& [metric, field] : kUnitCounters)
    reads.emplace_back([this, q = RecordedName(metric) + UnitMatchers() + range, to] {
      return api_.QueryRaw(q, to);
    });
  for (const char* metric : kOwnerCounters)
    reads.emplace_back([this, q = RecordedName(metric) + OwnerMatchers() + range, to] {
      return api_.QueryRaw(q, to);
    });
  auto replies = AllAtOnce(reads, kQueriesAtOnce);
  Buckets b;
  for (size_t i = 0; i < replies.size(); ++i) {
    if (!replies[i]) return tl::unexpected(replies[i].error());
    for (const auto& s : *replies[i]) {
      const size_t unit = b.UnitOf(s.labels);
      const bool of_unit = i < std::size(kUnitCounters);
      const size_t owner = of_unit ? 0 : b.OwnerOf(unit, s.labels);
      for (const auto& [t_ms, v] : s.points) {
        const int64_t t = (t_ms + 500) / 1000 - 3600;
        if (t < earliest) continue;
        if (of_unit)
          b.AddUnit(unit, t, kUnitCounters[i].second, v);
        else
          b.AddOwner(owner, t, i - std::size(kUnitCounters), v);
      }
    }
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
