#include "sinks/top/frame_json.h"

#include "common/json/key_case.h"

#include "core/attribution/unit_key_json.h"

#include <initializer_list>
#include <utility>

namespace gpumeter::top {
namespace {

using nlohmann::json;

json J(const Amount& a) { return a ? json(*a) : json(nullptr); }

// Reads back what J wrote: null is unknown; anything but a number is an error.
Expected<Amount> A(const json& o, const char* key) {
  const auto it = o.find(key);
  if (it == o.end() || it->is_null()) return Amount{};
  if (!it->is_number())
    return MakeError(ErrorCode::kInvalidInput, std::string("frame: ") + key + " is not a number");
  return Amount(it->get<double>());
}

// Each key's value into its field (A above); the first that is not a number is the error.
Expected<void> ReadAmounts(const json& j,
                           std::initializer_list<std::pair<const char*, Amount*>> fields) {
  for (const auto& [key, field] : fields) {
    auto a = A(j, key);
    if (!a) return tl::unexpected(a.error());
    *field = *a;
  }
  return {};
}

json OwnerJson(const OwnerNow& o) {
  return {{"kind", domain::ToString(o.owner.kind)},
          {"namespace", o.owner.ns},
          {"pod", o.owner.pod},
          {"container", o.owner.container},
          {"held_share", J(o.held_share)},
          {"compute_ratio", J(o.compute_ratio)},
          {"compute_bound_ratio", J(o.compute_bound_ratio)},
          {"compute_unknown", o.compute_unknown},
          {"memory_busy_ratio", J(o.memory_busy_ratio)},
          {"memory_busy_bound_ratio", J(o.memory_busy_bound_ratio)},
          {"memory_busy_unknown", o.memory_busy_unknown},
          {"memory_bytes", J(o.memory_bytes)},
          {"power_watts", J(o.power_watts)},
          {"power_bound_watts", J(o.power_bound_watts)},
          {"cost_per_hour", J(o.cost_per_hour)}};
}

json UnitJson(const UnitNow& u) {
  json owners = json::array();
  for (const auto& o : u.owners) owners.push_back(OwnerJson(o));
  json j = attribution::UnitKeyJson(u.key);
  j.update(json{{"label", u.label},
                {"busy_ratio", J(u.busy_ratio)},
                {"memory_used_bytes", J(u.memory_used_bytes)},
                {"memory_total_bytes", J(u.memory_total_bytes)},
                {"power_watts", J(u.power_watts)},
                {"cost_per_hour", J(u.cost_per_hour)},
                {"owners", owners}});
  return j;
}

Expected<OwnerNow> OwnerFrom(const json& j) {
  OwnerNow o;
  o.owner = {domain::OwnerKindFromString(j.value("kind", "")), j.value("namespace", ""),
             j.value("pod", ""), j.value("container", "")};
  auto read = ReadAmounts(j, {{"held_share", &o.held_share},
                              {"compute_ratio", &o.compute_ratio},
                              {"memory_bytes", &o.memory_bytes},
                              {"power_watts", &o.power_watts},
                              {"cost_per_hour", &o.cost_per_hour}});
  if (!read) return tl::unexpected(read.error());
  // Absent in frames written before bounds: they claimed none.
  if (j.contains("compute_bound_ratio"))
    if (auto r = ReadAmounts(j, {{"compute_bound_ratio", &o.compute_bound_ratio}}); !r)
      return tl::unexpected(r.error());
  if (const auto u = j.find("compute_unknown"); u != j.end()) {
    if (!u->is_boolean())
      return MakeError(ErrorCode::kInvalidInput, "frame: compute_unknown is not true or false");
    o.compute_unknown = u->get<bool>();
  }
  // Absent in frames written before memory busy time: unknown.
  if (auto r = ReadAmounts(j, {{"memory_busy_ratio", &o.memory_busy_ratio}}); !r)
    return tl::unexpected(r.error());
  if (j.contains("memory_busy_bound_ratio"))
    if (auto r = ReadAmounts(j, {{"memory_busy_bound_ratio", &o.memory_busy_bound_ratio}}); !r)
      return tl::unexpected(r.error());
  if (const auto u = j.find("memory_busy_unknown"); u != j.end()) {
    if (!u->is_boolean())
      return MakeError(ErrorCode::kInvalidInput, "frame: memory_busy_unknown is not true or false");
    o.memory_busy_unknown = u->get<bool>();
  }
  // Absent in frames written before energy bounds: they claimed none.
  if (j.contains("power_bound_watts"))
    if (auto r = ReadAmounts(j, {{"power_bound_watts", &o.power_bound_watts}}); !r)
      return tl::unexpected(r.error());
  return o;
}

Expected<UnitNow> UnitFrom(const json& j) {
  auto key = attribution::UnitKeyFromJson(j);
  if (!key) return MakeError(ErrorCode::kInvalidInput, "frame: " + key.error().message);
  UnitNow u;
  u.key = std::move(*key);
  u.label = j.value("label", "");
  auto read = ReadAmounts(j, {{"busy_ratio", &u.busy_ratio},
                              {"memory_used_bytes", &u.memory_used_bytes},
                              {"memory_total_bytes", &u.memory_total_bytes},
                              {"power_watts", &u.power_watts},
                              {"cost_per_hour", &u.cost_per_hour}});
  if (!read) return tl::unexpected(read.error());
  for (const auto& r : j.value("owners", json::array())) {
    auto o = OwnerFrom(r);
    if (!o) return tl::unexpected(o.error());
    u.owners.push_back(std::move(*o));
  }
  return u;
}

json RowsJson(const std::vector<GroupRow>& rows) {
  json out = json::array();
  for (const auto& r : rows)
    out.push_back({{"key", r.key},
                   {"held_gpus", J(r.held_gpus)},
                   {"compute_gpus", J(r.compute_gpus)},
                   {"compute_bound_gpus", J(r.compute_bound_gpus)},
                   {"compute_unknown", r.compute_unknown},
                   {"memory_bytes", J(r.memory_bytes)},
                   {"power_watts", J(r.power_watts)},
                   {"power_bound_watts", J(r.power_bound_watts)},
                   {"cost_per_hour", J(r.cost_per_hour)},
                   {"waste_gpus", J(r.waste_gpus)},
                   {"units", r.units}});
  return out;
}

}  // namespace

json FrameToJson(const FrameData& f) {
  json units = json::array();
  for (const auto& u : f.units) units.push_back(UnitJson(u));
  json findings = nullptr;
  if (f.findings) {
    findings = json::array();
    for (const auto& x : *f.findings)
      findings.push_back({{"severity", x.severity},
                          {"kind", x.kind},
                          {"node", x.node},
                          {"who", x.who},
                          {"unit", x.unit},
                          {"evidence", x.evidence},
                          {"first_seen_unix_s", x.first_seen_unix_s}});
  }
  json labels = json::array();
  for (const auto& [pod, kv] : f.labels)
    labels.push_back({{"namespace", pod.first}, {"pod", pod.second}, {"labels", kv}});
  return {{"source", f.source},     {"at_unix_s", f.at_unix_s}, {"span_seconds", f.span_seconds},
          {"currency", f.currency}, {"units", units},           {"findings", findings},
          {"pod_labels", labels}};
}

namespace {

// FrameFromJson's reading; the optional fields through json::value, which throws on a value of
// another type (caught by the caller).
Expected<FrameData> ReadFrame(const json& j) {
  if (!j.is_object() || !j.contains("units") || !j["units"].is_array())
    return MakeError(ErrorCode::kInvalidInput, "frame: expected an object with units");
  FrameData f;
  f.source = j.value("source", "");
  f.at_unix_s = j.value("at_unix_s", int64_t{0});
  f.span_seconds = j.value("span_seconds", 0.0);
  f.currency = j.value("currency", "");
  for (const auto& u : j["units"]) {
    auto unit = UnitFrom(u);
    if (!unit) return tl::unexpected(unit.error());
    f.units.push_back(std::move(*unit));
  }
  if (j.contains("findings") && j["findings"].is_array()) {
    f.findings.emplace();
    for (const auto& x : j["findings"])
      f.findings->push_back({x.value("severity", ""), x.value("kind", ""), x.value("node", ""),
                             x.value("who", ""), x.value("unit", ""), x.value("evidence", ""),
                             x.value("first_seen_unix_s", 0.0)});
  }
  for (const auto& l : j.value("pod_labels", json::array()))
    f.labels[{l.value("namespace", ""), l.value("pod", "")}] =
        l.value("labels", std::map<std::string, std::string>{});
  return f;
}

}  // namespace

Expected<FrameData> FrameFromJson(const json& j) {
  // Saved in camelCase (top's output) or snake_case (frames saved before): read as the latter.
  auto snake = json_case::ToSnakeCase(j, {"labels"});
  if (!snake) return MakeError(ErrorCode::kInvalidInput, "frame: " + snake.error().message);
  // A saved frame is a file the user names (top --source file:PATH): anything may be in it.
  try {
    return ReadFrame(*snake);
  } catch (const json::exception& e) {
    return MakeError(ErrorCode::kInvalidInput, std::string("frame: ") + e.what());
  }
}

Expected<json> FrameOutputJson(const FrameData& f, const std::string& by, SortKey sort,
                               const Filter& filter) {
  json out = FrameToJson(f);
  out["by"] = by;
  out["sort"] = ToString(sort);
  out["pods"] = RowsJson(GroupRows(f, by, sort, filter));
  out["namespaces"] = RowsJson(GroupRows(f, "namespace", sort, filter));
  return json_case::ToCamelCase(out, {"labels"});
}

}  // namespace gpumeter::top
