#include "core/top/frame.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/enum_names.h"

namespace gpumeter::top {
namespace {

using domain::OwnerKind;

Amount Times(Amount a, double k) { return a ? Amount(*a * k) : std::nullopt; }
double Or0(Amount a) { return a.value_or(0); }

// One hour of the frame's rates as a usage record, for cost::BuildChargeback.
attribution::UnitRecord HourOf(const UnitNow& u) {
  attribution::UnitRecord r;
  r.unit = u.key;
  r.seconds = 3600;
  r.memory_capacity_byte_seconds = Or0(u.memory_total_bytes) * 3600;
  r.energy_joules = Or0(u.power_watts) * 3600;
  for (const auto& o : u.owners)
    r.owners.push_back({o.owner, Or0(o.memory_bytes) * 3600, Or0(o.compute_ratio) * 3600,
                        Or0(o.power_watts) * 3600, Or0(o.held_share) * 3600});
  return r;
}

Amount SortValue(const GroupRow& r, SortKey key) {
  switch (key) {
    case SortKey::kMemory:
      return r.memory_bytes;
    case SortKey::kCost:
      return r.cost_per_hour;
    case SortKey::kWaste:
      return r.waste_gpus;
    case SortKey::kCompute:
      break;
  }
  return r.compute_gpus;
}

void AddTo(GroupRow& row, const UnitNow& u, const OwnerNow& o) {
  const double fraction = u.key.fraction;
  row.held_gpus = Plus(row.held_gpus, Times(o.held_share, fraction));
  row.compute_gpus = Plus(row.compute_gpus, Times(o.compute_ratio, fraction));
  row.compute_bound_gpus = Plus(row.compute_bound_gpus, Times(o.compute_bound_ratio, fraction));
  row.power_bound_watts = Plus(row.power_bound_watts, o.power_bound_watts);
  row.compute_unknown = row.compute_unknown || o.compute_unknown;
  row.memory_busy_gpus = Plus(row.memory_busy_gpus, Times(o.memory_busy_ratio, fraction));
  row.memory_busy_bound_gpus =
      Plus(row.memory_busy_bound_gpus, Times(o.memory_busy_bound_ratio, fraction));
  row.memory_busy_unknown = row.memory_busy_unknown || o.memory_busy_unknown;
  row.memory_bytes = Plus(row.memory_bytes, o.memory_bytes);
  row.power_watts = Plus(row.power_watts, o.power_watts);
  row.cost_per_hour = Plus(row.cost_per_hour, o.cost_per_hour);
  if (std::find(row.units.begin(), row.units.end(), u.label) == row.units.end())
    row.units.push_back(u.label);
}

}  // namespace

Amount Plus(Amount a, Amount b) { return a && b ? Amount(*a + *b) : std::nullopt; }

void PriceFrame(FrameData& frame, const cost::Pricing& pricing, const cost::Policy& policy) {
  std::vector<attribution::UnitRecord> hours;
  for (const auto& u : frame.units) hours.push_back(HourOf(u));
  const auto cb = cost::BuildChargeback(hours, frame.labels, pricing, policy, {"container"});
  frame.currency = cb.currency;
  for (auto& u : frame.units) {
    const cost::UnitCost* priced = nullptr;
    for (const auto& c : cb.units)
      if (c.unit == u.key) priced = &c;
    u.cost_per_hour = priced && priced->price ? Amount(priced->cost) : std::nullopt;
    for (auto& o : u.owners) {
      o.cost_per_hour = std::nullopt;
      // A cost split by use needs the use: unknown use is unknown cost, not a free ride.
      if (!u.cost_per_hour || (!o.memory_bytes && !o.compute_ratio)) continue;
      o.cost_per_hour = 0.0;
      for (const auto& row : priced->rows)
        if (row.owner == o.owner) *o.cost_per_hour += row.cost;
    }
  }
}

namespace {

constexpr EnumName<View> kViewNames[] = {
    {View::kPods, "pods"}, {View::kFindings, "findings"}, {View::kUnits, "units"}};
static_assert(DistinctEnumNames(kViewNames));

}  // namespace

const char* ToString(View v) { return EnumToString(kViewNames, v, "units"); }

namespace {

constexpr EnumName<SortKey> kSortKeyNames[] = {{SortKey::kMemory, "memory"},
                                               {SortKey::kCost, "cost"},
                                               {SortKey::kWaste, "waste"},
                                               {SortKey::kCompute, "compute"}};
static_assert(DistinctEnumNames(kSortKeyNames));

}  // namespace

const char* ToString(SortKey k) { return EnumToString(kSortKeyNames, k, "compute"); }

SortKey NextSortKey(SortKey k) {
  switch (k) {
    case SortKey::kCompute:
      return SortKey::kMemory;
    case SortKey::kMemory:
      return SortKey::kCost;
    case SortKey::kCost:
      return SortKey::kWaste;
    case SortKey::kWaste:
      break;
  }
  return SortKey::kCompute;
}

Expected<View> ParseView(const std::string& text) {
  if (const auto v = EnumFromString(kViewNames, text)) return *v;
  return MakeError(ErrorCode::kInvalidInput,
                   "view '" + text + "': expected units, pods or findings");
}

Expected<SortKey> ParseSortKey(const std::string& text) {
  if (const auto k = EnumFromString(kSortKeyNames, text)) return *k;
  return MakeError(ErrorCode::kInvalidInput,
                   "sort '" + text + "': expected compute, memory, cost or waste");
}

Expected<void> CheckGroupBy(const std::string& by) {
  if (by == "container" || by == "pod" || by == "namespace") return {};
  if (by.rfind("label:", 0) == 0 && by.size() > 6) return {};
  return MakeError(ErrorCode::kInvalidInput,
                   "--by '" + by + "': expected container, pod, namespace or label:KEY");
}

bool Filter::Matches(const domain::Owner& o) const {
  if (o.kind != OwnerKind::kContainer) return false;
  if (!ns.empty() && o.ns != ns) return false;
  return text.empty() || o.ns.find(text) != std::string::npos ||
         o.pod.find(text) != std::string::npos || o.container.find(text) != std::string::npos;
}

bool Filter::MatchesWho(const std::string& who) const {
  if (who.find('/') == std::string::npos) return true;  // a device's, or a host process's
  if (!ns.empty() && who.rfind(ns + "/", 0) != 0) return false;
  return text.empty() || who.find(text) != std::string::npos;
}

std::vector<GroupRow> GroupRows(const FrameData& f, const std::string& by, SortKey sort,
                                const Filter& filter) {
  std::map<std::vector<std::string>, GroupRow> groups;
  for (const auto& u : f.units)
    for (const auto& o : u.owners) {
      if (o.owner.kind != OwnerKind::kContainer) continue;
      if (!filter.Empty() && !filter.Matches(o.owner)) continue;
      auto key = GroupKeyOf(f, o.owner, by);
      auto [it, fresh] = groups.try_emplace(key);
      if (fresh) {
        GroupRow& r = it->second;
        r.key = key;
        r.held_gpus = r.compute_gpus = r.compute_bound_gpus = 0.0;
        r.memory_busy_gpus = r.memory_busy_bound_gpus = 0.0;
        r.memory_bytes = r.power_watts = r.power_bound_watts = r.cost_per_hour = 0.0;
      }
      AddTo(it->second, u, o);
    }
  std::vector<GroupRow> rows;
  for (auto& [k, r] : groups) {
    if (r.held_gpus && r.compute_gpus) r.waste_gpus = std::max(0.0, *r.held_gpus - *r.compute_gpus);
    rows.push_back(std::move(r));
  }
  std::stable_sort(rows.begin(), rows.end(), [sort](const GroupRow& a, const GroupRow& b) {
    const Amount va = SortValue(a, sort), vb = SortValue(b, sort);
    if (va.has_value() != vb.has_value()) return va.has_value();  // unknown last
    if (va && *va != *vb) return *va > *vb;
    return a.key < b.key;
  });
  return rows;
}

std::vector<const UnitNow*> FilteredUnits(const FrameData& f, const Filter& filter) {
  std::vector<const UnitNow*> out;
  for (const auto& u : f.units) {
    bool match = filter.Empty();
    for (const auto& o : u.owners) match = match || filter.Matches(o.owner);
    if (match) out.push_back(&u);
  }
  return out;
}

UnitSums SumOwners(const UnitNow& u) {
  UnitSums s{0.0, 0.0, 0.0, 0.0, 0.0};
  for (const auto& o : u.owners) {
    s.compute_ratio = Plus(s.compute_ratio, o.compute_ratio);
    s.memory_busy_ratio = Plus(s.memory_busy_ratio, o.memory_busy_ratio);
    s.memory_bytes = Plus(s.memory_bytes, o.memory_bytes);
    s.power_watts = Plus(s.power_watts, o.power_watts);
    s.cost_per_hour = Plus(s.cost_per_hour, o.cost_per_hour);
    // Only containers hold a share; idle, system and unattributed hold none.
    if (o.owner.kind == OwnerKind::kContainer) s.held_share = Plus(s.held_share, o.held_share);
  }
  return s;
}

std::vector<FindingNow> SortedFindings(const FrameData& f, const Filter& filter) {
  std::vector<FindingNow> out;
  if (!f.findings) return out;
  for (const auto& x : *f.findings)
    if (filter.MatchesWho(x.who)) out.push_back(x);
  // Criticals above warnings above the rest, whenever each was first seen; newest first within.
  auto rank = [](const std::string& severity) {
    return severity == "critical" ? 0 : severity == "warning" ? 1 : severity == "info" ? 2 : 3;
  };
  std::stable_sort(out.begin(), out.end(), [&rank](const FindingNow& a, const FindingNow& b) {
    if (rank(a.severity) != rank(b.severity)) return rank(a.severity) < rank(b.severity);
    return a.first_seen_unix_s > b.first_seen_unix_s;
  });
  return out;
}

std::vector<std::string> GroupKeyOf(const FrameData& f, const domain::Owner& o,
                                    const std::string& by) {
  if (by == "namespace") return {o.ns};
  if (by == "pod") return {o.ns, o.pod};
  if (by.rfind("label:", 0) == 0) {
    const auto pod = f.labels.find({o.ns, o.pod});
    if (pod == f.labels.end()) return {"?"};  // labels unknown to this source
    const auto v = pod->second.find(by.substr(6));
    return {v == pod->second.end() ? "(none)" : v->second};
  }
  return {o.ns, o.pod, o.container};
}

}  // namespace gpumeter::top
