// Builds the guardrails' view of one pass (guard::PassView) from what the pipeline already holds:
// the published units, owners and ledgers, and the pass's snapshot (the NVML sample, the GPU
// variables and command names read from /proc), and the pods. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/allocation/sharing.h"
#include "core/guard/guard.h"
#include "domain/node_snapshot.h"
#include "node/state/node_state.h"
#include "sources/pods/pods.h"

namespace gpumeter::node {

struct GuardViewInputs {
  const NodeState* state = nullptr;  // units, owners and last_interval of this pass
  // This pass: its GPUs, its processes' command names and GPU variables, whether the kubelet
  // answered.
  const domain::NodeSnapshot* snapshot = nullptr;
  const k8s::PodStore* pods = nullptr;  // null: no pod source snapshot yet
  const k8s::SharingEvidence* evidence = nullptr;
  // Containers with a device the allocation could not place (k8s::AllocationResult::unplaced).
  const std::set<std::tuple<std::string, std::string, std::string>>* unplaced = nullptr;
  double now = 0;  // Unix seconds
};

// The returned view points into `in.state`'s ledgers: it must not outlive that state.
guard::PassView BuildGuardView(const GuardViewInputs& in);

// Whether a pod spec's requests name a GPU resource: nvidia.com/gpu, nvidia.com/mig-*, a renamed
// shared resource (nvidia.com/…), or one of `extra` (configured resource names).
bool RequestsGpu(const k8s::PodContainer& c, const std::vector<std::string>& extra);

}  // namespace gpumeter::node
