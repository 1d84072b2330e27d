// What the agent learns about its node from the Node object (GET /api/v1/nodes/NAME, or a file
// holding one): its cloud identity for pricing (instance type, region, zone, capacity type,
// spec.providerID) and the GPU Feature Discovery / GPU Operator labels (nvidia.com/…; the
// sharing evidence reads gpu.replicas and gpu.sharing-strategy, the rest is kept as it came).
// Label keys: ../shared/reference/billing-and-scaling.md §3.2–3.3. Immutable once parsed; a value
// may be shared between threads.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/error.h"

namespace gpumeter::k8s {

struct NodeFacts {
  std::string name;
  std::string provider_id;  // spec.providerID, e.g. aws:///us-east-1a/i-0abc…
  std::string cloud;        // aws, gcp, azure, or "" (from providerID's scheme)
  // GKE's numeric GCE instance id (annotation container.googleapis.com/instance_id): Google's
  // bill may name the VM by it rather than by name. "" elsewhere.
  std::string instance_id;
  std::string instance_type;  // node.kubernetes.io/instance-type (or the beta label)
  std::string region, zone;   // topology.kubernetes.io/{region,zone} (or the beta labels)
  // spot, on-demand or reserved, from Karpenter, EKS, GKE, AKS or the self-managed `lifecycle`
  // label; "" when no label says (most on-demand nodes carry none).
  std::string capacity_type;
  // The node's nvidia.com/ labels (GFD and the GPU Operator), as the Node has them.
  std::map<std::string, std::string> gpu_labels;

  // Parses a Node object (JSON). Refuses what is not one: not JSON, a duplicate key in any object,
  // kind other than Node, labels or annotations that are not strings. Errors name the field.
  Expected<void> ApplyList(std::string_view body);
};

}  // namespace gpumeter::k8s
