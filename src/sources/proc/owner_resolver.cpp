#include "sources/proc/owner_resolver.h"

namespace gpumeter::k8s {
namespace {

domain::ProcessOwner Unattributed(std::string why) {
  return {domain::OwnerKind::kUnattributed, {}, {}, {}, std::move(why)};
}

std::string Short(const std::string& id) { return id.substr(0, 12); }

}  // namespace

domain::ProcessOwner OwnerResolver::Resolve(uint32_t pid) {
  auto id = proc_.Identify(pid);
  if (!id) return Unidentified(id.error());
  return Resolve(*id);
}

domain::ProcessOwner OwnerResolver::Unidentified(const Error& why) {
  if (why.code == ErrorCode::kNotFound) return Unattributed("process exited before /proc was read");
  return Unattributed(why.message);
}

domain::ProcessOwner OwnerResolver::Resolve(const ProcessIdentity& id) {
  const uint32_t pid = id.pid;
  if (auto it = resolved_.find({pid, id.start_ticks}); it != resolved_.end()) return it->second;
  const auto& cg = id.cgroup;
  if (!cg.pod_uid && !cg.container_id)
    return {domain::OwnerKind::kSystem, {}, {}, {}, "host process (cgroup " + cg.path + ")"};

  const PodInfo* pod = nullptr;
  const PodContainer* container = nullptr;
  if (cg.pod_uid) {
    pod = pods_.ByUid(*cg.pod_uid);
    if (!pod) return Unattributed("pod UID " + *cg.pod_uid + " not known to the API server");
    if (!cg.container_id)
      return Unattributed("pod-level process of " + pod->ns + "/" + pod->name +
                          " (no container cgroup)");
    for (const auto& c : pod->containers)
      if (c.container_id == cg.container_id) container = &c;
  } else {
    // A private cgroup namespace hides the pod: find the container ID among all pods.
    container = pods_.ByContainerId(*cg.container_id, &pod);
  }
  if (!container) {
    const std::string where = pod ? " of " + pod->ns + "/" + pod->name : "";
    return Unattributed("container " + Short(*cg.container_id) + where +
                        " not in the pod's status (a pod sandbox, or a restart not yet seen)");
  }
  domain::ProcessOwner owner{domain::OwnerKind::kContainer, pod->ns, pod->name, container->name,
                             cg.pod_uid ? (cg.static_pod ? "cgroup static-pod hash + container ID"
                                                         : "cgroup pod UID + container ID")
                                        : "cgroup container ID (pod hidden by a cgroup namespace)"};
  resolved_.emplace(std::pair{pid, id.start_ticks}, owner);
  return owner;
}

void OwnerResolver::Retain(const std::set<uint32_t>& live) {
  for (auto it = resolved_.begin(); it != resolved_.end();)
    it = live.count(it->first.first) ? std::next(it) : resolved_.erase(it);
  proc_.Retain(live);
}

}  // namespace gpumeter::k8s
