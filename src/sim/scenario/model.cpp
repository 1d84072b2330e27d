#include "sim/scenario/model.h"

namespace gpumeter::scenario {

const char* ToString(ComputeMode mode) {
  switch (mode) {
    case ComputeMode::kDefault:
      return "default";
    case ComputeMode::kProhibited:
      return "prohibited";
    case ComputeMode::kExclusiveProcess:
      return "exclusive-process";
  }
  return "unknown";
}

const Gpu* Scenario::FindGpuByUuid(const std::string& uuid) const {
  for (const auto& g : gpus)
    if (g.uuid == uuid) return &g;
  return nullptr;
}

const Gpu* Scenario::FindGpuByIndex(uint32_t index) const {
  for (const auto& g : gpus)
    if (g.index == index) return &g;
  return nullptr;
}

Scenario::UnitRef Scenario::FindUnit(const std::string& unit_uuid) const {
  for (const auto& g : gpus) {
    if (g.uuid == unit_uuid) return {&g, nullptr};
    for (const auto& m : g.mig_instances)
      if (m.uuid == unit_uuid) return {&g, &m};
  }
  return {};
}

const Pod* Scenario::FindPod(const std::string& ns, const std::string& pod_name) const {
  for (const auto& p : pods)
    if (p.ns == ns && p.name == pod_name) return &p;
  return nullptr;
}

}  // namespace gpumeter::scenario
