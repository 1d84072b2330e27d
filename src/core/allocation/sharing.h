// Decides, for every GPU or MIG instance that the kubelet allocated, how it is shared and who
// holds what share of it — from the evidence, and says which evidence decided (design.md §3,
// kubernetes-node.md §2). Pure.
//
// Mode, strongest evidence first: MIG instance (NVML) > per-GPU configuration (gpumeter config)
// > the device plugin's config file (sharing.mps / sharing.timeSlicing for the resource) > node
// labels (nvidia.com/gpu.sharing-strategy) > replica IDs ("::N"), a ".shared" resource name, or
// several containers holding one UUID (time-slicing) > exclusive.
// Replicas: configuration > plugin config > node label nvidia.com/gpu.replicas > the highest
// replica ID seen + 1 (a lower bound, and said so). A holder's share = distinct replica IDs it
// holds / replicas (at most 1); an exclusive GPU or a MIG instance is 1.
// DRA claim devices are placed through the ResourceSlice's uuid attribute and take the mode of
// what is behind them (a MIG instance, else a GPU); a GPU claim device held by several containers
// (a shared claim) is time-sliced among them, each holding 1 / holders.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "common/error.h"
#include "domain/container_allocation.h"
#include "domain/dra_device.h"
#include "domain/owner.h"
#include "domain/sharing_mode.h"

namespace gpumeter::k8s {

// The device plugin's sharing section (config file, `version: v1`).
struct DevicePluginSharing {
  domain::SharingMode mode =
      domain::SharingMode::kTimeSlicing;                 // kMps when sharing.mps has resources
  std::map<std::string, uint32_t> replicas_by_resource;  // e.g. nvidia.com/gpu -> 4
};
// Errors name the key and the problem (replicas must be >= 2, resources must be non-empty, …).
Expected<DevicePluginSharing> ParseDevicePluginConfig(std::string_view yaml);

struct SharingEvidence {
  std::map<std::string, std::string> node_labels;
  std::optional<DevicePluginSharing> plugin_config;
  struct Configured {
    domain::SharingMode mode;
    uint32_t replicas;
  };
  std::map<std::string, Configured> configured;   // by GPU UUID (operator's configuration)
  std::map<std::string, std::string> mig_parent;  // MIG UUID -> GPU UUID (NVML)
  // Legacy MIG IDs (MIG-GPU-<uuid>/<gi>/<ci>) -> MIG UUID, from NVML's instance IDs.
  std::map<std::string, std::string> legacy_mig;
  std::vector<std::string> extra_gpu_resources;  // configured resource names
  // DRA devices of this node (ResourceSlices): a claim device's GPU or MIG instance.
  std::map<DraKey, DraDevice> dra_devices;
};

struct UnitAllocation {
  std::string unit_uuid;  // GPU-… or MIG-…
  domain::SharingMode mode = domain::SharingMode::kExclusive;
  uint32_t replicas = 1;
  std::string evidence;  // which evidence decided mode and replicas
  std::vector<domain::UnitHolder> holders;
};

struct AllocationResult {
  std::vector<UnitAllocation> units;  // sorted by unit UUID
  std::vector<std::string> problems;  // device IDs that could not be placed, and why
  // (namespace, pod, container) of every container with a device that could not be placed: what
  // it holds is not fully known.
  std::set<std::tuple<std::string, std::string, std::string>> unplaced;
};

AllocationResult BuildAllocations(const std::vector<ContainerAllocation>& containers,
                                  const SharingEvidence& evidence);

}  // namespace gpumeter::k8s
