// Loads and validates scenario files (YAML; format in docs/scenario.md).
// Errors name the file, the path inside it (e.g. "gpus[1].memory_mib"), the line, and what is
// wrong. A scenario that fails validation is never returned: callers refuse to start rather than
// guess. Thread-safe (no shared state).
#pragma once

#include <string>
#include <vector>

#include "common/error.h"
#include "sim/scenario/model.h"

namespace gpumeter::scenario {

// Parses YAML text; `source_name` is used in error messages.
Expected<Scenario> ParseScenario(const std::string& yaml_text, const std::string& source_name);

// Reads and parses a file.
Expected<Scenario> LoadScenarioFile(const std::string& path);

// Cross-reference checks (also run by ParseScenario): unique GPUs and PIDs, processes on units
// that exist, containers that exist, MIG layouts that fit, etc.
Expected<void> Validate(const Scenario& s);

// Resolves a bundled scenario NAME (a file NAME.yaml in one of `search_dirs`) or a FILE path.
Expected<std::string> ResolveScenarioPath(const std::string& name_or_file,
                                          const std::vector<std::string>& search_dirs);

// Names of the bundled scenarios (files *.yaml) in `dir`, sorted.
std::vector<std::string> ListScenarios(const std::string& dir);

}  // namespace gpumeter::scenario
