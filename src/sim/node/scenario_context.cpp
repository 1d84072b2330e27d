#include "sim/node/scenario_context.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "core/allocation/device_id.h"

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
      for (const auto& cl : c.claims)
        a.claim_devices.push_back({cl.name, pod.ns, cl.driver, cl.pool, cl.device, cl.share_id});
      out.push_back(std::move(a));
    }
  }
  return out;
}

k8s::SharingEvidence ScenarioSharingEvidence(const scenario::Scenario& s) {
  // A GPU handed out through DRA has no device-plugin configuration: its claims decide its mode.
  std::set<std::string> claimed;
  for (const auto& pod : s.pods)
    for (const auto& c : pod.containers)
      for (const auto& cl : c.claims) claimed.insert(s.DraUnit(cl.device));
  k8s::SharingEvidence ev;
  for (const auto& g : s.gpus) {
    for (const auto& m : g.mig_instances) ev.mig_parent[m.uuid] = g.uuid;
    if (g.mig_enabled || claimed.count(g.uuid)) continue;
    ev.configured[g.uuid] = {g.sharing.mode, std::max<uint32_t>(1, g.sharing.replicas)};
  }
  return ev;
}

std::string ScenarioResourceSlicesJson(const scenario::Scenario& s) {
  using nlohmann::json;
  auto str = [](const std::string& v) { return json{{"string", v}}; };
  json devices = json::array();
  for (const auto& g : s.gpus) {
    if (!g.mig_enabled) {
      devices.push_back(
          {{"name", scenario::DraDeviceName(g)},
           {"attributes",
            {{"type", str("gpu")}, {"uuid", str(g.uuid)}, {"productName", str(g.model)}}},
           {"capacity", {{"memory", {{"value", std::to_string(g.memory_bytes)}}}}}});
      continue;
    }
    for (const auto& m : g.mig_instances)
      devices.push_back({{"name", scenario::DraDeviceName(g, &m)},
                         {"attributes",
                          {{"type", str("mig")},
                           {"uuid", str(m.uuid)},
                           {"parentUUID", str(g.uuid)},
                           {"profile", str(m.profile)},
                           {"productName", str(g.model)}}},
                         {"capacity", {{"memory", {{"value", std::to_string(m.memory_bytes)}}}}}});
  }
  json slice = {{"apiVersion", "resource.k8s.io/v1"},
                {"kind", "ResourceSlice"},
                {"metadata", {{"name", s.node_name + "-gpu.nvidia.com-0"}}},
                {"spec",
                 {{"driver", scenario::kNvidiaDraDriver},
                  {"nodeName", s.node_name},
                  {"pool", {{"name", s.node_name}, {"generation", 1}, {"resourceSliceCount", 1}}},
                  {"devices", devices}}}};
  return json{{"apiVersion", "resource.k8s.io/v1"},
              {"kind", "ResourceSliceList"},
              {"items", json::array({slice})}}
      .dump(2);
}

std::string ScenarioNodeJson(const scenario::Scenario& s) {
  if (!s.node_object) return "";
  nlohmann::json node = {{"kind", "Node"},
                         {"apiVersion", "v1"},
                         {"metadata", {{"name", s.node_name}, {"labels", s.node_object->labels}}}};
  if (!s.node_object->provider_id.empty())
    node["spec"] = {{"providerID", s.node_object->provider_id}};
  return node.dump();
}

}  // namespace gpumeter::sim
