// Builds the /metrics families from the latest published sample. Pure: no I/O, no driver calls;
// series for processes that are gone disappear by construction. Unknown values (NVML did not give
// them) produce no series rather than a 0. The full metric catalogue comes with the metrics issue;
// this is the foundation's set (docs/metrics.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>

#include "sampler/sampler.h"

namespace gpumeter::metrics {

struct ProcessOwner {
  std::string ns, pod, container;  // all empty: a host process ("system")
};

// What the node knows beyond NVML. Until the Kubernetes sources land, the demo fills it from
// the scenario. Callables must be thread-safe (called from HTTP threads).
struct NodeContext {
  std::string node;
  std::function<std::optional<ProcessOwner>(uint32_t pid)> owner;  // nullopt: unknown
  std::function<std::string(const std::string& gpu_uuid)> sharing_mode;
};

std::vector<prometheus::MetricFamily> BuildFamilies(const sampler::SamplerHealth& health,
                                                    const NodeContext& ctx,
                                                    std::chrono::steady_clock::time_point now);

// Text exposition format 0.0.4 (locale-independent: prometheus-cpp writes with the C locale).
std::string RenderText(const std::vector<prometheus::MetricFamily>& families);

}  // namespace gpumeter::metrics
