#include "sources/history/agent_source.h"

#include <cmath>
#include <limits>
#include <map>

#include "core/guard/finding_json.h"

namespace gpumeter::history {

using top::Amount;
using top::FindingNow;
using top::FrameData;
using top::OwnerNow;
using top::UnitNow;
namespace {

using nlohmann::json;

// More than any node has: a reply beyond these is refused as not an agent's.
constexpr size_t kMaxUnits = 1024, kMaxOwners = 4096, kMaxFindings = 10000;
constexpr double kInf = std::numeric_limits<double>::infinity();

Error Bad(const std::string& where, const std::string& what) {
  return Error{ErrorCode::kInvalidInput, "agent reply " + where + ": " + what};
}

// An optional number: absent or null is unknown; otherwise finite and within [lo, hi].
Expected<Amount> Number(const json& o, const char* key, double lo, double hi,
                        const std::string& where) {
  const auto it = o.find(key);
  if (it == o.end() || it->is_null()) return Amount{};
  if (!it->is_number()) return tl::unexpected(Bad(where, std::string(key) + " is not a number"));
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < lo || v > hi)
    return tl::unexpected(Bad(where, std::string(key) + " = " + it->dump() + " is out of range"));
  return Amount(v);
}

Expected<std::string> Text(const json& o, const char* key, const std::string& where,
                           bool nullable = false) {
  const auto it = o.find(key);
  if (it != o.end() && it->is_string()) return it->get<std::string>();
  if (nullable && (it == o.end() || it->is_null())) return std::string();
  return tl::unexpected(Bad(where, std::string(key) + " is not a string"));
}

Expected<const json*> Array(const json& o, const char* key, size_t cap, const std::string& where) {
  const auto it = o.find(key);
  if (it == o.end() || !it->is_array())
    return tl::unexpected(Bad(where, std::string(key) + " is not an array"));
  if (it->size() > cap)
    return tl::unexpected(Bad(where, std::string(key) + " has more than " + std::to_string(cap)));
  return &*it;
}

// Ratios may overshoot 1 by rounding; a little, not more.
constexpr double kRatioMax = 1.000001;

// The unit's identity, holders and latest readings from /api/v1/units.
Expected<UnitNow> ParseUnit(const json& j, const std::string& node) {
  const std::string where = "/api/v1/units";
  if (!j.is_object()) return tl::unexpected(Bad(where, "a unit is not an object"));
  UnitNow u;
  auto uuid = Text(j, "uuid", where), gpu = Text(j, "gpu_uuid", where),
       model = Text(j, "model", where), mig = Text(j, "mig_profile", where, true),
       mode = Text(j, "sharing_mode", where);
  for (const auto* t : {&uuid, &gpu, &model, &mig, &mode})
    if (!*t) return tl::unexpected(t->error());
  const std::string at = where + " unit " + *uuid;
  auto index = Number(j, "gpu_index", 0, 1e6, at), fraction = Number(j, "gpu_fraction", 0, 1, at);
  auto busy = Number(j, "busy_ratio", 0, kRatioMax, at),
       used = Number(j, "memory_used_bytes", 0, 1e18, at),
       total = Number(j, "memory_total_bytes", 0, 1e18, at),
       power = Number(j, "power_watts", 0, 1e6, at);
  for (const auto* n : {&index, &fraction, &busy, &used, &total, &power})
    if (!*n) return tl::unexpected(n->error());
  const auto parsed_mode = domain::ParseSharingMode(*mode);
  if (!parsed_mode)
    return tl::unexpected(
        Bad(at, "sharing_mode \"" + *mode + "\" is not exclusive, time-slicing, mps or mig"));
  u.key = {node, *uuid, *gpu, *model, *mig, parsed_mode, fraction->value_or(1.0)};
  u.label = "GPU" + (*index ? std::to_string(static_cast<int64_t>(**index)) : std::string("?")) +
            (mig->empty() ? "" : " " + *mig);
  u.busy_ratio = *busy, u.memory_used_bytes = *used, u.memory_total_bytes = *total;
  u.power_watts = *power;
  auto holders = Array(j, "holders", kMaxOwners, at);
  if (!holders) return tl::unexpected(holders.error());
  for (const auto& h : **holders) {
    if (!h.is_object()) return tl::unexpected(Bad(at, "a holder is not an object"));
    auto ns = Text(h, "namespace", at), pod = Text(h, "pod", at), c = Text(h, "container", at);
    auto share = Number(h, "share", 0, kRatioMax, at);
    if (!ns || !pod || !c || !share || !*share)
      return tl::unexpected(Bad(at, "a holder lacks namespace, pod, container or share"));
    // No row in the ledger's latest interval means no use in it (the rows add up to the unit).
    u.owners.push_back({{domain::OwnerKind::kContainer, *ns, *pod, *c}, *share, 0.0, 0.0, 0.0, {}});
    u.owners.back().memory_busy_ratio = 0.0;  // nor any memory busy time
  }
  return u;
}

// One owner row of /api/v1/ledger; nullopt when it had no row in the latest interval.
Expected<std::optional<OwnerNow>> ParseOwner(const json& r, const std::string& at) {
  if (!r.is_object()) return tl::unexpected(Bad(at, "an owner is not an object"));
  auto kind = Text(r, "kind", at);
  if (!kind) return tl::unexpected(kind.error());
  OwnerNow o;
  o.owner.kind = domain::OwnerKindFromString(*kind);
  if (o.owner.kind == domain::OwnerKind::kContainer) {
    auto ns = Text(r, "namespace", at), pod = Text(r, "pod", at), c = Text(r, "container", at);
    if (!ns || !pod || !c) return tl::unexpected(Bad(at, "a container row lacks its names"));
    o.owner.ns = *ns, o.owner.pod = *pod, o.owner.container = *c;
  }
  auto memory = Number(r, "memory_bytes", 0, 1e18, at),
       compute = Number(r, "compute_ratio", 0, kRatioMax, at),
       power = Number(r, "power_watts", 0, 1e6, at),
       bound = Number(r, "compute_bound_ratio", 0, kRatioMax, at),
       traffic = Number(r, "memory_busy_ratio", 0, kRatioMax, at),
       traffic_bound = Number(r, "memory_busy_bound_ratio", 0, kRatioMax, at),
       power_bound = Number(r, "power_bound_watts", 0, 1e6, at);
  for (const auto* n : {&memory, &compute, &power, &bound, &traffic, &traffic_bound, &power_bound})
    if (!*n) return tl::unexpected(n->error());
  if (!*memory && !*compute) return std::optional<OwnerNow>();  // not in the latest interval
  o.memory_bytes = *memory, o.compute_ratio = *compute, o.power_watts = *power;
  // Agents before bounds send none: their estimates claimed no ±.
  o.compute_bound_ratio = bound->value_or(0.0);
  // Agents before memory busy time send none: unknown, not none.
  o.memory_busy_ratio = *traffic;
  o.memory_busy_bound_ratio = traffic_bound->value_or(0.0);
  // Agents before energy bounds send none: their energy claimed no ±.
  o.power_bound_watts = power_bound->value_or(0.0);
  if (const auto u = r.find("memory_busy_unknown"); u != r.end() && !u->is_null()) {
    if (!u->is_boolean())
      return tl::unexpected(Bad(at, "memory_busy_unknown is not true or false"));
    o.memory_busy_unknown = u->get<bool>();
  }
  if (const auto u = r.find("compute_unknown"); u != r.end() && !u->is_null()) {
    if (!u->is_boolean()) return tl::unexpected(Bad(at, "compute_unknown is not true or false"));
    o.compute_unknown = u->get<bool>();
  }
  o.held_share = 0.0;  // set from the unit's holders
  return std::optional<OwnerNow>(o);
}

// One unit of /api/v1/ledger, checked.
Expected<AgentLedgerUnit> ParseLedgerUnit(const json& l, const std::string& where) {
  if (!l.is_object()) return tl::unexpected(Bad(where, "a unit is not an object"));
  auto uuid = Text(l, "uuid", where);
  if (!uuid) return tl::unexpected(uuid.error());
  auto seconds = Number(l, "seconds", 0, kInf, where),
       capacity = Number(l, "memory_capacity_byte_seconds", 0, kInf, where);
  if (!seconds || !capacity) return tl::unexpected(!seconds ? seconds.error() : capacity.error());
  AgentLedgerUnit out{*uuid, *seconds, *capacity, {}};
  const std::string at = where + " unit " + *uuid;
  auto owners = Array(l, "owners", kMaxOwners, at);
  if (!owners) return tl::unexpected(owners.error());
  for (const auto& r : **owners) {
    auto o = ParseOwner(r, at);
    if (!o) return tl::unexpected(o.error());
    if (*o) out.owners.push_back(std::move(**o));
  }
  return out;
}

// The ledger's latest rows onto the units: holders keep their share, others hold none.
void AddLedger(const std::vector<AgentLedgerUnit>& ledger, std::vector<UnitNow>& units) {
  std::map<std::string, UnitNow*> by_uuid;
  for (auto& u : units) by_uuid[u.key.uuid] = &u;
  for (const auto& l : ledger) {
    const auto it = by_uuid.find(l.uuid);
    if (it == by_uuid.end()) continue;  // a unit gone from the node: not "now"
    // A unit whose size NVML does not give (the slices in no MIG instance) has the capacity
    // its ledger accounts: its mean since the agent started, as a unit's size does not change.
    if (!it->second->memory_total_bytes && l.seconds && *l.seconds > 0 &&
        l.memory_capacity_byte_seconds)
      it->second->memory_total_bytes = *l.memory_capacity_byte_seconds / *l.seconds;
    auto& rows = it->second->owners;
    for (const auto& o : l.owners) {
      auto held = std::find_if(rows.begin(), rows.end(),
                               [&](const OwnerNow& x) { return x.owner == o.owner; });
      if (held != rows.end()) {
        const auto share = held->held_share;
        *held = o;
        held->held_share = share;
      } else {
        rows.push_back(o);
      }
    }
  }
}

// The pods' labels from /api/v1/ledger (absent from an older agent: none known).
Expected<cost::Labels> ParseLabels(const json& ledger) {
  cost::Labels out;
  if (!ledger.contains("pod_labels")) return out;
  const std::string where = "/api/v1/ledger pod_labels";
  auto list = Array(ledger, "pod_labels", kMaxOwners * 4, "/api/v1/ledger");
  if (!list) return tl::unexpected(list.error());
  for (const auto& p : **list) {
    if (!p.is_object()) return tl::unexpected(Bad(where, "an entry is not an object"));
    auto ns = Text(p, "namespace", where), pod = Text(p, "pod", where);
    const auto kv = p.find("labels");
    if (!ns || !pod || kv == p.end() || !kv->is_object() || kv->size() > 256)
      return tl::unexpected(Bad(where, "expected {namespace, pod, labels: {…}}"));
    auto& labels = out[{*ns, *pod}];
    for (const auto& [k, v] : kv->items()) {
      if (!v.is_string()) return tl::unexpected(Bad(where, "label " + k + " is not a string"));
      labels[k] = v.get<std::string>();
    }
  }
  return out;
}

// The frame's view of the findings: who and what, as `top` shows them.
std::vector<FindingNow> FindingsNow(const std::vector<guard::Finding>& findings) {
  std::vector<FindingNow> out;
  for (const auto& f : findings) {
    const std::string who = !f.pod.empty()       ? f.ns + "/" + f.pod + "/" + f.container
                            : !f.process.empty() ? "host process " + f.process
                                                 : "-";
    out.push_back({guard::ToString(f.severity), guard::ToString(f.kind), f.node, who, f.unit_uuid,
                   f.evidence, f.first_seen});
  }
  return out;
}

}  // namespace

