#include "sim/node/scenario_context.h"

#include <algorithm>

#include "sources/k8s/device_id.h"

namespace gpumeter::sim {

std::vector<k8s::ContainerAllocation> ScenarioAllocations(const scenario::Scenario& s) {
  std::vector<k8s::ContainerAllocation> out;
  for (const auto& pod : s.pods) {
    for (const auto& c : pod.containers) {
      k8s::ContainerAllocation a{pod.ns, pod.name, c.name, {}, {}};
      if (!c.device_ids.empty()) {
        std::string resource = "nvidia.com/gpu";
        for (const auto& [name, qty] : c.requests)
          if (k8s::IsGpuResource(name)) resource = name;
        a.devices.push_back({resource, c.device_ids});
      }
      out.push_back(std::move(a));
    }
  }
  return out;
}

k8s::SharingEvidence ScenarioSharingEvidence(const scenario::Scenario& s) {
  k8s::SharingEvidence ev;
  for (const auto& g : s.gpus) {
    for (const auto& m : g.mig_instances) ev.mig_parent[m.uuid] = g.uuid;
    if (g.mig_enabled) continue;
    ev.configured[g.uuid] = {g.sharing.mode, std::max<uint32_t>(1, g.sharing.replicas)};
  }
  return ev;
}

}  // namespace gpumeter::sim
