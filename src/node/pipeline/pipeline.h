// The node pipeline: after each sampling pass, on the sampling thread, it refreshes the
// allocations (kubelet PodResources) and pods (API server or file), resolves the owner of every
// GPU process from /proc, decides each unit's sharing mode and holders, runs the Accountant over
// the interval, adds the ledgers to the running totals and publishes a new NodeState.
// A source that fails leaves its last good data in place and is reported in NodeState::sources;
// what cannot be placed goes to `unattributed`. Sources are borrowed and must outlive the pipeline.
// OnPass is called from one thread; Latest() from any.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/attribution/accountant.h"
#include "core/cost/pricing.h"
#include "core/guard/guard.h"
#include "domain/sample.h"
#include "node/pipeline/guard_view.h"
#include "node/pipeline/interval_cost.h"
#include "node/state/node_state.h"
#include "sources/dcgm/dcgm_aligner.h"
#include "sources/dcgm/dcgm_source.h"
#include "sources/k8s/owner_resolver.h"
#include "sources/k8s/proc_reader.h"
#include "sources/k8s/sharing.h"
#include "sources/kube_api/node_source.h"
#include "sources/kube_api/pod_source.h"
#include "sources/kube_api/resource_slice_source.h"
#include "sources/kubelet/pod_resources_source.h"

namespace gpumeter::node {

struct PipelineOptions {
  std::string node;
  std::filesystem::path proc_root = "/proc";
  // Accounted seconds per steady-clock second: 1 on a real node; the demo's speedup.
  double time_scale = 1;
  // The operator's sharing configuration, node labels and device-plugin config (MIG parents and
  // legacy MIG IDs are added from NVML each pass).
  k8s::SharingEvidence evidence;
  attribution::AccountantOptions accountant;
  // Totals of an owner that has had no row for this long are dropped (its pod is gone).
  double forget_after_s = 3600;
  // Guardrail thresholds and severities, and the prices of idle allocations (null: no cost, only
  // GPU-hours; borrowed, must outlive the pipeline).
  guard::GuardConfig guard;
  const cost::Pricing* pricing = nullptr;
  // How each interval's cost is split between a unit's owners (gpumeter_cost_total), as
  // `report --policy --idle` splits a window; used when `pricing` is set.
  cost::Policy cost_policy;
  // The latest rightsizing, picked up into each published state (null: none). Thread-safe.
  std::function<std::shared_ptr<const std::vector<RightsizingRow>>()> rightsizing;
  // The usage store's writer's health, picked up into each published state (unset: no store).
  // Called on the sampling thread.
  std::function<std::optional<StoreHealth>()> store_health;
};

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

class NodePipeline {
 public:
  NodePipeline(PipelineSources sources, PipelineOptions options);
  NodePipeline(const NodePipeline&) = delete;
  NodePipeline& operator=(const NodePipeline&) = delete;

  // Takes one sampling pass (good or failed). Call from the sampling thread, in order.
  void OnPass(std::shared_ptr<const gpu::SampleResult> pass);
  // At a stop, after the last pass: books the intervals still held for DCGM activity (at most a
  // collection's worth), their activity unknown, as one more interval. Same thread as OnPass.
  void Finish();

  // The latest published state; never null (an empty state before the first pass).
  std::shared_ptr<const NodeState> Latest() const;
  // The idle power the accountant uses for a GPU (watts, and whether configured, fitted or seen
  // idle), if any. Call from the thread that calls OnPass.
  std::optional<attribution::Accountant::IdlePower> IdlePower(const std::string& gpu_uuid) const {
    return accountant_.IdlePowerOf(gpu_uuid);
  }

 private:
  bool UpdatePods();  // takes the pod source's latest snapshot; true if it changed
  void RefreshAllocations(const gpu::GpuSnapshot& snap, std::chrono::steady_clock::time_point now);
  void ResolveOwners(const gpu::GpuSnapshot& snap);
  // `step`: the pass's interval (s), for the forget horizon; 0 forgets nothing.
  void Accumulate(const std::vector<attribution::UnitLedger>& ledgers, double step,
                  NodeState& next) const;
  attribution::PastActivityOf DcgmActivity() const;
  static void AddReleased(std::vector<attribution::UnitLedger> released,
                          std::vector<attribution::UnitLedger>& ledgers);
  std::vector<UnitInfo> Units(const gpu::GpuSnapshot& snap) const;
  domain::SourceStatus ProcStatus() const;
  // The steps of OnPass, in its order.
  void UpdateOwners(const gpu::SampleResult& pass);
  void AccountInterval(const gpu::SampleResult& pass, NodeState& next);
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>> PodLabels(
      const NodeState& prev, const NodeState& next) const;
  std::vector<domain::SourceStatus> SourceStatuses() const;
  // Adds the pass's XID events to NodeState::xids.
  static void CountXids(const gpu::GpuSnapshot& snap, NodeState& next);
  void UpdateFindings(const gpu::SampleResult& pass, NodeState& next);
  // The Node object's facts into next and into what prices the coming interval.
  void UpdateNodeFacts(std::chrono::steady_clock::time_point now, NodeState& next);

  PipelineSources sources_;
  PipelineOptions options_;
  k8s::ProcReader proc_;
  k8s::PodStore pods_;  // a copy of the pod source's latest snapshot
  std::shared_ptr<const k8s::PodStore> pods_seen_;
  k8s::OwnerResolver resolver_{proc_, pods_};
  attribution::Accountant accountant_;
  dcgm::DcgmAligner dcgm_aligner_;  // the exporter's interval means -> each pass's busy fraction

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
  // The operator's evidence with the Node's GFD labels merged (flags win), as the last
  // allocations were built from it: the guard reads the same.
  k8s::SharingEvidence evidence_;
  std::shared_ptr<const k8s::NodeFacts> node_facts_;  // this pass's, read once
  bool built_ = false;
  size_t finished_logged_ = 0;
  k8s::AllocationResult allocation_;
  std::map<std::string, std::vector<attribution::Holding>> holders_;  // by unit UUID
  std::map<std::string, domain::SharingMode> modes_;                  // by unit UUID

  // This pass's owners and MPS thread fractions, by PID (read by the Accountant's callbacks).
  std::map<uint32_t, domain::ProcessOwner> owners_;
  std::map<uint32_t, double> mps_fraction_;
  std::map<uint32_t, attribution::ProcessStart> starts_;  // of this pass's processes
  std::map<uint32_t, ProcFacts> proc_facts_;
  bool allocations_known_ = false;
  guard::Guard guard_;
  CostSettings cost_;
  uint64_t proc_attempts_ = 0, proc_failures_ = 0;
  std::string proc_last_error_;

  std::optional<std::chrono::steady_clock::time_point> last_taken_;
  bool primed_ = false;

  mutable std::mutex mu_;
  std::shared_ptr<const NodeState> latest_;
};

}  // namespace gpumeter::node
