// The files a command's flags name: read whole with an error naming the flag, and the pricing and
// guardrail files parsed (their defaults when no file is named). Thread-safe (no shared state).
#pragma once

#include <string>

#include "common/error.h"
#include "core/cost/pricing.h"
#include "core/guard/findings.h"

namespace gpumeter::app {

// The whole file; the error names the flag and the path.
Expected<std::string> ReadWhole(const std::string& flag, const std::string& path);

// The secret `flag` names (a bearer token file), or "" when `path` is empty; a file others may
// read is warned about (logged), as every token flag does.
Expected<std::string> ReadTokenFlag(const std::string& flag, const std::string& path);

// The pricing file `path` names (--pricing), or the dated default table when `path` is empty.
Expected<cost::Pricing> LoadPricing(const std::string& path);
// The guardrails file `path` names (--guard-config), or the defaults when it is empty.
Expected<guard::GuardConfig> LoadGuardConfig(const std::string& path);

}  // namespace gpumeter::app
