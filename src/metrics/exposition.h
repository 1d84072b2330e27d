// Builds the /metrics families from the latest NodeState and the sampler's health. Pure: no I/O
// and no driver calls; series of processes that are gone disappear by construction. Unknown
// values (NVML did not give them) produce no series rather than a 0. Every series goes through
// the catalogue (catalogue.h). Thread-safe (reads immutable values only).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>

#include "node/node_state.h"
#include "sampler/sampler.h"

namespace gpumeter::metrics {

struct ExpositionOptions {
  // Pod labels copied onto every owner series as label_<key> (non [a-zA-Z0-9_] characters become
  // '_'), e.g. "team" -> label_team, so usage can be grouped by team in PromQL.
  std::vector<std::string> pod_label_keys;
  // Most container series per owner family in one scrape; the rest are left out and counted in
  // gpumeter_series_dropped (idle, system and unattributed rows are always kept).
  size_t max_series = 20000;
};

// The Prometheus-safe name for a pod label key: "app.kubernetes.io/team" -> "label_app_kubernetes_io_team".
std::string PodLabelName(const std::string& key);

std::vector<prometheus::MetricFamily> BuildFamilies(const sampler::SamplerHealth& health, const node::NodeState& state,
                                                    const ExpositionOptions& options,
                                                    std::chrono::steady_clock::time_point now);

// Text exposition format 0.0.4 (locale-independent: prometheus-cpp writes with the C locale).
std::string RenderText(const std::vector<prometheus::MetricFamily>& families);

}  // namespace gpumeter::metrics
