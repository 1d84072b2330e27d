#include "node/pipeline/guard_view.h"

#include <algorithm>
#include <set>

namespace gpumeter::node {
namespace {

using domain::Owner;
using domain::OwnerKind;

// The owner of a PID as ledger rows name it; unattributed when the PID is not in `owners`.
Owner OwnerOf(const std::map<uint32_t, domain::ProcessOwner>& owners, uint32_t pid) {
  const auto it = owners.find(pid);
  return it == owners.end() ? Owner{} : it->second.AsOwner();
}

}  // namespace

bool RequestsGpu(const k8s::PodContainer& c, const std::vector<std::string>& extra) {
  for (const auto& [name, quantity] : c.requests) {
    if (quantity == "0") continue;
    if (name.rfind("nvidia.com/", 0) == 0 ||
        std::find(extra.begin(), extra.end(), name) != extra.end())
      return true;
  }
  return false;
}

guard::PassView BuildGuardView(const GuardViewInputs& in) {
  guard::PassView v;
  const auto& state = *in.state;
  v.node = state.node;
  v.now = in.now;
  v.allocations_known = in.snapshot->allocations_known;
  v.pods_known = in.pods != nullptr;
  if (in.evidence) {
    const auto label = in.evidence->node_labels.find("nvidia.com/gpu.sharing-strategy");
    v.mps_limits_by_device_plugin =
        (in.evidence->plugin_config &&
         in.evidence->plugin_config->mode == domain::SharingMode::kMps) ||
        (label != in.evidence->node_labels.end() && label->second == "mps");
  }

  // Processes per unit: a whole GPU's list, or each MIG instance's.
  std::map<std::string, const std::vector<gpu::GpuProcess>*> processes;
  std::set<std::string> lost;  // GPUs off the bus in this pass's sample
  std::map<std::string, const gpu::GpuHealth*> health;
  for (const auto& d : in.snapshot->gpus.devices) {
    v.gpu_uuid_by_index[d.index] = d.uuid;
    if (d.lost) lost.insert(d.uuid);
    health[d.uuid] = &d.health;
    if (!d.mig_enabled) processes[d.uuid] = &d.processes;
    for (const auto& m : d.mig_instances) processes[m.uuid] = &m.processes;
  }
  std::set<Owner> holding;
  for (const auto& u : state.units)
    for (const auto& h : u.holders) holding.insert(h.AsOwner());
  if (in.unplaced)
    for (const auto& [ns, pod, container] : *in.unplaced)
      v.allocation_unknown.insert(Owner::Container(ns, pod, container));
  std::map<std::string, const attribution::UnitLedger*> ledgers;
  for (const auto& l : state.last_interval) ledgers[l.uuid] = &l;

  for (const auto& u : state.units) {
    guard::UnitView uv;
    uv.uuid = u.uuid, uv.gpu_uuid = u.gpu_uuid, uv.model = u.model, uv.mig_profile = u.mig_profile;
    uv.mode = u.mode;
    uv.gpu_fraction = u.gpu_fraction;
    uv.gpu_lost = lost.count(u.gpu_uuid) > 0;
    if (const auto it = health.find(u.gpu_uuid); it != health.end()) {
      uv.health = *it->second;
      uv.xids = it->second->xid_events;
    }
    if (u.kind == domain::UnitKind::kMigInstance) uv.gpu_instance_id = u.mig_gpu_instance;
    for (const auto& h : u.holders) uv.holders.push_back({h.AsOwner(), h.share});
    if (const auto it = ledgers.find(u.uuid); it != ledgers.end()) uv.ledger = it->second;
    if (const auto it = processes.find(u.uuid);
        it != processes.end() && u.kind != domain::UnitKind::kUnpartitioned)
      for (const auto& p : *it->second) {
        guard::ProcessView pv;
        pv.pid = p.pid;
        pv.owner = OwnerOf(state.owners, p.pid);
        pv.memory_bytes = p.used_memory_bytes;
        if (const auto* f = in.snapshot->Process(p.pid)) pv.comm = f->comm, pv.env = f->gpu_env;
        if (pv.owner.kind == OwnerKind::kContainer && in.pods && !v.requests_gpu.count(pv.owner))
          if (const auto* pod = in.pods->ByName(pv.owner.ns, pv.owner.pod))
            for (const auto& c : pod->containers) {
              if (c.name != pv.owner.container) continue;
              v.requests_gpu[pv.owner] =
                  pod->resource_claims ||
                  RequestsGpu(c, in.evidence ? in.evidence->extra_gpu_resources
                                             : std::vector<std::string>{});
              // The kubelet lists devices of sidecars only, not of plain init containers; a DRA
              // pod's claims only where the kubelet reports them.
              if (c.init || (pod->resource_claims && !holding.count(pv.owner)))
                v.allocation_unknown.insert(pv.owner);
            }
        uv.processes.push_back(std::move(pv));
      }
    v.units.push_back(std::move(uv));
  }
  return v;
}

}  // namespace gpumeter::node