Expected<AgentUnits> ParseAgentUnits(const json& units) {
  const std::string where = "/api/v1/units";
  AgentUnits out;
  auto node = Text(units, "node", where);
  if (!node) return tl::unexpected(node.error());
  out.node = *node;
  auto list = Array(units, "units", kMaxUnits, where);
  if (!list) return tl::unexpected(list.error());
  for (const auto& j : **list) {
    auto u = ParseUnit(j, out.node);
    if (!u) return tl::unexpected(u.error());
    auto span = Number(j, "interval_seconds", 0, kInf, where);
    if (!span) return tl::unexpected(span.error());
    out.span_seconds = std::max(out.span_seconds, span->value_or(0));
    out.units.push_back(std::move(*u));
  }
  return out;
}

Expected<std::vector<AgentLedgerUnit>> ParseAgentLedger(const json& ledger) {
  const std::string where = "/api/v1/ledger";
  auto list = Array(ledger, "units", kMaxUnits, where);
  if (!list) return tl::unexpected(list.error());
  std::vector<AgentLedgerUnit> out;
  for (const auto& l : **list) {
    auto u = ParseLedgerUnit(l, where);
    if (!u) return tl::unexpected(u.error());
    out.push_back(std::move(*u));
  }
  return out;
}

Expected<AgentFindings> ParseAgentFindings(const json& j) {
  const std::string where = "/api/v1/findings";
  AgentFindings out;
  auto node = Text(j, "node", where);
  if (!node) return tl::unexpected(node.error());
  out.node = *node;
  const auto checked = j.find("checked");
  if (checked == j.end() || !checked->is_boolean())
    return tl::unexpected(Bad(where, "checked is not true or false"));
  out.checked = checked->get<bool>();
  auto list = Array(j, "findings", kMaxFindings, where);
  if (!list) return tl::unexpected(list.error());
  for (const auto& x : **list) {
    auto f = guard::FindingFromJson(x);
    if (!f) return tl::unexpected(Bad(where, f.error().message));
    out.findings.push_back(std::move(*f));
  }
  return out;
}

