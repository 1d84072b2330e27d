// Assembles the node's snapshot of each sampling pass (domain::NodeSnapshot) from every source, in
// one order: the pods (API server or file), the Node object, the kubelet's PodResources and the
// ResourceSlices (rebuilding the allocations only when their inputs change), /proc for the owner,
// start time, MPS share and GPU variables of each process the sample lists, and the DCGM
// exporter's activity aligned into the sample. A source that fails leaves its last good data in
// place and shows in SourceStatuses(). Sources are borrowed and must outlive the assembler.
// Not thread-safe: call from the sampling thread.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/allocation/sharing.h"
#include "core/attribution/accountant.h"
#include "domain/node_snapshot.h"
#include "domain/sample.h"
#include "domain/source_status.h"
#include "sources/dcgm/dcgm_aligner.h"
#include "sources/dcgm/dcgm_source.h"
#include "sources/kubelet/pod_resources_source.h"
#include "sources/node/node_source.h"
#include "sources/pods/pod_source.h"
#include "sources/proc/process_source.h"
#include "sources/slices/resource_slice_source.h"

namespace gpumeter::node {

struct PipelineSources {
  kubelet::PodResourcesSource* kubelet = nullptr;  // null: not configured (everything unattributed)
  kube_api::PodSource* pods = nullptr;             // null: not configured (no names for containers)
  kube_api::SliceSource* slices = nullptr;         // null: no DRA devices (claim devices unplaced)
  // null: no DCGM activity (MIG instances of pre-Hopper GPUs have unknown activity). Read with
  // Latest() only: its reads run on its own thread (or the caller's, in simulate).
  const dcgm::DcgmSource* dcgm = nullptr;
  // null: no Node object (no instance type, no GFD labels but the --node-label flags).
  kube_api::NodeSource* node = nullptr;
};

class SnapshotAssembler {
 public:
  // `evidence`: the operator's sharing configuration, node labels and device-plugin config.
  SnapshotAssembler(PipelineSources sources, std::filesystem::path proc_root,
                    k8s::SharingEvidence evidence);
  SnapshotAssembler(const SnapshotAssembler&) = delete;
  SnapshotAssembler& operator=(const SnapshotAssembler&) = delete;

  // The snapshot of `pass`. `devices`: the GPUs the allocations are built against (the pass's, or
  // on a failed pass the last good one's); a failed pass lists no GPU and no process.
  std::shared_ptr<const domain::NodeSnapshot> Assemble(const gpu::SampleResult& pass,
                                                       const gpu::GpuSnapshot& devices);

  // What the last Assemble read, for what the pipeline publishes beside the ledgers.
  const k8s::PodStore* pods() const { return pods_seen_ ? &pods_ : nullptr; }
  const std::shared_ptr<const k8s::NodeFacts>& node_facts() const { return node_facts_; }
  const k8s::AllocationResult& allocation() const { return allocation_; }
  // The operator's evidence with the Node's GFD labels merged, as the allocations were built.
  const k8s::SharingEvidence& evidence() const { return built_ ? evidence_ : configured_; }
  // kubelet, pods, ResourceSlices and DCGM (when configured), the Node, and proc, in that order.
  std::vector<domain::SourceStatus> SourceStatuses() const;
  // Between passes: the PIDs a drain of the driver's per-process samples met (GpuSource::Drain),
  // identified now where new, so the next snapshot knows processes that lived between passes.
  void Drained(const std::vector<uint32_t>& pids) { processes_.Met(pids); }
  const k8s::ProcessSource& processes() const { return processes_; }
  // The DCGM activity of a past interval (Accountant::Release), from the collections seen.
  attribution::PastActivityOf DcgmActivity() const;

 private:
  void UpdatePods();
  void RefreshAllocations(const gpu::GpuSnapshot& devices,
                          std::chrono::steady_clock::time_point now);

  PipelineSources sources_;
  std::filesystem::path proc_root_;
  k8s::SharingEvidence configured_;
  k8s::PodStore pods_;  // a copy of the pod source's latest snapshot
  std::shared_ptr<const k8s::PodStore> pods_seen_;
  k8s::ProcessSource processes_;    // reads pods_
  dcgm::DcgmAligner dcgm_aligner_;  // the exporter's interval means -> each pass's busy fraction
  std::shared_ptr<const k8s::NodeFacts> node_facts_;

  // Inputs of the last BuildAllocations, by value, to rebuild only when they change.
  struct AllocationInputs {
    std::vector<k8s::ContainerAllocation> live;  // the kubelet's list without finished pods
    std::map<std::string, bool> devices;         // GPU UUID -> MIG enabled
    std::map<std::string, std::string> mig_parent, legacy_mig;
    std::map<k8s::DraKey, k8s::DraDevice> dra;
    std::map<std::string, std::string> node_labels;  // the Node's nvidia.com/ labels
    bool operator==(const AllocationInputs&) const = default;
  };
  AllocationInputs inputs_;
  k8s::SharingEvidence evidence_;
  bool built_ = false;
  size_t finished_logged_ = 0;
  k8s::AllocationResult allocation_;
  std::vector<domain::UnitFact> units_;  // from allocation_, sorted by UUID
  bool allocations_known_ = false;
};

}  // namespace gpumeter::node
