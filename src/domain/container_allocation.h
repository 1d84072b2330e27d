// What the kubelet allocated to each container, as plain values (the PodResources client fills
// them; the demo and tests build them by hand). Device IDs are as the device plugin named them.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpumeter::k8s {

struct DeviceAllocation {
  std::string resource_name;            // e.g. nvidia.com/gpu
  std::vector<std::string> device_ids;  // parsed by core/allocation/device_id.h
  bool operator==(const DeviceAllocation&) const = default;
};

// One device of a DRA claim, identified by (driver, pool, device); CDI names are not used (the
// kubelet may repeat them across devices).
struct ClaimDevice {
  std::string claim_name, claim_namespace;
  std::string driver, pool, device;
  std::optional<std::string> share_id;
  bool operator==(const ClaimDevice&) const = default;
};

struct ContainerAllocation {
  std::string ns, pod, container;
  std::vector<DeviceAllocation> devices;
  std::vector<ClaimDevice> claim_devices;
  bool operator==(const ContainerAllocation&) const = default;
};

}  // namespace gpumeter::k8s