Expected<FrameData> FrameFromAgentJson(const json& units, const json& ledger, const json& findings,
                                       const std::string& source, int64_t at_unix_s) {
  FrameData f;
  f.source = source, f.at_unix_s = at_unix_s;
  auto parsed_units = ParseAgentUnits(units);
  if (!parsed_units) return tl::unexpected(parsed_units.error());
  f.span_seconds = parsed_units->span_seconds;
  f.units = std::move(parsed_units->units);
  auto rows = ParseAgentLedger(ledger);
  if (!rows) return tl::unexpected(rows.error());
  AddLedger(*rows, f.units);
  auto labels = ParseLabels(ledger);
  if (!labels) return tl::unexpected(labels.error());
  f.labels = std::move(*labels);
  auto parsed = ParseAgentFindings(findings);
  if (!parsed) return tl::unexpected(parsed.error());
  f.findings = FindingsNow(parsed->findings);
  return f;
}

Expected<FrameData> FetchAgentFrame(const AgentClient& client, int64_t at_unix_s) {
  auto units = client.GetJson("/api/v1/units");
  if (!units) return tl::unexpected(units.error());
  auto ledger = client.GetJson("/api/v1/ledger");
  if (!ledger) return tl::unexpected(ledger.error());
  auto findings = client.GetJson("/api/v1/findings");
  if (!findings) return tl::unexpected(findings.error());
  return FrameFromAgentJson(*units, *ledger, *findings, "agent " + client.url(), at_unix_s);
}

}  // namespace gpumeter::history
