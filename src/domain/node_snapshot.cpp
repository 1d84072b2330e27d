#include "domain/node_snapshot.h"

#include <algorithm>

namespace gpumeter::domain {

const ProcessFact* NodeSnapshot::Process(uint32_t pid) const {
  const auto it = std::lower_bound(processes.begin(), processes.end(), pid,
                                   [](const ProcessFact& p, uint32_t v) { return p.pid < v; });
  return it != processes.end() && it->pid == pid ? &*it : nullptr;
}

const UnitFact* NodeSnapshot::Unit(std::string_view uuid) const {
  const auto it =
      std::lower_bound(units.begin(), units.end(), uuid,
                       [](const UnitFact& u, std::string_view v) { return u.uuid < v; });
  return it != units.end() && it->uuid == uuid ? &*it : nullptr;
}

SharingMode NodeSnapshot::ModeOf(std::string_view uuid) const {
  const auto* u = Unit(uuid);
  return u ? u->mode : SharingMode::kExclusive;
}

std::vector<uint32_t> SamplePids(const gpu::GpuSnapshot& gpus) {
  std::vector<uint32_t> pids;
  for (const auto& d : gpus.devices) {
    for (const auto& p : d.processes) pids.push_back(p.pid);
    for (const auto& m : d.mig_instances)
      for (const auto& p : m.processes) pids.push_back(p.pid);
  }
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  return pids;
}

}  // namespace gpumeter::domain
