#include "core/cost/chargeback.h"

#include <algorithm>
#include <map>
#include <set>

namespace gpumeter::cost {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
GroupValue Value(const std::string& dim, const attribution::UnitKey& unit, const domain::Owner& o,
                 const Labels& labels) {
  const bool container = o.kind == domain::OwnerKind::kContainer;
  if (dim == "node") return unit.node;
  if (dim == "gpu_model") return unit.model.empty() ? "(unknown)" : unit.model;
  if (!container)
    return o.kind == domain::OwnerKind::kIdle ? GroupValue::Idle() : domain::ToString(o.kind);
  if (dim == "namespace") return o.ns;
  if (dim == "pod") return o.ns + "/" + o.pod;
  if (dim == "container") return o.ns + "/" + o.pod + "/" + o.container;
  // label:KEY
  const std::string key = dim.substr(6);
  if (auto it = labels.find({o.ns, o.pod}); it != labels.end())
    if (auto l = it->second.find(key); l != it->second.end()) return l->second;
  return "(no " + key + ")";
}

// The unit's price and what its hours cost; a model without a price goes into `unpriced`, a
// default price into `flagged`.
UnitCost PriceUnit(const attribution::UnitRecord& u, const cost::Pricing& pricing,
                   std::set<std::string>& unpriced, std::set<std::string>& flagged) {
  UnitCost uc;
  uc.unit = u.unit;
  uc.hours = u.seconds / 3600;
  uc.price = pricing.Quote(u.unit.model, pricing.InstanceTypeOf(u.unit.node));
  if (!uc.price)
    unpriced.insert(u.unit.model.empty() ? "(unknown model)" : u.unit.model);
  else if (uc.price->flagged)
    flagged.insert(u.unit.model + ": " + uc.price->source);
  uc.cost = uc.price ? uc.price->per_gpu_hour * u.unit.fraction * uc.hours : 0;
  return uc;
}

}  // namespace

