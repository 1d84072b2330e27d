// How a unit (a GPU or a MIG instance) is shared, which decides the attribution rules that apply
// to it (docs/sharing.md). One enum for the node's evidence, the attribution core and scenarios.
#pragma once

#include <optional>
#include <string_view>

namespace gpumeter::domain {

enum class SharingMode { kExclusive, kTimeSlicing, kMps, kMig };

// "exclusive", "time-slicing", "mps" or "mig": the mode label and the API's mode.
const char* ToString(SharingMode mode);
// The inverse of ToString, exactly (case and spelling); nullopt for any other text. Every reader
// of a mode's name (flags, scenarios, node labels, stored units) parses it here.
std::optional<SharingMode> ParseSharingMode(std::string_view text);
// ToString of a mode a reader may not have been told (a unit known only by its counters):
// `unknown` when it was not.
const char* ToStringOr(std::optional<SharingMode> mode, const char* unknown);

}  // namespace gpumeter::domain
