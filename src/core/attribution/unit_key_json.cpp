#include "core/attribution/unit_key_json.h"

#include <string>
#include <utility>

namespace gpumeter::attribution {
namespace {

constexpr std::pair<const char*, std::string UnitKey::*> kStrings[] = {
    {"node", &UnitKey::node},
    {"uuid", &UnitKey::uuid},
    {"gpu_uuid", &UnitKey::gpu_uuid},
    {"model", &UnitKey::model},
    {"mig_profile", &UnitKey::mig_profile}};

}  // namespace

nlohmann::json UnitKeyJson(const UnitKey& key) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, field] : kStrings) j[name] = key.*field;
  j["sharing_mode"] = key.mode ? nlohmann::json(domain::ToString(*key.mode)) : nlohmann::json();
  j["gpu_fraction"] = key.fraction;
  return j;
}

Expected<UnitKey> UnitKeyFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return MakeError(ErrorCode::kInvalidInput, "a unit is not an object");
  UnitKey key;
  for (const auto& [name, field] : kStrings) {
    const auto it = j.find(name);
    if (it == j.end() || !it->is_string())
      return MakeError(ErrorCode::kInvalidInput,
                       std::string("a unit's ") + name + ": expected a string");
    key.*field = it->get<std::string>();
  }
  // null: the writer did not know the mode; a name this version does not know is refused, not
  // read as unknown, since it would change the rules a reader applies to the unit.
  const auto m = j.find("sharing_mode");
  if (m == j.end() || !(m->is_null() || m->is_string()))
    return MakeError(ErrorCode::kInvalidInput, "a unit's sharing_mode: expected a string or null");
  if (m->is_string() && !m->get<std::string>().empty()) {  // "": unknown, as earlier writers said
    key.mode = domain::ParseSharingMode(m->get<std::string>());
    if (!key.mode)
      return MakeError(ErrorCode::kInvalidInput,
                       "a unit's sharing_mode: \"" + m->get<std::string>() +
                           "\" is not exclusive, time-slicing, mps or mig");
  }
  const auto f = j.find("gpu_fraction");
  if (f == j.end() || !f->is_number() || !(f->get<double>() > 0 && f->get<double>() <= 1))
    return MakeError(ErrorCode::kInvalidInput,
                     "a unit's gpu_fraction: expected a number in (0, 1]");
  key.fraction = f->get<double>();
  return key;
}

}  // namespace gpumeter::attribution
