// Device IDs as the kubelet's PodResources API reports them (kubernetes-node.md §2.3, §2.6), and
// GPU resource names. Pure parsing; no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace gpumeter::k8s {

enum class DeviceIdKind {
  kGpuUuid,    // GPU-<uuid>
  kMigUuid,    // MIG-<uuid> (R470+)
  kMigLegacy,  // MIG-GPU-<gpu uuid>/<gi>/<ci> (R450/R460)
  kIndex,      // "<i>" or "<gpu>:<mig>" (deviceIDStrategy=index; env only, tolerated)
  kGke,        // nvidia<N>[/gi<G>][/vgpu<V>] (GKE device plugin)
};

struct DeviceId {
  DeviceIdKind kind = DeviceIdKind::kGpuUuid;
  std::string uuid;  // GPU-… or MIG-… (kGpuUuid, kMigUuid; kMigLegacy: the parent GPU)
  std::optional<uint32_t> gpu_index;  // kIndex, kGke
  std::optional<uint32_t> gpu_instance,
      compute_instance;             // kMigLegacy (gi, ci), kIndex/kGke (mig, gi)
  std::optional<uint32_t> replica;  // "::N" (device-plugin replicas) or "/vgpuN" (GKE)
};

// Parses one device ID. Errors name the ID and what is wrong with it.
Expected<DeviceId> ParseDeviceId(std::string_view id);

// The key of the physical unit a parsed ID names: the UUID, "GPU-…/gi/ci" for the legacy MIG
// form, or "index:<i>[:<mig>]" / "gke:<n>[/gi<g>]" for index-based IDs.
std::string UnitKey(const DeviceId& id);

// GPU resource names: nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-<profile>[.shared],
// plus any in `extra` (configured). Exact match for names in `extra`.
bool IsGpuResource(std::string_view resource_name, const std::vector<std::string>& extra = {});
// True for names the device plugin advertises when a resource is shared (renameByDefault).
bool IsSharedResourceName(std::string_view resource_name);
// "nvidia.com/mig-1g.10gb[.shared]" -> "1g.10gb"; nullopt for other names.
std::optional<std::string> MigProfileOfResource(std::string_view resource_name);

}  // namespace gpumeter::k8s
