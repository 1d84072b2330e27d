// How a unit (a GPU or a MIG instance) is shared, which decides the attribution rules that apply
// to it (docs/sharing.md). One enum for the node's evidence, the attribution core and scenarios.
#pragma once

namespace gpumeter::domain {

enum class SharingMode { kExclusive, kTimeSlicing, kMps, kMig };

// "exclusive", "time-slicing", "mps" or "mig": the mode label and the API's mode.
const char* ToString(SharingMode mode);

}  // namespace gpumeter::domain
