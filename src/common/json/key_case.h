// JSON key spelling. gpumeter's JSON is camelCase (the Kubernetes and OpenCost convention):
// /api/v2, `top`, `report`, `rightsize`, `audit`. /api/v1 and frames saved before keep their
// snake_case; these turn one into the other at the boundary, so each document is built once.
// Pure functions, thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "common/error.h"

namespace gpumeter::json_case {

// "gpu_uuid" -> "gpuUuid", "memory_gib_hours" -> "memoryGibHours"; a key without '_' is kept.
std::string CamelCase(const std::string& key);
// "gpuUuid" -> "gpu_uuid"; a key without capitals is kept. An acronym in caps splits per letter
// ("energyKWh" -> "energy_k_wh"), and a word that starts with a digit does not come back
// ("x_2" -> "x2"): only keys of lower-case words round-trip, as all of ours are.
std::string SnakeCase(const std::string& key);

// Every object key of `doc`, at any depth, respelled; the values of the keys in `data_keys`
// (objects keyed by data, such as a pod's labels) are copied as they are. Fails, naming both keys,
// when two keys of one object would become one (nothing is silently dropped), and on nesting
// deeper than 64 levels (a hostile file must not exhaust the stack).
Expected<nlohmann::json> ToCamelCase(const nlohmann::json& doc,
                                     const std::set<std::string>& data_keys = {});
Expected<nlohmann::json> ToSnakeCase(const nlohmann::json& doc,
                                     const std::set<std::string>& data_keys = {});

}  // namespace gpumeter::json_case
