// Which pod and container a host process belongs to, from the text of /proc/<pid>/cgroup
// (kubernetes-node.md §4): cgroup v1 and v2, systemd and cgroupfs drivers, containerd, CRI-O and
// Docker leaves, every QoS class, static-pod hash UIDs, and relative paths seen from a private
// cgroup namespace. Pure parsing: the caller reads the file.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"

namespace gpumeter::k8s {

enum class QosClass { kGuaranteed, kBurstable, kBestEffort, kUnknown };
enum class ContainerRuntime { kContainerd, kCrio, kDocker, kUnknown };

const char* ToString(QosClass qos);
const char* ToString(ContainerRuntime runtime);

struct CgroupIdentity {
  std::string path;                         // the cgroup path the answer was read from
  std::optional<std::string> pod_uid;       // dashed UID, or the 32-hex hash of a static pod
  bool static_pod = false;                  // pod_uid is the kubelet's config hash
  std::optional<std::string> container_id;  // 64 lowercase hex (may be a pod sandbox's ID)
  ContainerRuntime runtime = ContainerRuntime::kUnknown;
  QosClass qos = QosClass::kUnknown;  // Guaranteed when the pod has no QoS level
};

// Parses the whole file. A process outside any pod (host service, user session) parses fine with
// neither pod_uid nor container_id. Errors name the line and what is wrong; a file with no
// usable line is an error.
Expected<CgroupIdentity> ParseProcCgroup(std::string_view content);

// One cgroup path (the part after the second ':').
CgroupIdentity ParseCgroupPath(std::string_view path);

}  // namespace gpumeter::k8s
