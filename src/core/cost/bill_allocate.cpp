#include "core/cost/bill_allocate.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <iterator>
#include <limits>
#include <set>

namespace gpumeter::cost {
namespace {

using attribution::UnitRecord;
using Records = std::vector<const UnitRecord*>;
using NodeHours = std::map<std::string, std::map<int64_t, Records>>;  // node → hour → records

NodeHours IndexByNode(const std::map<int64_t, std::vector<UnitRecord>>& hourly) {
  NodeHours out;
  for (const auto& [hour, records] : hourly)
    for (const auto& r : records) out[r.unit.node][hour].push_back(&r);
  return out;
}

int64_t HourOf(int64_t t) { return t - ((t % 3600) + 3600) % 3600; }

void AddOwner(attribution::OwnerAmounts& to, const attribution::OwnerAmounts& o, double part) {
  to.memory_byte_seconds += part * o.memory_byte_seconds;
  to.compute_seconds += part * o.compute_seconds;
  to.energy_joules += part * o.energy_joules;
  to.requested_share_seconds += part * o.requested_share_seconds;
  to.compute_unknown_seconds += part * o.compute_unknown_seconds;
  to.compute_bound_seconds += part * o.compute_bound_seconds;
  to.memory_busy_seconds += part * o.memory_busy_seconds;
  to.memory_busy_unknown_seconds += part * o.memory_busy_unknown_seconds;
  to.memory_busy_bound_seconds += part * o.memory_busy_bound_seconds;
  to.energy_bound_joules += part * o.energy_bound_joules;
}

// One record per unit for the hours of [start, end) the agent recorded on the node.
std::vector<UnitRecord> SumPeriod(const std::map<int64_t, Records>* hours, int64_t start,
                                  int64_t end) {
  if (!hours) return {};
  std::map<attribution::UnitKey,
           std::pair<UnitRecord, std::map<domain::Owner, attribution::OwnerAmounts>>>
      units;
  for (auto it = hours->lower_bound(HourOf(start)); it != hours->end() && it->first < end; ++it) {
    // A period that does not start or end on the hour takes the part of an hour it covers, as if
    // the hour's use were even (the store keeps hours; bills are hourly or daily in practice).
    const double part =
        static_cast<double>(std::min(it->first + 3600, end) - std::max(it->first, start)) / 3600;
    for (const UnitRecord* r : it->second) {
      auto& [sum, owners] = units[r->unit];
      sum.unit = r->unit;
      sum.seconds += part * r->seconds;
      sum.memory_capacity_byte_seconds += part * r->memory_capacity_byte_seconds;
      sum.energy_joules += part * r->energy_joules;
      sum.energy_unknown_seconds += part * r->energy_unknown_seconds;
      for (const auto& o : r->owners) {
        auto& to = owners[o.owner];
        to.owner = o.owner;
        AddOwner(to, o, part);
      }
    }
  }
  std::vector<UnitRecord> out;
  for (auto& [key, entry] : units) {
    for (auto& [owner, amounts] : entry.second) entry.first.owners.push_back(amounts);
    out.push_back(std::move(entry.first));
  }
  return out;
}

double GpuSeconds(const std::vector<UnitRecord>& records) {
  double s = 0;
  for (const auto& r : records) s += r.unit.fraction * r.seconds;
  return s;
}

int DistinctGpus(const std::vector<UnitRecord>& records) {
  std::set<std::string> gpus;
  for (const auto& r : records)
    gpus.insert(r.unit.gpu_uuid.empty() ? r.unit.uuid : r.unit.gpu_uuid);
  return static_cast<int>(gpus.size());
}

// One charge's records, costed (kept alive for AssembleChargeback, which borrows them).
struct Period {
  std::deque<UnitRecord> records;
  std::vector<CostedRecord> costed;
};

// The chargeback summed over charges as they are allocated, so that memory holds the groups and
// units, not every unit-period of a month: per unit, its rows summed by owner.
struct Sums {
  std::map<std::vector<GroupValue>, GroupTotals> groups;
  GroupTotals total;
  std::map<attribution::UnitKey, std::pair<UnitCost, std::map<domain::Owner, CostRow>>> units;
};

// What is built while the charges are allocated.
struct Work {
  std::map<std::string, BillReconciliation::Node> nodes;
  Sums sums;
};

void AddTotals(GroupTotals& to, const GroupTotals& g) {
  to.gpu_hours_held += g.gpu_hours_held;
  to.compute_hours += g.compute_hours;
  to.compute_unknown_hours += g.compute_unknown_hours;
  to.compute_bound_hours += g.compute_bound_hours;
  to.memory_busy_hours += g.memory_busy_hours;
  to.memory_busy_unknown_hours += g.memory_busy_unknown_hours;
  to.memory_busy_bound_hours += g.memory_busy_bound_hours;
  to.memory_gib_hours += g.memory_gib_hours;
  to.energy_kwh += g.energy_kwh;
  to.energy_bound_kwh += g.energy_bound_kwh;
  to.cost += g.cost;
  to.idle_cost += g.idle_cost;
}

// One charge's chargeback into the sums and the reconciliation's buckets.
void Merge(const Chargeback& part, Sums& sums, BillReconciliation& rec) {
  for (const auto& g : part.groups) {
    auto& to = sums.groups[g.key];
    to.key = g.key;
    AddTotals(to, g);
  }
  AddTotals(sums.total, part.total);
  for (const auto& u : part.units) {
    auto& [m, rows] = sums.units[u.unit];
    m.unit = u.unit;
    m.hours += u.hours;
    m.cost += u.cost;
    for (const auto& r : u.rows) {
      auto& row = rows[r.owner];
      row.owner = r.owner;
      row.cost += r.cost;
      row.idle_cost += r.idle_cost;
      switch (r.owner.kind) {
        case domain::OwnerKind::kContainer:
          rec.containers += r.cost;
          break;
        case domain::OwnerKind::kIdle:
          rec.idle += r.cost;
          break;
        case domain::OwnerKind::kSystem:
          rec.system += r.cost;
          break;
        case domain::OwnerKind::kUnattributed:
          rec.unattributed += r.cost;
          break;
      }
    }
  }
}

// The sums as one chargeback: groups by cost, units with the price per GPU-hour they came to.
Chargeback Finish(Sums sums, const Policy& policy, const std::vector<std::string>& dims,
                  const std::string& currency) {
  Chargeback out;
  out.dimensions = dims;
  out.policy = policy.Name();
  out.currency = currency;
  out.total = sums.total;
  for (auto& [key, g] : sums.groups) out.groups.push_back(std::move(g));
  std::stable_sort(out.groups.begin(), out.groups.end(),
                   [](const GroupTotals& a, const GroupTotals& b) { return a.cost > b.cost; });
  for (auto& [key, entry] : sums.units) {
    auto& [u, rows] = entry;
    PriceQuote q;
    const double gpu_hours = u.hours * u.unit.fraction;
    q.per_gpu_hour = q.list_per_gpu_hour = gpu_hours > 0 ? u.cost / gpu_hours : 0;
    q.source = "bill";
    u.price = q;
    for (auto& [owner, row] : rows) u.rows.push_back(row);
    out.units.push_back(std::move(u));
  }
  return out;
}

// One node's part `cost` of a charge over [start, end): GPU part over its units, the rest apart.
void AllocateNodePart(const std::string& name, const NodeCostSplit& split, double cost,
                      std::vector<UnitRecord> records, int64_t start, int64_t end,
                      BillReconciliation& rec, Work& work, Period& period) {
  auto& node = work.nodes[name];
  node.name = name;
  node.split = split;
  ++node.periods;
  node.effective += cost;
  const double gpu_part = cost * split.gpu_share;
  node.non_gpu += cost - gpu_part;
  rec.non_gpu += cost - gpu_part;
  const double used = GpuSeconds(records);
  const int gpus = split.gpus.value_or(DistinctGpus(records));
  // An agent's seconds may overrun the period by a clock's jitter: never more than all of it.
  const double capacity =
      std::max(used, static_cast<double>(gpus) * static_cast<double>(end - start));
  if (used <= 0 || capacity <= 0) {
    ++node.periods_unseen;
    node.no_agent += gpu_part;
    rec.no_agent += gpu_part;
    return;
  }
  const double unseen = gpu_part * (1 - used / capacity);
  node.no_agent += unseen;
  rec.no_agent += unseen;
  for (auto& r : records) {
    UnitCost uc;
    uc.unit = r.unit;
    uc.hours = r.seconds / 3600;
    uc.cost = gpu_part * r.unit.fraction * r.seconds / capacity;
    PriceQuote q;
    q.per_gpu_hour = q.list_per_gpu_hour = gpu_part * 3600 / capacity;
    q.source = "bill";
    uc.price = q;
    period.records.push_back(std::move(r));
    period.costed.push_back({&period.records.back(), std::move(uc)});
  }
}

// The share of a charge each of its nodes takes. A line of one node is all its own. A scale
// set's line (Azure bills the set, not its VMs) is shared per GPU by the set's nodes that the
// agent knew in the period (their recorded span overlaps it), each as if it ran the whole period:
// hours its agent did not see become that node's "no agent" time, visible, rather than a cost
// moved silently onto the nodes it did see. With no node known in the period, all share alike.
std::vector<double> Shares(const NodeCharge& charge, const std::vector<BillNode>& nodes,
                           const std::vector<NodeCostSplit>& splits,
                           const std::vector<std::vector<UnitRecord>>& records) {
  const size_t k = charge.nodes.size();
  if (k == 1) return {1.0};
  std::vector<double> gpus(k), known(k);
  double all = 0, known_all = 0;
  for (size_t i = 0; i < k; ++i) {
    const size_t n = charge.nodes[i];
    gpus[i] = std::max(1, splits[n].gpus.value_or(DistinctGpus(records[i])));
    const auto& b = nodes[n];
    const bool span_unknown = b.first_seen_unix_s == 0 && b.last_seen_unix_s == 0;
    known[i] =
        span_unknown || (b.first_seen_unix_s < charge.end && b.last_seen_unix_s >= charge.start)
            ? gpus[i]
            : 0;
    all += gpus[i];
    known_all += known[i];
  }
  std::vector<double> out(k);
  for (size_t i = 0; i < k; ++i) out[i] = known_all > 0 ? known[i] / known_all : gpus[i] / all;
  return out;
}

// Per node, the spans [first hour, end) its charges cover: as spans, not hours, so that memory
// follows the charges, not how long they are.
using Spans = std::vector<std::pair<int64_t, int64_t>>;
using BilledSpans = std::map<std::string, Spans>;

// Sorted, and overlapping or touching spans joined.
void MergeSpans(Spans& spans) {
  std::sort(spans.begin(), spans.end());
  Spans out;
  for (const auto& s : spans) {
    if (!out.empty() && s.first <= out.back().second)
      out.back().second = std::max(out.back().second, s.second);
    else
      out.push_back(s);
  }
  spans = std::move(out);
}

bool Covers(const Spans& merged, int64_t hour) {
  auto it = std::upper_bound(merged.begin(), merged.end(),
                             std::pair{hour, std::numeric_limits<int64_t>::max()});
  return it != merged.begin() && hour < std::prev(it)->second;
}

// What the agent saw in [from, to) that no line billed: whole nodes, and hours of billed ones.
void ListUnbilled(const NodeHours& index, BilledSpans& billed_spans, int64_t from, int64_t to,
                  BillReconciliation& rec, Work& work) {
  for (auto& [name, spans] : billed_spans) MergeSpans(spans);
  for (const auto& [name, hours] : index) {
    const auto billed = billed_spans.find(name);
    double gpu_hours = 0;
    int64_t unbilled = 0;
    for (const auto& [hour, records] : hours) {
      if (hour < from || hour >= to) continue;  // the window's hours: those starting in it
      if (billed != billed_spans.end() && Covers(billed->second, hour)) continue;
      ++unbilled;
      for (const auto* r : records) gpu_hours += r->unit.fraction * r->seconds / 3600;
    }
    if (billed == billed_spans.end()) {
      if (unbilled > 0) rec.nodes_without_lines.emplace_back(name, gpu_hours);
    } else if (auto it = work.nodes.find(name); it != work.nodes.end()) {
      it->second.hours_seen_unbilled = unbilled;
    }
  }
}

}  // namespace

BilledChargeback AllocateBill(const BillLedger& ledger,
                              const std::map<int64_t, std::vector<UnitRecord>>& hourly,
                              const std::vector<NodeCostSplit>& splits, const Labels& labels,
                              const Policy& policy, const std::vector<std::string>& dims,
                              BillAmount which) {
  BilledChargeback out;
  auto& rec = out.reconciliation;
  rec.currency = ledger.currency;
  rec.node_lines = ledger.nodes;
  const NodeHours index = IndexByNode(hourly);
  auto hours_of = [&](const std::string& name) -> const std::map<int64_t, Records>* {
    const auto it = index.find(name);
    return it == index.end() ? nullptr : &it->second;
  };
  const auto& nodes = ledger.matcher().nodes();
  Work work;
  BilledSpans billed_spans;
  for (const NodeCharge* c : ledger.NodeCharges()) {
    const NodeCharge& charge = *c;
    const double amount = which == BillAmount::kBilled ? charge.amounts.billed
                          : which == BillAmount::kList ? charge.amounts.list
                                                       : charge.amounts.effective;
    Period period;
    // Each node's records in the period, and the share of a scale set's line it takes.
    std::vector<std::vector<UnitRecord>> records;
    for (const size_t n : charge.nodes) {
      records.push_back(SumPeriod(hours_of(nodes[n].name), charge.start, charge.end));
      billed_spans[nodes[n].name].emplace_back(HourOf(charge.start), charge.end);
    }
    std::vector<double> weights = Shares(charge, nodes, splits, records);
    // Rows of one node name (a VM recreated under it, a label that changed) share its usage:
    // the name takes their shares together, once.
    std::map<std::string, size_t> first_of_name;
    for (size_t i = 0; i < charge.nodes.size(); ++i) {
      const auto [it, fresh] = first_of_name.try_emplace(nodes[charge.nodes[i]].name, i);
      if (!fresh) weights[it->second] += weights[i], weights[i] = 0;
    }
    for (size_t i = 0; i < charge.nodes.size(); ++i) {
      if (weights[i] <= 0) continue;
      const size_t n = charge.nodes[i];
      AllocateNodePart(nodes[n].name, splits[n], amount * weights[i], std::move(records[i]),
                       charge.start, charge.end, rec, work, period);
    }
    Merge(AssembleChargeback(period.costed, labels, policy, dims, ledger.currency), work.sums, rec);
  }
  out.chargeback = Finish(std::move(work.sums), policy, dims, ledger.currency);
  ListUnbilled(index, billed_spans, ledger.from(), ledger.to(), rec, work);
  for (auto& [name, node] : work.nodes) rec.nodes.push_back(std::move(node));
  return out;
}

}  // namespace gpumeter::cost
