#include "core/guard/finding_json.h"

namespace gpumeter::guard {
namespace {

using nlohmann::json;

json Optional(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

json ToJson(const Finding& f) {
  return {{"kind", ToString(f.kind)},
          {"severity", ToString(f.severity)},
          {"node", f.node},
          {"namespace", f.ns},
          {"pod", f.pod},
          {"container", f.container},
          {"unit", f.unit_uuid},
          {"gpu_uuid", f.gpu_uuid},
          {"process", f.process},
          {"evidence", f.evidence},
          {"first_seen", f.first_seen},
          {"last_seen", f.last_seen},
          {"waste_gpu_hours", Optional(f.waste_gpu_hours)},
          {"waste_cost", Optional(f.waste_cost)},
          {"currency", f.waste_cost ? json(f.currency) : json(nullptr)},
          {"price_source", f.waste_cost ? json(f.price_source) : json(nullptr)}};
}

Expected<Finding> FindingFromJson(const json& j) {
  if (!j.is_object()) return MakeError(ErrorCode::kInvalidInput, "a finding is not an object");
  Finding f;
  const auto text = [&](const char* key, std::string& out) -> bool {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return false;
    out = it->get<std::string>();
    return true;
  };
  std::string kind, severity;
  for (const auto& [key, out] :
       std::initializer_list<std::pair<const char*, std::string*>>{{"kind", &kind},
                                                                   {"severity", &severity},
                                                                   {"node", &f.node},
                                                                   {"namespace", &f.ns},
                                                                   {"pod", &f.pod},
                                                                   {"container", &f.container},
                                                                   {"unit", &f.unit_uuid},
                                                                   {"gpu_uuid", &f.gpu_uuid},
                                                                   {"process", &f.process},
                                                                   {"evidence", &f.evidence}})
    if (!text(key, *out))
      return MakeError(ErrorCode::kInvalidInput,
                       std::string("finding field '") + key + "' is missing or not a string");
  const auto k = KindFromString(kind);
  if (!k) return MakeError(ErrorCode::kInvalidInput, "finding kind '" + kind + "' is unknown");
  const auto s = SeverityFromString(severity);
  if (!s)
    return MakeError(ErrorCode::kInvalidInput, "finding severity '" + severity + "' is unknown");
  f.kind = *k, f.severity = *s;
  for (const auto& [key, out] : std::initializer_list<std::pair<const char*, double*>>{
           {"first_seen", &f.first_seen}, {"last_seen", &f.last_seen}}) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number())
      return MakeError(ErrorCode::kInvalidInput,
                       std::string("finding field '") + key + "' is missing or not a number");
    *out = it->get<double>();
  }
  if (const auto it = j.find("waste_gpu_hours"); it != j.end() && it->is_number())
    f.waste_gpu_hours = it->get<double>();
  if (const auto it = j.find("waste_cost"); it != j.end() && it->is_number()) {
    f.waste_cost = it->get<double>();
    text("currency", f.currency);
    text("price_source", f.price_source);
  }
  return f;
}

}  // namespace gpumeter::guard
