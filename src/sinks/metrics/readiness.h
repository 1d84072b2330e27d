// What /readyz answers, on the main listener and on the probe listener alike: ready once a good
// sample went through the pipeline, and not ready again when no sampling pass has finished for
// `stale_after` (a source is stuck: the node's usage is no longer being recorded, and the kubelet
// should know). Pure; thread-safe.
#pragma once

#include <chrono>
#include <string>

#include "domain/sample.h"
#include "domain/source_status.h"
#include "node/state/node_state.h"

namespace gpumeter::metrics {

struct Readiness {
  bool ready = false;
  std::string why;  // one line, for the probe's body and the logs
};

// `stale_after` 0: passes are never considered late.
Readiness CheckReadiness(const gpu::SamplerHealth& health, const node::NodeState& state,
                         std::chrono::milliseconds stale_after,
                         std::chrono::steady_clock::time_point now);

// NVML as a source, in the vocabulary of every other (domain::SourceStatus): up when the latest
// pass succeeded, no call is past its deadline and (with `stale_after` > 0) a pass finished within
// it. /metrics and /api/v1/sources both show this one value, so they cannot disagree.
domain::SourceStatus NvmlStatus(const gpu::SamplerHealth& health,
                                std::chrono::milliseconds stale_after,
                                std::chrono::steady_clock::time_point now);

// Seconds since the latest sampling pass finished (or started, while none has finished); 0
// before the first pass.
double SecondsSinceLastPass(const gpu::SamplerHealth& health,
                            std::chrono::steady_clock::time_point now);

}  // namespace gpumeter::metrics
