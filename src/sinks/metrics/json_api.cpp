#include "sinks/metrics/json_api.h"

#include "core/attribution/observe.h"
#include "core/guard/finding_json.h"
#include "sinks/metrics/readiness.h"

namespace gpumeter::metrics {
namespace {

using nlohmann::json;

json Optional(const std::optional<uint64_t>& v) { return v ? json(*v) : json(nullptr); }
json Optional(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// What the latest good sample says of a unit now: its busy fraction and memory in use. A whole
// GPU reads its device; a MIG instance its own GPM activity and memory; the "unpartitioned" unit
// of free slices runs nothing. Unknown (no sample, no reading) stays nullopt.
struct UnitReading {
  std::optional<double> busy_ratio, memory_used_bytes;
};

UnitReading ReadingOf(const node::NodeState& s, const node::UnitInfo& u) {
  UnitReading r;
  if (!s.last_good) return r;
  for (const auto& d : s.last_good->snapshot.devices) {
    if (d.uuid == u.uuid && !d.mig_enabled) {
      r.busy_ratio = attribution::BusyFraction(d);
      if (d.memory) r.memory_used_bytes = static_cast<double>(d.memory->used_bytes);
      return r;
    }
    if (d.uuid == u.uuid && u.kind == domain::UnitKind::kUnpartitioned) return {0.0, 0.0};
    for (const auto& m : d.mig_instances)
      if (m.uuid == u.uuid) {
        r.busy_ratio = m.sm_active_ratio;
        if (m.memory) r.memory_used_bytes = static_cast<double>(m.memory->used_bytes);
        return r;
      }
  }
  return r;
}

// The unit's ledger of the latest interval, when it had one in it (else null: not "now").
const attribution::UnitLedger* CurrentLedger(const node::NodeState& s, const std::string& uuid) {
  const auto t = s.unit_totals.find(uuid);
  if (t == s.unit_totals.end() || t->second.last_interval != s.intervals) return nullptr;
  for (const auto& l : s.last_interval)
    if (l.uuid == uuid && l.seconds > 0) return &l;
  return nullptr;
}

// Mean power over the latest interval: the unit's (or one owner's) joules over its seconds.
std::optional<double> UnitPower(const attribution::UnitLedger* l) {
  if (!l || !l->energy_joules) return std::nullopt;
  return *l->energy_joules / l->seconds;
}

std::optional<double> OwnerPower(const attribution::UnitLedger* l, const domain::Owner& owner) {
  if (!l || !l->energy_joules) return std::nullopt;
  for (const auto& r : l->rows)
    if (r.owner == owner) return r.energy_joules / l->seconds;
  return std::nullopt;
}

std::optional<double> OwnerPowerBound(const attribution::UnitLedger* l,
                                      const domain::Owner& owner) {
  if (!l || !l->energy_joules || l->seconds <= 0) return std::nullopt;
  for (const auto& r : l->rows)
    if (r.owner == owner) return r.energy_bound_joules / l->seconds;
  return std::nullopt;
}

}  // namespace

json UnitsJson(const node::NodeState& s) {
  json units = json::array();
  for (const auto& u : s.units) {
    json holders = json::array();
    for (const auto& h : u.holders)
      holders.push_back({{"namespace", h.ns},
                         {"pod", h.pod},
                         {"container", h.container},
                         {"share", h.share},
                         {"replicas_held", h.replicas_held}});
    units.push_back({{"uuid", u.uuid},
                     {"gpu_uuid", u.gpu_uuid},
                     {"gpu_index", u.gpu_index},
                     {"model", u.model},
                     {"mig_profile", u.mig_profile.empty() ? json(nullptr) : json(u.mig_profile)},
                     {"sharing_mode", domain::ToString(u.mode)},
                     {"replicas", u.replicas},
                     {"evidence", u.evidence},
                     {"memory_total_bytes", Optional(u.memory_total_bytes)},
                     {"holders", holders}});
    // The latest interval's readings, for live views (`gpumeter top`); null when unknown.
    const auto reading = ReadingOf(s, u);
    units.back()["busy_ratio"] = Optional(reading.busy_ratio);
    units.back()["memory_used_bytes"] = Optional(reading.memory_used_bytes);
    const auto* ledger = CurrentLedger(s, u.uuid);
    units.back()["power_watts"] = Optional(UnitPower(ledger));
    units.back()["interval_seconds"] = ledger ? json(ledger->seconds) : json(nullptr);
    units.back()["gpu_fraction"] = u.gpu_fraction;
  }
  return {{"node", s.node}, {"units", units}, {"allocation_problems", s.allocation_problems}};
}

json FindingsJson(const node::NodeState& s) {
  json findings = json::array();
  for (const auto& f : s.findings) findings.push_back(guard::ToJson(f));
  json opened = json::array();
  for (const auto& [key, n] : s.findings_opened)
    opened.push_back({{"kind", guard::ToString(key.first)},
                      {"severity", guard::ToString(key.second)},
                      {"count", n}});
  // Before the first good pass nothing has been checked: say so rather than show a clean node.
  return {{"node", s.node},
          {"checked", s.last_good != nullptr},
          {"findings", findings},
          {"opened", opened}};
}

json LedgerJson(const node::NodeState& s) {
  json units = json::array();
  for (const auto& [uuid, t] : s.unit_totals) {
    json owners = json::array();
    const auto* current_ledger = CurrentLedger(s, uuid);
    for (const auto& [key, o] : s.totals) {
      if (key.first != uuid) continue;
      json row = {
          {"kind", domain::ToString(key.second.kind)},
          {"memory_byte_seconds", o.memory_byte_seconds},
          {"compute_seconds", o.compute_seconds},
          {"compute_unknown_seconds", o.compute_unknown_seconds},
          {"compute_bound_seconds", o.compute_bound_seconds},
          {"memory_busy_seconds", o.memory_busy_seconds},
          {"memory_busy_unknown_seconds", o.memory_busy_unknown_seconds},
          {"memory_busy_bound_seconds", o.memory_busy_bound_seconds},
          {"energy_joules",
           t.energy_unknown_seconds < t.seconds ? json(o.energy_joules) : json(nullptr)},
          {"energy_bound_joules",
           t.energy_unknown_seconds < t.seconds ? json(o.energy_bound_joules) : json(nullptr)},
          {"requested_share_seconds", o.requested_share_seconds},
          {"rules",
           {{"memory", o.memory_rule}, {"compute", o.compute_rule}, {"energy", o.energy_rule}}}};
      if (key.second.kind == domain::OwnerKind::kContainer) {
        row["namespace"] = key.second.ns, row["pod"] = key.second.pod,
        row["container"] = key.second.container;
      }
      // The last interval's means describe "now" only for rows of the latest interval.
      const bool current = o.last_interval == s.intervals;
      row["memory_bytes"] = current ? json(o.last_memory_bytes) : json(nullptr);
      row["compute_ratio"] = current ? json(o.last_compute_ratio) : json(nullptr);
      // Its ± where the ratio is an estimated split, and whether it is a lower bound only.
      row["compute_bound_ratio"] = current ? json(o.last_compute_bound_ratio) : json(nullptr);
      row["compute_unknown"] = current && o.last_compute_unknown;
      row["memory_busy_ratio"] = current ? json(o.last_memory_busy_ratio) : json(nullptr);
      row["memory_busy_bound_ratio"] =
          current ? json(o.last_memory_busy_bound_ratio) : json(nullptr);
      row["memory_busy_unknown"] = current && o.last_memory_busy_unknown;
      row["power_watts"] = current ? Optional(OwnerPower(current_ledger, key.second)) : nullptr;
      // Its ± where the energy split was estimated (0: measured).
      row["power_bound_watts"] =
          current ? Optional(OwnerPowerBound(current_ledger, key.second)) : nullptr;
      owners.push_back(std::move(row));
    }
    units.push_back({{"uuid", uuid},
                     {"seconds", t.seconds},
                     {"memory_capacity_byte_seconds", t.memory_capacity_byte_seconds},
                     {"energy_joules",
                      t.energy_unknown_seconds < t.seconds ? json(t.energy_joules) : json(nullptr)},
                     {"energy_unknown_seconds", t.energy_unknown_seconds},
                     // The kind of memory busy time its rows' memory_busy figures are, last.
                     {"memory_signal", t.memory_signal == domain::MemorySignal::kNone
                                           ? json(nullptr)
                                           : json(domain::ToString(t.memory_signal))},
                     {"owners", owners}});
  }
  // The pods' labels, for grouping by label (`gpumeter top --by label:team`).
  json labels = json::array();
  for (const auto& [pod, kv] : s.pod_labels)
    labels.push_back({{"namespace", pod.first}, {"pod", pod.second}, {"labels", kv}});
  return {{"node", s.node}, {"intervals", s.intervals}, {"units", units}, {"pod_labels", labels}};
}

json ProcessesJson(const node::NodeState& s) {
  json procs = json::array();
  if (!s.last_good) return {{"node", s.node}, {"processes", procs}};
  auto add = [&](const gpu::GpuProcess& p, const std::string& unit) {
    json owner = {{"kind", "unattributed"}, {"how", "not resolved"}};
    if (const auto it = s.owners.find(p.pid); it != s.owners.end()) {
      owner = {{"kind", domain::ToString(it->second.kind)}, {"how", it->second.how}};
      if (it->second.kind == domain::OwnerKind::kContainer)
        owner["namespace"] = it->second.ns, owner["pod"] = it->second.pod,
        owner["container"] = it->second.container;
    }
    procs.push_back({{"pid", p.pid},
                     {"unit", unit},
                     {"type", p.type == gpu::ProcessType::kMps ? "mps" : "compute"},
                     {"memory_bytes", Optional(p.used_memory_bytes)},
                     {"owner", owner}});
  };
  for (const auto& d : s.last_good->snapshot.devices) {
    if (!d.mig_enabled)
      for (const auto& p : d.processes) add(p, d.uuid);
    for (const auto& m : d.mig_instances)
      for (const auto& p : m.processes) add(p, m.uuid);
  }
  return {{"node", s.node}, {"processes", procs}};
}

json SourcesJson(const gpu::SamplerHealth& h, const node::NodeState& s,
                 std::chrono::milliseconds stale_after, std::chrono::steady_clock::time_point now) {
  auto age = [&](std::optional<std::chrono::steady_clock::time_point> t) {
    return t ? json(std::chrono::duration<double>(now - *t).count()) : json(nullptr);
  };
  json out = json::array();
  std::vector<domain::SourceStatus> all{NvmlStatus(h, stale_after, now)};
  all.insert(all.end(), s.sources.begin(), s.sources.end());
  for (const auto& src : all)
    out.push_back({{"name", src.name},
                   {"configured", src.configured},
                   {"up", src.configured && src.up},
                   {"attempts", src.attempts},
                   {"failures", src.failures},
                   {"last_error", src.last_error},
                   {"last_success_age_seconds", age(src.last_success)},
                   {"detail", src.detail}});
  return {{"node", s.node}, {"sources", out}};
}

}  // namespace gpumeter::metrics
