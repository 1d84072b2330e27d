// Findings as JSON: what /api/v1/findings serves and `gpumeter audit --agent` reads back, in one
// place so the two cannot drift. Unknown values are null. Pure.
#pragma once

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "core/guard/findings.h"

namespace gpumeter::guard {

nlohmann::json ToJson(const Finding& f);
// The inverse; errors name the field that is missing or of the wrong type.
Expected<Finding> FindingFromJson(const nlohmann::json& j);

}  // namespace gpumeter::guard
