#include "sources/history/prometheus_source.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>

#include "common/all_at_once.h"
#include "domain/metric_names.h"
#include "domain/pod_label.h"

namespace gpumeter::history {

using cost::Labels;
namespace names = domain::metric_names;
namespace {

using Sample = PromSample;

// One segment of the window, read from the raw counters or from the hourly recorded series; every
// query is evaluated at the segment's end.
struct Part {
  Segment seg;

  int64_t At() const { return seg.to; }
  // Raw: the segment. Recorded: back to just after the first evaluation's hour began, so the
  // selector holds the evaluations in (from, to] and no earlier one.
  std::string Range() const {
    return "[" + std::to_string(seg.recorded ? seg.to - seg.from - 1800 : seg.to - seg.from) + "s]";
  }

  // What a counter grew by in the segment, summed by `by`. Raw: a series that had samples before
  // the segment: increase() (extrapolated only across the gap to each boundary); a series born in
  // it (the agent started, or the pod): its last value, as gpumeter's counters start at 0 and
  // increase() would drop what it counted before its first scrape — unless it was reset in the
  // segment too (the agent restarted), when the last value would drop what came before the
  // reset: those are left out here and added up from their samples (BornAndReset). Recorded: the
  // hours' growth, which the rules compute the same way per hour.
  std::string Counter(const std::string& metric, const std::string& by) const {
    if (seg.recorded)
      return "sum by (" + by + ") (sum_over_time(" + RecordedName(metric) + Range() + "))";
    return "sum by (" + by + ") ((increase(" + metric + Range() + ") and " + Before(metric) +
           ") or (last_over_time(" + metric + Range() + ") unless " + Before(metric) +
           " unless (resets(" + metric + Range() + ") > 0)))";
  }
  // The raw series born in the segment and reset in it.
  std::string BornAndReset(const std::string& metric) const {
    return "(resets(" + metric + Range() + ") > 0) unless " + Before(metric);
  }
  // A series' samples in the hour before the segment: none means it was born in the segment.
  std::string Before(const std::string& metric) const {
    return "(last_over_time(" + metric + "[1h] offset " + std::to_string(seg.to - seg.from) + "s))";
  }

