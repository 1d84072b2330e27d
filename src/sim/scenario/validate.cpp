// Validate (loader.h): what a scenario must hold beyond its fields' own types and ranges, checked
// across sections (units named, claims published, faults on GPUs that exist).
#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "sim/scenario/loader.h"

namespace gpumeter::scenario {
namespace {

std::string StripReplica(const std::string& id) {
  const auto pos = id.find("::");
  return pos == std::string::npos ? id : id.substr(0, pos);
}

// "" or what is wrong with a container's claims, naming the key: the simulated node publishes
// only gpu.nvidia.com devices, in the pool named after the node.
std::string ValidateClaims(const Scenario& s, const Container& c, const std::string& at) {
  for (size_t k = 0; k < c.claims.size(); ++k) {
    const auto& cl = c.claims[k];
    const std::string here = at + "[" + std::to_string(k) + "]";
    if (cl.driver != kNvidiaDraDriver)
      return here + ".driver: '" + cl.driver + "' publishes no device on this node (only " +
             kNvidiaDraDriver + ")";
    if (cl.pool != s.node_name)
      return here + ".pool: '" + cl.pool + "' is not the node's pool '" + s.node_name + "'";
    if (s.DraUnit(cl.device).empty())
      return here + ".device: '" + cl.device +
             "' is not in the node's ResourceSlices (gpu-<index>, or "
             "gpu-<index>-mig-<profile>-<gi>-<ci> for a MIG instance)";
  }
  return "";
}

}  // namespace

Expected<void> Validate(const Scenario& s) {
  auto fail = [&](const std::string& what) {
    return MakeError(ErrorCode::kInvalidInput, s.source + ": " + what);
  };
  for (size_t i = 0; i < s.gpus.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (s.gpus[i].index == s.gpus[j].index)
        return fail("gpus[" + std::to_string(i) + "].index: duplicate GPU index " +
                    std::to_string(s.gpus[i].index));
      if (s.gpus[i].uuid == s.gpus[j].uuid)
        return fail("gpus[" + std::to_string(i) + "].uuid: duplicate UUID " + s.gpus[i].uuid);
    }
  }
  for (size_t i = 0; i < s.pods.size(); ++i) {
    for (size_t c = 0; c < s.pods[i].containers.size(); ++c) {
      if (auto bad = ValidateClaims(
              s, s.pods[i].containers[c],
              "pods[" + std::to_string(i) + "].containers[" + std::to_string(c) + "].claims");
          !bad.empty())
        return fail(bad);
      for (const auto& id : s.pods[i].containers[c].device_ids) {
        const auto unit = StripReplica(id);
        if (!s.FindUnit(unit).gpu)
          return fail("pods[" + std::to_string(i) + "].containers[" + std::to_string(c) +
                      "].devices: device '" + id + "' is not a GPU or MIG instance of this node");
      }
    }
  }
  for (size_t i = 0; i < s.processes.size(); ++i) {
    const auto& p = s.processes[i];
    const std::string at = "processes[" + std::to_string(i) + "]";
    if (p.container) {
      const Pod* pod = s.FindPod(p.container->ns, p.container->pod);
      const bool found =
          pod && std::any_of(pod->containers.begin(), pod->containers.end(),
                             [&](const Container& c) { return c.name == p.container->container; });
      if (!found) return fail(at + ".container: no container '" + p.container->Key() + "' in pods");
    }
    for (size_t u = 0; u < p.usage.size(); ++u) {
      const auto ref = s.FindUnit(p.usage[u].unit_uuid);
      const std::string uat = at + ".usage[" + std::to_string(u) + "].unit";
      if (!ref.gpu)
        return fail(uat + ": process " + std::to_string(p.pid) + " runs on '" +
                    p.usage[u].unit_uuid + "', which is not a GPU or MIG instance of this node");
      if (ref.gpu->mig_enabled && !ref.mig)
        return fail(uat + ": GPU " + ref.gpu->uuid + " is in MIG mode; name a MIG instance UUID");
      if (p.list == ProcessList::kMps && ref.gpu->sharing.mode != domain::SharingMode::kMps)
        return fail(at + ".list: an MPS client on GPU " + ref.gpu->uuid +
                    ", which is not shared by MPS");
      for (size_t w = 0; w < u; ++w)
        if (p.usage[w].unit_uuid == p.usage[u].unit_uuid) return fail(uat + ": unit listed twice");
    }
    // A PID may be reused, but never by two processes alive at once.
    for (size_t j = 0; j < i; ++j) {
      const auto& q = s.processes[j];
      if (q.pid != p.pid) continue;
      const double p_end = p.end_s.value_or(1e300), q_end = q.end_s.value_or(1e300);
      if (p.start_s < q_end && q.start_s < p_end)
        return fail(at + ".pid: pid " + std::to_string(p.pid) +
                    " is alive twice at once (see processes[" + std::to_string(j) + "])");
    }
  }
  // The driver's table holds 64 retired pages per GPU and cause: the page-retire events add up.
  std::map<std::pair<uint32_t, bool>, uint64_t> retired;
  for (size_t i = 0; i < s.faults.size(); ++i) {
    const auto& f = s.faults[i];
    if (f.gpu_index && !s.FindGpuByIndex(*f.gpu_index))
      return fail("faults[" + std::to_string(i) + "].gpu: no GPU with index " +
                  std::to_string(*f.gpu_index));
    if (f.kind == FaultKind::kPageRetire && f.gpu_index &&
        (retired[{*f.gpu_index, f.uncorrectable}] += f.count) > 64)
      return fail("faults[" + std::to_string(i) + "].pages: more than 64 " +
                  (f.uncorrectable ? "double-bit" : "single-bit") + " pages retired on GPU " +
                  std::to_string(*f.gpu_index) + " in all (the driver's table holds 64)");
  }
  return {};
}

}  // namespace gpumeter::scenario
