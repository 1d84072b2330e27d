// Node context taken from a scenario file: who owns each PID and how each GPU is shared.
// Stands in for the Kubernetes sources (PodResources, /proc cgroups) until they land; the demo
// uses it so pod names appear. Thread-safe: reads immutable data and a clock.
#pragma once

#include <functional>
#include <memory>

#include "k8s/allocation.h"
#include "k8s/sharing.h"
#include "metrics/snapshot_metrics.h"
#include "scenario/model.h"

namespace gpumeter::cli {

// `now_s` gives the scenario time (seconds since start) used to tell reused PIDs apart.
// What the kubelet would report for the scenario's pods (one ContainerAllocation per container,
// its device IDs under its GPU resource), and the evidence a node would give: each GPU's sharing
// as configuration, MIG parents from the scenario's GPUs.
std::vector<k8s::ContainerAllocation> ScenarioAllocations(const scenario::Scenario& s);
k8s::SharingEvidence ScenarioSharingEvidence(const scenario::Scenario& s);

metrics::NodeContext MakeScenarioContext(std::shared_ptr<const scenario::Scenario> s,
                                         std::function<double()> now_s);

}  // namespace gpumeter::cli
