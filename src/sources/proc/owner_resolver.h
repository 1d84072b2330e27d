// Which container owns a host PID: /proc/<pid>/cgroup (through ProcReader) gives the pod UID and
// container ID, the API server's pods (PodStore) give namespace, pod and container name. Every
// answer says how it was found or why it could not be. A process resolved to a container keeps
// that owner for its life (cached by PID and start time), so a pod deleted while its process
// still runs is still charged, and a reused PID is resolved afresh. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "domain/owner.h"
#include "sources/pods/pods.h"
#include "sources/proc/proc_reader.h"

namespace gpumeter::k8s {

class OwnerResolver {
 public:
  OwnerResolver(ProcReader& proc, const PodStore& pods) : proc_(proc), pods_(pods) {}

  domain::ProcessOwner Resolve(uint32_t pid);
  // The same for a process ProcReader already identified (no second read of its stat file).
  domain::ProcessOwner Resolve(const ProcessIdentity& id);
  // The owner of a process ProcReader could not identify: unattributed, saying why.
  static domain::ProcessOwner Unidentified(const Error& why);

  // Forgets processes whose PID is not in `live` (and ProcReader's cache of them).
  void Retain(const std::set<uint32_t>& live);

 private:
  ProcReader& proc_;
  const PodStore& pods_;
  std::map<std::pair<uint32_t, uint64_t>, domain::ProcessOwner>
      resolved_;  // (pid, start ticks) -> container
};

}  // namespace gpumeter::k8s
