// Node context taken from a scenario file: who owns each PID and how each GPU is shared.
// Stands in for the Kubernetes sources (PodResources, /proc cgroups) until they land; the demo
// uses it so pod names appear. Thread-safe: reads immutable data and a clock.
#pragma once

#include <functional>
#include <memory>

#include "metrics/snapshot_metrics.h"
#include "scenario/model.h"

namespace gpumeter::cli {

// `now_s` gives the scenario time (seconds since start) used to tell reused PIDs apart.
metrics::NodeContext MakeScenarioContext(std::shared_ptr<const scenario::Scenario> s,
                                         std::function<double()> now_s);

}  // namespace gpumeter::cli
