#include "sim/scenario/model.h"

#include <cctype>

namespace gpumeter::scenario {

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

std::string DraDeviceName(const Gpu& gpu, const MigInstance* mig) {
  std::string name = "gpu-" + std::to_string(gpu.index);
  if (!mig) return name;
  std::string profile;
  for (const char ch : mig->profile)
    if (ch != '.') profile += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return name + "-mig-" + profile + "-" + std::to_string(mig->gi_id) + "-" +
         std::to_string(mig->ci_id);
}

std::string Scenario::DraUnit(const std::string& device) const {
  for (const auto& g : gpus) {
    if (!g.mig_enabled && DraDeviceName(g) == device) return g.uuid;
    for (const auto& m : g.mig_instances)
      if (DraDeviceName(g, &m) == device) return m.uuid;
  }
  return "";
}

}  // namespace gpumeter::scenario
