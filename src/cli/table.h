// The demo's refreshed per-device / per-process table, rendered from a published sample.
// Pure: returns text; unknown values print as "?" (never as 0).
#pragma once

#include <string>

#include "metrics/snapshot_metrics.h"
#include "sampler/sampler.h"

namespace gpumeter::cli {

std::string RenderTable(const sampler::SamplerHealth& health, const metrics::NodeContext& ctx);

}  // namespace gpumeter::cli