  // The latest value of a gauge (info series, ratios) in the segment, aggregated by `by`.
  std::string Latest(const std::string& agg, const std::string& metric,
                     const std::string& by) const {
    return agg + " by (" + by + ") (last_over_time(" +
           (seg.recorded ? RecordedName(metric) : metric) + Range() + "))";
  }
};

// A counter that started at 0 in the segment: its first sample, then each step's growth, and
// after a reset (a drop) the whole new value.
double GrowthFromZero(const std::vector<std::pair<int64_t, double>>& points) {
  double total = 0, previous = 0;
  for (const auto& [t, v] : points) {
    total += v >= previous ? v - previous : v;
    previous = v;
  }
  return total;
}

// What `metric` grew by in the part: the samples of Part::Counter (summed by `by`), then one per
// series born and reset in it, added up from its raw samples (its labels whole). Callers add
// both by the labels they key on.
Expected<std::vector<Sample>> CounterGrowth(const PrometheusApi& api, const Part& part,
                                            const std::string& metric, const std::string& by) {
  auto out = api.Query(part.Counter(metric, by), part.At());
  if (!out || part.seg.recorded) return out;
  auto born = api.Query(part.BornAndReset(metric), part.At());
  if (!born) return tl::unexpected(born.error());
  if (born->empty()) return out;
  std::set<std::map<std::string, std::string>> wanted;
  std::set<std::string> nodes;
  for (auto& b : *born) {
    b.labels.erase("__name__");
    nodes.insert(LabelValue(b, "node"));
    wanted.insert(b.labels);
  }
  auto raw = api.QueryRaw(metric + "{node=~" + PromQuote(AnyOfRegex(nodes)) + "}" + part.Range(),
                          part.At());
  if (!raw) return tl::unexpected(raw.error());
  for (auto& series : *raw) {
    series.labels.erase("__name__");
    if (wanted.count(series.labels))
      out->push_back({std::move(series.labels), GrowthFromZero(series.points)});
  }
  return out;
}

// CounterGrowth of each of `counters` (pairs of a metric and anything), all at once: a 30-day
// report's queries each take Prometheus a tenth of a second per 10 nodes, one core each.
template <size_t N, typename Field>
std::vector<Expected<std::vector<Sample>>> Growths(
    const PrometheusApi& api, const Part& part, const std::pair<const char*, Field> (&counters)[N],
    const std::string& by) {
  std::vector<std::function<Expected<std::vector<Sample>>()>> reads;
  for (const auto& c : counters)
    reads.emplace_back(
        [&api, &part, &by, metric = c.first] { return CounterGrowth(api, part, metric, by); });
  return AllAtOnce(reads, kQueriesAtOnce);
}

using Units =
    std::map<std::pair<std::string, std::string>, attribution::UnitRecord>;  // (node, unit)

// Unit identity (the latest info in the segment) and each unit's fraction of its GPU.
Expected<void> ReadUnits(const PrometheusApi& api, const Part& part, Units& units) {
  const int64_t range =
      part.seg.recorded ? part.seg.to - part.seg.from - 1800 : part.seg.to - part.seg.from;
  auto ids = ReadUnitIdentities(api, part.At(), range, part.seg.recorded, "");
  if (!ids) return tl::unexpected(ids.error());
  for (auto& [k, id] : *ids) units[k].unit = std::move(id);
  return {};
}

// Unit capacities over the segment, added to the units already known.
Expected<void> ReadUnitCounters(const PrometheusApi& api, const Part& part, Units& units) {
  const std::pair<const char*, double attribution::UnitRecord::*> unit_counters[] = {
      {names::kUnitSeconds, &attribution::UnitRecord::seconds},
      {names::kUnitMemoryCapacity, &attribution::UnitRecord::memory_capacity_byte_seconds},
      {names::kUnitEnergy, &attribution::UnitRecord::energy_joules}};
  auto growth = Growths(api, part, unit_counters, "node, unit");
  for (size_t i = 0; i < growth.size(); ++i) {
    if (!growth[i]) return tl::unexpected(growth[i].error());
    for (const auto& s : *growth[i])
      if (auto it = units.find({LabelValue(s, "node"), LabelValue(s, "unit")}); it != units.end())
        it->second.*unit_counters[i].second += s.value;
  }
  return {};
}

using OwnerKey =
    std::tuple<std::string, std::string, std::string, std::string, std::string, std::string>;
using Owners = std::map<OwnerKey, attribution::OwnerAmounts>;

using UnitIds = std::set<std::pair<std::string, std::string>>;  // (node, unit)

// Owners: one query per counter, joined on (node, unit, owner), added over the segments; the
// units with a memory-busy-time series into `traffic_units`.
Expected<void> ReadOwners(const PrometheusApi& api, const Part& part, Owners& owners,
                          UnitIds& traffic_units) {
  const std::pair<const char*, double attribution::OwnerAmounts::*> owner_counters[] = {
      {names::kMemoryByteSeconds, &attribution::OwnerAmounts::memory_byte_seconds},
      {names::kComputeSeconds, &attribution::OwnerAmounts::compute_seconds},
      {names::kEnergyJoules, &attribution::OwnerAmounts::energy_joules},
      {names::kRequestedShareSeconds, &attribution::OwnerAmounts::requested_share_seconds},
      // Exported only once above 0 (and not by agents before it): no series reads as none.
      {names::kComputeUnknownSeconds, &attribution::OwnerAmounts::compute_unknown_seconds},
      {names::kComputeBoundSeconds, &attribution::OwnerAmounts::compute_bound_seconds},
      {names::kMemoryBusySeconds, &attribution::OwnerAmounts::memory_busy_seconds},
      // As unknown compute: exported once above 0, so no series reads as none. An agent before
      // memory busy time, or one with the default set of series (the three memory-busy families
      // are in the full set only), exports no series of it at all: HoldUnmeasuredTraffic.
      {names::kMemoryBusyUnknownSeconds, &attribution::OwnerAmounts::memory_busy_unknown_seconds},
      {names::kMemoryBusyBoundSeconds, &attribution::OwnerAmounts::memory_busy_bound_seconds},
      // Exported once above 0, and not by agents before energy bounds: none reads as exact.
      {names::kEnergyBoundJoules, &attribution::OwnerAmounts::energy_bound_joules}};
  auto growth =
      Growths(api, part, owner_counters, "node, unit, namespace, pod, container, owner_kind");
  for (size_t i = 0; i < growth.size(); ++i) {
    if (!growth[i]) return tl::unexpected(growth[i].error());
    const auto field = owner_counters[i].second;
    for (const auto& s : *growth[i]) {
      if (field == &attribution::OwnerAmounts::memory_busy_seconds)
        traffic_units.emplace(LabelValue(s, "node"), LabelValue(s, "unit"));
      auto& o =
          owners[{LabelValue(s, "node"), LabelValue(s, "unit"), LabelValue(s, "owner_kind"),
                  LabelValue(s, "namespace"), LabelValue(s, "pod"), LabelValue(s, "container")}];
      o.owner = {domain::OwnerKindFromString(LabelValue(s, "owner_kind")),
                 LabelValue(s, "namespace"), LabelValue(s, "pod"), LabelValue(s, "container")};
      o.*field += s.value;
    }
  }
  return {};
}

// A unit without any gpumeter_memory_busy_seconds_total series (an agent from before memory
// traffic, or one with the default set of series): its containers' traffic is unknown for the
// unit's time, which unattributed holds, as the agent books a unit with no signal; never 0
// measured.
void HoldUnmeasuredTraffic(const Units& units, const UnitIds& measured, Owners& owners) {
  for (const auto& [k, u] : units) {
    if (measured.count(k) || u.seconds <= 0) continue;
    for (auto& [ok, o] : owners)
      if (std::get<0>(ok) == k.first && std::get<1>(ok) == k.second &&
          o.owner.kind == domain::OwnerKind::kContainer)
        o.memory_busy_unknown_seconds = u.seconds;
    auto& nobody = owners[{k.first, k.second, "unattributed", "", "", ""}];
    nobody.owner = {domain::OwnerKind::kUnattributed, {}, {}, {}};
    nobody.memory_busy_seconds = u.seconds;
  }
}

// No unit exists for longer than the segment. increase() extrapolates the growth between a
// series' first and last sample in the range to the range's ends; over a short range that can
// exceed the range (samples 4 s apart that caught 4.5 s of a counter kept in 0.5 s steps read as
// 5.6 s of a 5 s window). Such a unit's counters, and its owners', are scaled down together by
// the same factor, so its owners still add up to it; a unit that accounted less than the segment
// (it appeared or went in it) is left as read.
void CapToSegment(double segment_seconds, Units& units, Owners& owners) {
  std::map<std::pair<std::string, std::string>, double> factors;
  for (auto& [key, u] : units) {
    if (!(u.seconds > segment_seconds)) continue;
    const double f = segment_seconds / u.seconds;
    u.seconds = segment_seconds, u.memory_capacity_byte_seconds *= f, u.energy_joules *= f;
    factors[key] = f;
  }
  if (factors.empty()) return;
  for (auto& [k, o] : owners)
    if (auto it = factors.find({std::get<0>(k), std::get<1>(k)}); it != factors.end()) {
      const double f = it->second;
      o.memory_byte_seconds *= f, o.compute_seconds *= f, o.energy_joules *= f;
      o.requested_share_seconds *= f, o.compute_unknown_seconds *= f;
      o.compute_bound_seconds *= f, o.memory_busy_seconds *= f;
      o.memory_busy_unknown_seconds *= f, o.memory_busy_bound_seconds *= f;
      o.energy_bound_joules *= f;
    }
}

// A segment's units and owners added to the window's: the latest identity, the sums of growth.
void Add(Units seg_units, Owners seg_owners, Units& units, Owners& owners) {
  for (auto& [k, s] : seg_units) {
    auto& u = units[k];
    u.unit = std::move(s.unit);
    u.seconds += s.seconds, u.memory_capacity_byte_seconds += s.memory_capacity_byte_seconds;
    u.energy_joules += s.energy_joules;
  }
  for (auto& [k, s] : seg_owners) {
    auto& o = owners[k];
    o.owner = std::move(s.owner);
    o.memory_byte_seconds += s.memory_byte_seconds, o.compute_seconds += s.compute_seconds;
    o.energy_joules += s.energy_joules, o.requested_share_seconds += s.requested_share_seconds;
    o.compute_unknown_seconds += s.compute_unknown_seconds;
    o.compute_bound_seconds += s.compute_bound_seconds;
    o.memory_busy_seconds += s.memory_busy_seconds;
    o.memory_busy_unknown_seconds += s.memory_busy_unknown_seconds;
    o.memory_busy_bound_seconds += s.memory_busy_bound_seconds;
    o.energy_bound_joules += s.energy_bound_joules;
  }
}

using LabelSet = std::map<std::string, std::string>;  // key -> value, non-empty values only

// The pods' labels (the --pod-label keys), from gpumeter_pod_labels_info: each pod's latest set in
// the segment replaces what earlier segments said, as the store keeps a pod's latest labels. Raw:
// the sets present, and for a pod relabelled in the segment, the last time each was scraped.
// Recorded: the rule's value is that time (gpumeter:pod_labels_info:max1h).
Expected<void> ReadLabels(const PrometheusApi& api, const Part& part,
                          const std::vector<std::string>& label_keys, Labels& labels) {
  if (label_keys.empty()) return {};
  std::vector<std::pair<std::string, std::string>> keys;  // key, label name
  std::string by = "namespace, pod";
  for (const auto& key : label_keys) {
    const std::string name = domain::PodLabelName(key);  // as the agent names it
    keys.emplace_back(key, name);
    by += ", " + name;
  }
  auto r = api.Query(part.seg.recorded ? "max by (" + by + ") (max_over_time(" +
                                             RecordedName(names::kPodLabels) + part.Range() + "))"
                                       : "group by (" + by + ") (last_over_time(" +
                                             names::kPodLabels + part.Range() + "))",
                     part.At());
  if (!r) return tl::unexpected(r.error());
  auto values_of = [&](const Sample& s) {
    LabelSet values;
    for (const auto& [key, name] : keys)
      if (auto v = LabelValue(s, name); !v.empty()) values[key] = v;
    return values;
  };
  // Raw: the sets present, timed where a pod has several. Recorded: the rule's value is the time.
  PodCandidates<LabelSet> sets;
  for (const auto& s : *r)
    sets[{LabelValue(s, "namespace"), LabelValue(s, "pod")}][values_of(s)] =
        part.seg.recorded ? s.value : 0.0;
  if (!part.seg.recorded)
    if (auto t = TimeAmbiguousPods(api, names::kPodLabels, by, part.seg.to - part.seg.from,
                                   part.At(), sets, values_of);
        !t)
      return t;
  ForEachLatest(sets, [&](const auto& pod, const LabelSet& set) { labels[pod] = set; });
  return {};
}

}  // namespace

Expected<UnitIdentities> ReadUnitIdentities(const PrometheusApi& api, int64_t at, int64_t range_s,
                                            bool recorded, const std::string& matchers) {
  const std::string range = matchers + "[" + std::to_string(range_s) + "s]";
  auto name = [&](const char* m) { return recorded ? RecordedName(m) : std::string(m); };
  auto info = api.Query(
      "max by (node, unit, gpu_uuid, model, mig_profile, sharing_mode) "
      "(last_over_time(" +
          name(names::kUnitInfo) + range + "))",
      at);
  if (!info) return tl::unexpected(info.error());
  UnitIdentities out;
  for (const auto& s : *info) {
    // An agent always labels the mode; a name it never writes would change the rules the
    // readers apply, so it is refused rather than read as unknown.
    const std::string text = LabelValue(s, "sharing_mode");
    const auto mode = domain::ParseSharingMode(text);
    if (!mode && !text.empty())
      return MakeError(ErrorCode::kInvalidInput,
                       "prometheus " + api.url() + ": " + names::kUnitInfo + "{node=\"" +
                           LabelValue(s, "node") + "\", unit=\"" + LabelValue(s, "unit") +
                           "\"} has sharing_mode \"" + text +
                           "\", not exclusive, time-slicing, mps or mig");
    out[{LabelValue(s, "node"), LabelValue(s, "unit")}] = {LabelValue(s, "node"),
                                                           LabelValue(s, "unit"),
                                                           LabelValue(s, "gpu_uuid"),
                                                           LabelValue(s, "model"),
                                                           LabelValue(s, "mig_profile"),
                                                           mode,
                                                           1.0};
  }
  auto fraction = api.Query(
      "max by (node, unit) (last_over_time(" + name(names::kUnitGpuShare) + range + "))", at);
  if (!fraction) return tl::unexpected(fraction.error());
  for (const auto& s : *fraction)
    if (auto it = out.find({LabelValue(s, "node"), LabelValue(s, "unit")}); it != out.end())
      it->second.fraction = s.value;
  return out;
}

std::string RecordedName(const std::string& raw_metric) {
  std::string name = raw_metric;
  if (name.rfind("gpumeter_", 0) == 0) name.erase(0, 9);
  const bool counter = name.size() > 6 && name.compare(name.size() - 6, 6, "_total") == 0;
  if (counter) name.erase(name.size() - 6);
  return "gpumeter:" + name + (counter ? ":increase1h" : ":max1h");
}

Expected<std::vector<int64_t>> RecordedEvaluations(const PrometheusApi& api, int64_t from,
                                                   int64_t to) {
  auto r = api.QueryRaw(std::string(kRecordedMarker) + "[" + std::to_string(to - from) + "s]", to);
  if (!r) return tl::unexpected(r.error());
  std::vector<int64_t> out;
  for (const auto& s : *r)  // one series per Prometheus (or per external-label set)
    // Rounded up: an evaluation runs at a phase to the nanosecond, and the recorded segment's
    // queries, evaluated at this second, must include it.
    for (const auto& [t_ms, v] : s.points) out.push_back((t_ms + 999) / 1000);
  return out;
}

Expected<PrometheusUsage> UsageFromPrometheus(const PrometheusApi& api, int64_t from, int64_t to,
                                              const std::vector<std::string>& label_keys,
                                              bool recorded) {
  PrometheusUsage out;
  std::vector<int64_t> evaluations;
  if (recorded && to - from >= 3600) {  // shorter: no whole recorded hour fits
    auto e = RecordedEvaluations(api, from, to);
    if (!e) return tl::unexpected(e.error());
    evaluations = std::move(*e);
  }
  out.segments = PlanSegments(from, to, std::move(evaluations));
  Units units;
  Owners owners;
  for (const auto& seg : out.segments) {
    const Part part{seg};
    Units seg_units;  // the units known so far, nothing counted yet: a segment's own growth
    for (const auto& [k, u] : units) seg_units[k].unit = u.unit;
    Owners seg_owners;
    UnitIds traffic_units;
    if (auto r = ReadUnits(api, part, seg_units); !r) return tl::unexpected(r.error());
    if (auto r = ReadUnitCounters(api, part, seg_units); !r) return tl::unexpected(r.error());
    if (auto r = ReadOwners(api, part, seg_owners, traffic_units); !r)
      return tl::unexpected(r.error());
    HoldUnmeasuredTraffic(seg_units, traffic_units, seg_owners);
    if (auto r = ReadLabels(api, part, label_keys, out.labels); !r)
      return tl::unexpected(r.error());
    CapToSegment(static_cast<double>(seg.to - seg.from), seg_units, seg_owners);
    Add(std::move(seg_units), std::move(seg_owners), units, owners);
  }
  if (units.empty())
    return MakeError(ErrorCode::kNotFound, "prometheus " + api.url() + ": no " + names::kUnitInfo +
                                               " in the window (is it scraping the agents?)");
  for (auto& [k, o] : owners)
    if (auto it = units.find({std::get<0>(k), std::get<1>(k)}); it != units.end())
      it->second.owners.push_back(o);
  for (auto& [k, u] : units)
    if (u.seconds > 0) out.units.push_back(std::move(u));
  return out;
}

Expected<std::vector<attribution::NodeRecord>> ReadNodeIdentities(const PrometheusApi& api,
                                                                  int64_t at, int64_t range_s) {
  auto info = api.Query(
      "max by (node, provider_id, instance_type, region, zone, capacity_type) "
      "(last_over_time(" +
          std::string(names::kNodeInfo) + "[" + std::to_string(std::max<int64_t>(range_s, 60)) +
          "s]))",
      at);
  if (!info) return tl::unexpected(info.error());
  std::vector<attribution::NodeRecord> out;
  std::set<std::pair<std::string, std::string>> seen;  // a label that changed: one row per VM
  for (const auto& s : *info) {
    attribution::NodeRecord n;
    n.name = LabelValue(s, "node");
    n.provider_id = LabelValue(s, "provider_id");
    n.instance_type = LabelValue(s, "instance_type");
    n.region = LabelValue(s, "region");
    n.zone = LabelValue(s, "zone");
    n.capacity_type = LabelValue(s, "capacity_type");
    if (!n.name.empty() && seen.insert({n.name, n.provider_id}).second) out.push_back(std::move(n));
  }
  return out;
}

Expected<std::map<int64_t, std::vector<attribution::UnitRecord>>> HourlyUsageFromPrometheus(
    const PrometheusApi& api, int64_t from, int64_t to, const std::vector<std::string>& label_keys,
    cost::Labels& labels) {
  std::map<int64_t, std::vector<attribution::UnitRecord>> out;
  std::optional<Error> none;
  // The hourly rules evaluate at an offset within the hour: no recorded hour fits one clock hour,
  // so each hour is read from the raw counters.
  for (int64_t h = from; h < to; h += 3600) {
    auto usage = UsageFromPrometheus(api, h, h + 3600, label_keys, false);
    if (!usage && usage.error().code == ErrorCode::kNotFound) {  // nothing that hour
      none = usage.error();
      continue;
    }
    if (!usage) return tl::unexpected(usage.error());
    for (auto& [pod, l] : usage->labels) labels[pod] = std::move(l);  // the latest hour's win
    out[h] = std::move(usage->units);
  }
  // Not one hour with data: the wrong Prometheus, or one that keeps no gpumeter usage.
  if (out.empty() && none) return tl::unexpected(*none);
  return out;
}

}  // namespace gpumeter::history
