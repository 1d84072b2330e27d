// Which Kubernetes node a bill line's ResourceId names. Each cloud writes a VM's id its own way
// and the node's spec.providerID another (../shared/reference/billing-and-scaling.md §2.4):
//   AWS    aws:///us-east-1a/i-0abc…          ↔ i-0abc…, or an ARN ending instance/i-0abc…
//   GCP    gce://project/zone/name (+ the GKE annotation container.googleapis.com/instance_id)
//                                             ↔ [//compute.googleapis.com/]projects/P/zones/Z/
//                                               instances/NAME or /ID, or a bare numeric id (a
//                                               bare name is not matched: a boot disk has its
//                                               VM's name)
//   Azure  azure:///subscriptions/…/virtualMachineScaleSets/S/virtualMachines/N (or a VM's path)
//                                             ↔ the same path, or only the scale set's path: then
//                                               the line is the whole scale set's, and every node
//                                               of it is named
// Both sides are reduced to keys and matched exactly (Azure paths case-insensitively, as Azure
// treats them). Pure; immutable after construction, so it may be shared between threads.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gpumeter::cost {

// A node as the agent recorded it.
struct BillNode {
  std::string name;         // the Kubernetes node name
  std::string provider_id;  // spec.providerID
  std::string instance_id;  // GKE's numeric instance id annotation, or ""
  // The span the agent recorded it in (Unix s); both 0: not known (taken to cover any period).
  int64_t first_seen_unix_s = 0, last_seen_unix_s = 0;
};

class NodeMatcher {
 public:
  explicit NodeMatcher(std::vector<BillNode> nodes);

  // The indexes (into nodes()) of the nodes `resource_id` names: one for a VM, every known node
  // of a scale set for a scale set's line, none for anything else.
  std::vector<size_t> Match(std::string_view resource_id) const;
  // Whether `resource_id` has the form of a VM's (or a scale set's) id in some cloud: a line
  // that does and matches no node is a VM the report cannot place, listed as such.
  static bool LooksLikeVm(std::string_view resource_id);

  const std::vector<BillNode>& nodes() const { return nodes_; }

 private:
  std::vector<BillNode> nodes_;
  std::multimap<std::string, size_t> keys_;  // a node's keys; a scale set's key names several
};

}  // namespace gpumeter::cost
