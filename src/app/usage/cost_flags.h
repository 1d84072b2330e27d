// The flags that say how usage is priced and grouped (report, top), parsed once, as cli/ reads
// them: --policy and --idle into a cost::Policy, --by into group-by dimensions. Errors name the
// flag and the text. Pure.
#pragma once

#include <string>
#include <vector>

#include "common/error.h"
#include "core/cost/allocate.h"

namespace gpumeter::app {

// --policy: memory | compute | request | blend:ALPHA, into policy.basis (and policy.alpha).
Expected<void> SetPolicyFlag(const std::string& text, cost::Policy& policy);
// --idle: share | owner | separate, into policy.idle.
Expected<void> SetIdleFlag(const std::string& text, cost::Policy& policy);
// --by: "namespace,label:team" into its dimensions.
Expected<std::vector<std::string>> ParseByFlag(const std::string& text);

}  // namespace gpumeter::app
