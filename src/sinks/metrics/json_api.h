// The JSON API (docs/api.md): the current units, ledger totals, processes and sources, from the
// latest NodeState, built in /api/v1's snake_case; /api/v2 serves the same in camelCase
// (common/json/key_case.h). Unknown values are null, never 0. Pure.
#pragma once

#include <chrono>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "domain/sample.h"
#include "node/state/node_state.h"

namespace gpumeter::metrics {

// Members whose values are objects keyed by data (a pod's labels): /api/v2 keeps their keys.
inline const std::set<std::string> kDataKeyedMembers = {"labels"};

nlohmann::json UnitsJson(const node::NodeState& state);
nlohmann::json LedgerJson(const node::NodeState& state);
nlohmann::json ProcessesJson(const node::NodeState& state);
// Open guardrail findings (guard/finding_json.h) and the counts opened per kind and severity.
nlohmann::json FindingsJson(const node::NodeState& state);
// Every source, NVML first, each as domain::SourceStatus; NVML's "up" is NvmlStatus's
// (readiness.h), with the same `stale_after` as /metrics and /readyz.
nlohmann::json SourcesJson(const gpu::SamplerHealth& health, const node::NodeState& state,
                           std::chrono::milliseconds stale_after,
                           std::chrono::steady_clock::time_point now);

}  // namespace gpumeter::metrics
