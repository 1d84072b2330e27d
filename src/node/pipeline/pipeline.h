// The node pipeline, after each sampling pass on the sampling thread: assemble the pass's
// NodeSnapshot from every source (SnapshotAssembler), account the interval it ends (Accountant),
// add the ledgers to the running totals, raise the guardrails' findings, and publish a new
// NodeState. A source that fails leaves its last good data in place and is reported in
// NodeState::sources; what cannot be placed goes to `unattributed`. Sources are borrowed and must
// outlive the pipeline. OnPass is called from one thread; Latest() from any.
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
#include "domain/node_snapshot.h"
#include "domain/sample.h"
#include "node/pipeline/assembler.h"
#include "node/pipeline/cost_totals.h"
#include "node/pipeline/guard_view.h"
#include "node/state/node_state.h"

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

class NodePipeline {
 public:
  NodePipeline(PipelineSources sources, PipelineOptions options);
  NodePipeline(const NodePipeline&) = delete;
  NodePipeline& operator=(const NodePipeline&) = delete;

  // Takes one sampling pass (good or failed). Call from the sampling thread, in order.
  void OnPass(std::shared_ptr<const gpu::SampleResult> pass);
  // Between passes: the PIDs a drain of the driver's per-process samples met
  // (GpuSource::Drain). Same thread as OnPass.
  void OnDrain(const std::vector<uint32_t>& pids) { assembler_.Drained(pids); }
  // At a stop, after the last pass: books the intervals still held for DCGM activity (at most a
  // collection's worth), their activity unknown, as one more interval. Same thread as OnPass.
  void Finish();
  // At a stop, after the store's writer flushed (same thread as Finish): publishes its health
  // again, so the last scrapes see what the stop could not write.
  void RefreshStoreHealth();

  // The latest published state; never null (an empty state before the first pass).
  std::shared_ptr<const NodeState> Latest() const;
  // The idle power the accountant uses for a GPU (watts, and whether configured, fitted or seen
  // idle), if any. Call from the thread that calls OnPass.
  std::optional<attribution::Accountant::IdlePower> IdlePower(const std::string& gpu_uuid) const {
    return accountant_.IdlePowerOf(gpu_uuid);
  }

 private:
  // `step`: the pass's interval (s), for the forget horizon; 0 forgets nothing.
  void Accumulate(const std::vector<attribution::UnitLedger>& ledgers, double step,
                  NodeState& next) const;
  static void AddReleased(std::vector<attribution::UnitLedger> released,
                          std::vector<attribution::UnitLedger>& ledgers);
  std::vector<UnitInfo> Units(const gpu::GpuSnapshot& snap,
                              const domain::NodeSnapshot& snapshot) const;
  // The steps of OnPass, in its order.
  void AccountInterval(const gpu::SampleResult& pass,
                       std::shared_ptr<const domain::NodeSnapshot> snapshot, NodeState& next);
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>> PodLabels(
      const NodeState& prev, const NodeState& next) const;
  // Adds the pass's XID events to NodeState::xids.
  static void CountXids(const gpu::GpuSnapshot& snap, NodeState& next);
  void UpdateFindings(const gpu::SampleResult& pass, const domain::NodeSnapshot& snapshot,
                      NodeState& next);
  // The Node object's facts into next and into what prices the coming interval.
  void UpdateNodeFacts(NodeState& next);

  PipelineSources sources_;
  PipelineOptions options_;
  SnapshotAssembler assembler_;
  attribution::Accountant accountant_;
  guard::Guard guard_;
  cost::CostSettings cost_;

  std::optional<std::chrono::steady_clock::time_point> last_taken_;
  bool primed_ = false;

  mutable std::mutex mu_;
  std::shared_ptr<const NodeState> latest_;
};

}  // namespace gpumeter::node