Expected<std::vector<std::string>> ParseGroupBy(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string d(text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    static const std::set<std::string> known{"namespace", "pod", "container", "gpu_model", "node"};
    if (!known.count(d) && !(d.rfind("label:", 0) == 0 && d.size() > 6))
      return MakeError(ErrorCode::kInvalidInput,
                       "--by '" + std::string(text) + "': unknown '" + d +
                           "' (namespace, pod, container, label:KEY, gpu_model, node)");
    out.push_back(d);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

Chargeback BuildChargeback(const std::vector<attribution::UnitRecord>& units, const Labels& labels,
                           const cost::Pricing& pricing, const cost::Policy& policy,
                           const std::vector<std::string>& dims) {
  std::set<std::string> unpriced, flagged;
  std::vector<CostedRecord> costed;
  costed.reserve(units.size());
  for (const auto& u : units) costed.push_back({&u, PriceUnit(u, pricing, unpriced, flagged)});
  Chargeback out = AssembleChargeback(costed, labels, policy, dims, pricing.currency());
  out.unpriced_models.assign(unpriced.begin(), unpriced.end());
  out.flagged_prices.assign(flagged.begin(), flagged.end());
  return out;
}

namespace {

// Time in which some tenants' use of one unit was unknown (compute, or memory busy time): each
// tenant's is the whole unknown time, so a group's (and the total's) is at most the unit's
// unattributed time, which holds it.
struct UnknownTime {
  double unattributed = 0, all = 0;
  std::map<GroupTotals*, double> by_group;
  void Add(GroupTotals& g, double s) { by_group[&g] += s, all += s; }
  // Into `hours` of each group and of `total`, for a unit of `fraction` of its GPU.
  void Book(double GroupTotals::*hours, GroupTotals& total, double fraction) const {
    for (const auto& [g, s] : by_group) g->*hours += std::min(s, unattributed) * fraction / 3600;
    total.*hours += std::min(all, unattributed) * fraction / 3600;
  }
};

}  // namespace

Chargeback AssembleChargeback(const std::vector<CostedRecord>& units, const Labels& labels,
                              const cost::Policy& policy, const std::vector<std::string>& dims,
                              const std::string& currency) {
  Chargeback out;
  out.dimensions = dims;
  out.policy = policy.Name();
  out.currency = currency;
  std::map<std::vector<GroupValue>, GroupTotals> groups;
  auto group = [&](const attribution::UnitKey& unit, const domain::Owner& o) -> GroupTotals& {
    std::vector<GroupValue> key;
    for (const auto& d : dims) key.push_back(Value(d, unit, o, labels));
    auto& g = groups[key];
    g.key = key;
    return g;
  };
  for (const auto& [record, unit_cost] : units) {
    const attribution::UnitRecord& u = *record;
    UnitCost uc = unit_cost;
    // Usage into groups: container rows under their owner, the rest under theirs.
    UnknownTime unknown, traffic_unknown;  // compute's and memory busy time's
    for (const auto& o : u.owners) {
      auto& g = group(u.unit, o.owner);
      g.gpu_hours_held += o.requested_share_seconds * u.unit.fraction / 3600;
      if (o.owner.kind == domain::OwnerKind::kContainer) {
        g.compute_hours += o.compute_seconds * u.unit.fraction / 3600;
        // A sum's error is at most the sum of its parts' bounds (conservative: tenants of one
        // split in one group err in opposite directions).
        g.compute_bound_hours += o.compute_bound_seconds * u.unit.fraction / 3600;
        unknown.Add(g, o.compute_unknown_seconds);
        g.memory_busy_hours += o.memory_busy_seconds * u.unit.fraction / 3600;
        g.memory_busy_bound_hours += o.memory_busy_bound_seconds * u.unit.fraction / 3600;
        traffic_unknown.Add(g, o.memory_busy_unknown_seconds);
      }
      if (o.owner.kind == domain::OwnerKind::kUnattributed) {
        unknown.unattributed += o.compute_seconds;
        traffic_unknown.unattributed += o.memory_busy_seconds;
      }
      g.memory_gib_hours += o.memory_byte_seconds / kGiB / 3600;
      g.energy_kwh += o.energy_joules / 3.6e6;
      g.energy_bound_kwh += o.energy_bound_joules / 3.6e6;
    }
    unknown.Book(&GroupTotals::compute_unknown_hours, out.total, u.unit.fraction);
    traffic_unknown.Book(&GroupTotals::memory_busy_unknown_hours, out.total, u.unit.fraction);
    if (uc.price) {
      cost::UnitUsage usage;
      usage.seconds = u.seconds;
      usage.memory_capacity_byte_seconds = u.memory_capacity_byte_seconds;
      usage.cost = uc.cost;
      for (const auto& o : u.owners)
        usage.owners.push_back({o.owner, o.memory_byte_seconds, o.compute_seconds, o.energy_joules,
                                o.requested_share_seconds});
      uc.rows = cost::Allocate(usage, policy);
      for (const auto& r : uc.rows) {
        auto& g = group(u.unit, r.owner);
        g.cost += r.cost;
        g.idle_cost += r.idle_cost;
      }
    }
    out.total.cost += uc.cost;
    out.units.push_back(std::move(uc));
  }
  for (auto& [k, g] : groups) {
    out.total.gpu_hours_held += g.gpu_hours_held;
    out.total.compute_hours += g.compute_hours;
    out.total.compute_bound_hours += g.compute_bound_hours;
    out.total.memory_busy_hours += g.memory_busy_hours;
    out.total.memory_busy_bound_hours += g.memory_busy_bound_hours;
    out.total.memory_gib_hours += g.memory_gib_hours;
    out.total.energy_kwh += g.energy_kwh;
    out.total.idle_cost += g.idle_cost;
    out.groups.push_back(g);
  }
  std::stable_sort(out.groups.begin(), out.groups.end(),
                   [](const GroupTotals& a, const GroupTotals& b) { return a.cost > b.cost; });
  return out;
}

}  // namespace gpumeter::cost
