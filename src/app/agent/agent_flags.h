// Parsers for the agent's repeatable KEY=VALUE flags. Errors name the flag and the value.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "core/allocation/sharing.h"

namespace gpumeter::app {

// --sharing GPU-<uuid>=time-slicing:4 | mps:2 | exclusive  (replicas >= 2 for shared modes)
Expected<std::pair<std::string, k8s::SharingEvidence::Configured>> ParseSharingFlag(
    const std::string& value);
// --node-label KEY=VALUE, --idle-power MODEL_OR_UUID=WATTS (watts > 0)
Expected<std::map<std::string, std::string>> ParseKeyValues(const std::string& flag,
                                                            const std::vector<std::string>& values);
Expected<std::map<std::string, double>> ParseIdlePower(const std::vector<std::string>& values);

}  // namespace gpumeter::app
