#include "core/rightsize/workload.h"

namespace gpumeter::rightsize {
namespace {

std::string Label(const std::map<std::string, std::string>& labels, const char* key) {
  const auto it = labels.find(key);
  return it == labels.end() ? std::string() : it->second;
}

// `pod` without its last dash-separated part; empty when it has none.
std::string DropLast(const std::string& pod) {
  const auto dash = pod.rfind('-');
  return dash == std::string::npos || dash == 0 ? std::string() : pod.substr(0, dash);
}

}  // namespace

Workload WorkloadOf(const std::string& pod, const std::map<std::string, std::string>& labels) {
  if (const auto hash = Label(labels, "pod-template-hash"); !hash.empty()) {
    // <deployment>-<hash>-<suffix>: the ReplicaSet is <deployment>-<hash>.
    const auto rs = DropLast(pod);
    const std::string tail = "-" + hash;
    if (rs.size() > tail.size() && rs.compare(rs.size() - tail.size(), tail.size(), tail) == 0)
      return {"Deployment", rs.substr(0, rs.size() - tail.size())};
  }
  if (!Label(labels, "statefulset.kubernetes.io/pod-name").empty())
    if (const auto set = DropLast(pod); !set.empty()) return {"StatefulSet", set};
  for (const char* key : {"batch.kubernetes.io/job-name", "job-name"})
    if (const auto job = Label(labels, key); !job.empty()) return {"Job", job};
  if (!Label(labels, "pod-template-generation").empty() &&
      !Label(labels, "controller-revision-hash").empty())
    if (const auto set = DropLast(pod); !set.empty()) return {"DaemonSet", set};
  return {"Pod", pod};
}

}  // namespace gpumeter::rightsize
