// The workload a pod belongs to, so that restarts and rollouts share one usage history: the
// controller, read from the labels that controllers put on their pods (the store keeps pod
// labels, not owner references). Deployment (pod-template-hash: the pod is named
// <deployment>-<hash>-<5 chars>), StatefulSet (statefulset.kubernetes.io/pod-name:
// <set>-<ordinal>), Job (job-name, or batch.kubernetes.io/job-name), DaemonSet
// (pod-template-generation with controller-revision-hash: <set>-<5 chars>); anything else is the
// pod itself. Pure.
#pragma once

#include <map>
#include <string>
#include <utility>

namespace gpumeter::rightsize {

struct Workload {
  std::string kind;  // Deployment, StatefulSet, Job, DaemonSet or Pod
  std::string name;
  std::string Key() const { return kind + "/" + name; }
};

Workload WorkloadOf(const std::string& pod, const std::map<std::string, std::string>& labels);

// Labels by (namespace, pod).
using PodLabelMap =
    std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>>;
// Workloads by (namespace, pod).
using PodWorkloadMap = std::map<std::pair<std::string, std::string>, Workload>;

}  // namespace gpumeter::rightsize
