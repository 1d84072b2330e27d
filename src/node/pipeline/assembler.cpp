#include "node/pipeline/assembler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>

namespace gpumeter::node {
using domain::SharingMode;

SnapshotAssembler::SnapshotAssembler(PipelineSources sources, std::filesystem::path proc_root,
                                     k8s::SharingEvidence evidence)
    : sources_(sources),
      proc_root_(std::move(proc_root)),
      configured_(std::move(evidence)),
      processes_(proc_root_, pods_) {}

std::shared_ptr<const domain::NodeSnapshot> SnapshotAssembler::Assemble(
    const gpu::SampleResult& pass, const gpu::GpuSnapshot& devices) {
  if (sources_.pods) sources_.pods->Poll(pass.taken);
  UpdatePods();
  if (sources_.node) {
    sources_.node->Poll(pass.taken);
    node_facts_ = sources_.node->Current();
  }
  RefreshAllocations(devices, pass.taken);
  auto s = std::make_shared<domain::NodeSnapshot>();
  s->sequence = pass.sequence;
  s->ok = pass.ok;
  s->error = pass.error;
  s->allocations_known = allocations_known_;
  s->units = units_;
  if (!pass.ok) return s;  // a failed pass lists no process; the owner caches wait for a good one
  s->gpus = pass.snapshot;
  if (sources_.dcgm)
    dcgm_aligner_.Apply(*sources_.dcgm->Current(), static_cast<double>(s->gpus.timestamp_us) / 1e6,
                        s->gpus);
  processes_.Watch(domain::SamplePids(s->gpus));
  processes_.Poll(pass.taken);
  s->processes = *processes_.Current();
  return s;
}

void SnapshotAssembler::RefreshAllocations(const gpu::GpuSnapshot& snap,
                                           std::chrono::steady_clock::time_point now) {
  std::shared_ptr<const kubelet::PodResourcesSource::Allocations> allocations;
  if (sources_.kubelet) {
    sources_.kubelet->Poll(now);
    allocations = sources_.kubelet->Current();
  }
  // A kubelet that stopped answering leaves its last list: containers started since are missing.
  allocations_known_ = allocations != nullptr && sources_.kubelet->Status().up;
  // The inputs, by value: a kubelet that answers every pass with the same list changes nothing.
  AllocationInputs in;
  // The kubelet may go on listing a pod that has finished (Succeeded or Failed) with its devices;
  // such a pod holds nothing.
  size_t finished = 0;
  if (allocations)
    for (const auto& a : *allocations) {
      if (const auto* pod = pods_.ByName(a.ns, a.pod); pod && pod->Terminated()) {
        finished += !a.devices.empty() || !a.claim_devices.empty();
        continue;
      }
      in.live.push_back(a);
    }
  for (const auto& d : snap.devices) {
    in.devices[d.uuid] = d.mig_enabled;
    for (const auto& m : d.mig_instances) {
      in.mig_parent[m.uuid] = d.uuid;
      in.legacy_mig["MIG-" + d.uuid + "/" + std::to_string(m.gpu_instance_id) + "/" +
                    std::to_string(m.compute_instance_id)] = m.uuid;
    }
  }
  if (node_facts_) in.node_labels = node_facts_->gpu_labels;
  if (sources_.slices) sources_.slices->Poll(now);
  if (const auto slices = sources_.slices ? sources_.slices->Current() : nullptr)
    in.dra = slices->devices();
  if (built_ && in == inputs_) return;
  if (finished > 0 && finished != finished_logged_)
    spdlog::info(
        "{} container(s) of finished pods are still listed by the kubelet with devices: they hold "
        "nothing",
        finished);
  finished_logged_ = finished;

  auto evidence = configured_;
  evidence.dra_devices = in.dra;
  // GPU Feature Discovery's labels from the Node object; a --node-label flag wins.
  for (const auto& [k, v] : in.node_labels) evidence.node_labels.emplace(k, v);
  for (const auto& [mig, gpu] : in.mig_parent) evidence.mig_parent[mig] = gpu;
  for (const auto& [legacy, mig] : in.legacy_mig) evidence.legacy_mig[legacy] = mig;
  auto result = k8s::BuildAllocations(in.live, evidence);
  evidence_ = evidence;
  // Log problems when they change, not every time the inputs do.
  if (result.problems != allocation_.problems)
    for (const auto& p : result.problems) spdlog::warn("allocation: {}", p);
  allocation_ = std::move(result);
  inputs_ = std::move(in);
  built_ = true;
  std::map<std::string, domain::UnitFact> units;
  for (const auto& u : allocation_.units) {
    auto& f = units[u.unit_uuid];
    f.uuid = u.unit_uuid, f.mode = u.mode;
    for (const auto& h : u.holders) f.holders.push_back({h.AsOwner(), h.share});
  }
  // A GPU that nobody holds still has a mode: MIG from NVML, else what the operator configured.
  for (const auto& [uuid, mig] : inputs_.devices) {
    if (mig) units.try_emplace(uuid, domain::UnitFact{uuid, SharingMode::kMig, {}});
    if (const auto it = configured_.configured.find(uuid); it != configured_.configured.end())
      units.try_emplace(uuid, domain::UnitFact{uuid, it->second.mode, {}});
  }
  units_.clear();
  for (auto& [uuid, f] : units) units_.push_back(std::move(f));
}

void SnapshotAssembler::UpdatePods() {
  const auto pods = sources_.pods ? sources_.pods->Current() : nullptr;
  if (!pods || pods == pods_seen_) return;
  pods_ = *pods;  // the resolver reads pods_; its cache of resolved processes stays valid
  pods_seen_ = pods;
}

std::vector<domain::SourceStatus> SnapshotAssembler::SourceStatuses() const {
  std::vector<domain::SourceStatus> out;
  out.push_back(sources_.kubelet ? sources_.kubelet->Status()
                                 : domain::SourceStatus::NotConfigured("kubelet"));
  out.push_back(sources_.pods ? sources_.pods->Status()
                              : domain::SourceStatus::NotConfigured("pods"));
  if (sources_.slices) out.push_back(sources_.slices->Status());
  if (sources_.dcgm) out.push_back(sources_.dcgm->Status());
  if (sources_.node) out.push_back(sources_.node->Status());
  out.push_back(processes_.Status());
  return out;
}

attribution::PastActivityOf SnapshotAssembler::DcgmActivity() const {
  return [this](const std::string& gpu, std::optional<uint32_t> gi, double from_s, double to_s) {
    const auto c = dcgm_aligner_.Mean({gpu, gi}, from_s, to_s);
    const auto traffic = dcgm_aligner_.Mean({gpu, gi, true}, from_s, to_s);
    return attribution::PastActivity{
        c.pending, c.mean, traffic.pending ? std::nullopt : traffic.mean, c.covered_until_s};
  };
}

}  // namespace gpumeter::node
