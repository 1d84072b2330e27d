// The demo's refreshed table, rendered from the published NodeState: each GPU with its processes
// and their owners (namespace/pod/container, system, or unattributed with the reason), then each
// unit's sharing mode, the evidence for it, and its owners' shares since the start (which add up
// to the unit). Pure: returns text; unknown values print as "?" (never as 0).
#pragma once

#include <string>

#include "domain/sample.h"
#include "node/state/node_state.h"

namespace gpumeter::app {

std::string RenderTable(const gpu::SamplerHealth& health, const node::NodeState& state);

}  // namespace gpumeter::app
