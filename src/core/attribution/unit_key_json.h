// A unit's key (usage_record.h) as JSON, the one spelling every output uses for it: `top`'s
// frames, the report's units and what reads a saved frame back. Keys: node, uuid, gpu_uuid, model,
// mig_profile (strings), sharing_mode (a mode's name, or null when unknown) and gpu_fraction (of
// the physical GPU, in (0, 1]). Pure.
#pragma once

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "core/attribution/usage_record.h"

namespace gpumeter::attribution {

nlohmann::json UnitKeyJson(const UnitKey& key);
// The inverse, checked: `j` must be an object with every key of UnitKeyJson, the strings strings,
// sharing_mode null or a known mode and gpu_fraction a number in (0, 1]; the error names the key.
// Other keys are ignored (a unit's JSON carries its amounts beside its key).
Expected<UnitKey> UnitKeyFromJson(const nlohmann::json& j);

}  // namespace gpumeter::attribution
