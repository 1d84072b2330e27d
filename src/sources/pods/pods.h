// The pods of this node as the API server reports them (kubernetes-node.md §5), reduced to what
// attribution needs: identity (UID, namespace, name; a static pod's config hash), containers with
// their runtime IDs and requests, phase, QoS, labels and annotations. PodStore applies a PodList
// and then watch events, one line at a time; bad input is an error that changes nothing, so the
// last good pod set is kept. Pure: the caller does the HTTP. Not thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace gpumeter::k8s {

struct PodContainer {
  std::string name;
  std::optional<std::string> container_id;  // 64 hex, the "<runtime>://" prefix removed
  std::string runtime;  // "containerd", "cri-o", "docker", … ("" until created)
  std::map<std::string, std::string>
      requests;       // resource name -> quantity (limits where no request)
  bool init = false;  // an init container (sidecars included)
};

struct PodInfo {
  std::string uid, ns, name, node_name;
  std::optional<std::string> config_hash;  // static pods: kubernetes.io/config.mirror (or .hash)
  std::string phase;                       // Pending, Running, Succeeded, Failed, Unknown
  std::string qos;
  std::map<std::string, std::string> labels, annotations;
  std::vector<PodContainer> containers;
  bool resource_claims = false;  // spec.resourceClaims is not empty (DRA devices, not in requests)
  bool Terminated() const { return phase == "Succeeded" || phase == "Failed"; }
};

// One pod object (JSON). Errors name the missing or mistyped field.
Expected<PodInfo> ParsePod(std::string_view json);

class PodStore {
 public:
  // Replaces every pod with the PodList in `body` and takes its resourceVersion.
  Expected<void> ApplyList(std::string_view body);

  enum class Event { kAdded, kModified, kDeleted, kBookmark, kRelist };
  // One line of a watch stream. ERROR with code 410 (resource version too old) returns kRelist:
  // the caller lists again. Any other ERROR, or a malformed line, is an error.
  Expected<Event> ApplyWatchLine(std::string_view line);

  const std::string& resource_version() const { return resource_version_; }
  size_t size() const { return by_uid_.size(); }

  // By cgroup UID: the pod's UID, or a static pod's config hash (its cgroup carries the hash,
  // the API server's mirror pod has another UID).
  const PodInfo* ByUid(const std::string& uid) const;
  const PodInfo* ByName(const std::string& ns, const std::string& name) const;
  // The container with this runtime ID (64 hex) and its pod; null when none has it.
  const PodContainer* ByContainerId(const std::string& id, const PodInfo** pod) const;

 private:
  void Put(PodInfo pod);
  void Erase(const std::string& uid);

  std::map<std::string, PodInfo> by_uid_;
  std::map<std::string, std::string> uid_by_hash_;  // static-pod hash -> UID
  std::map<std::pair<std::string, std::string>, std::string> uid_by_name_;  // (ns, name) -> UID
  std::string resource_version_;
};

}  // namespace gpumeter::k8s
