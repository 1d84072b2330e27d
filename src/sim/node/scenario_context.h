// What a scenario's node would tell the agent's sources about allocations and sharing: the
// kubelet's allocations per container, and the operator's sharing configuration per GPU. The demo
// serves the first from a fake kubelet; simulate feeds both to the allocation rules. Pure.
#pragma once

#include <functional>
#include <memory>

#include "core/allocation/sharing.h"
#include "domain/container_allocation.h"
#include "sim/scenario/model.h"

namespace gpumeter::sim {

// What the kubelet would report for the scenario's pods (one ContainerAllocation per container,
// its device IDs under its GPU resource), and the evidence a node would give: each GPU's sharing
// as configuration, MIG parents from the scenario's GPUs.
std::vector<k8s::ContainerAllocation> ScenarioAllocations(const scenario::Scenario& s);
// The ResourceSliceList JSON the NVIDIA DRA driver would publish for the node (resource.k8s.io/v1,
// kubernetes-node.md §6.3, §6.5): one slice in pool <node name> with a "gpu" device per GPU not in
// MIG mode and a "mig" device per MIG instance (uuid, parentUUID, profile), named by
// scenario::DraDeviceName.
std::string ScenarioResourceSlicesJson(const scenario::Scenario& s);
// The scenario's node_object as a Node object (kubectl get node -o json), "" when it has none.
std::string ScenarioNodeJson(const scenario::Scenario& s);
k8s::SharingEvidence ScenarioSharingEvidence(const scenario::Scenario& s);

}  // namespace gpumeter::sim
