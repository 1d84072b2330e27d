// A DRA device of this node as its driver publishes it in a ResourceSlice (resource.k8s.io/v1,
// kubernetes-node.md §6.3): the GPU or MIG instance behind (driver, pool, device). Plain values:
// sources/slices reads them, core/allocation places claim devices through them.
#pragma once

#include <optional>
#include <string>
#include <tuple>

namespace gpumeter::k8s {

struct DraDevice {
  std::string driver, pool, device;
  std::string type;                 // attribute "type": "gpu", "mig", …
  std::optional<std::string> uuid;  // GPU-… or MIG-…; absent for dynamic MIG before prepare
  std::optional<std::string> parent_uuid;  // MIG: the GPU
  std::optional<std::string> profile;      // MIG: e.g. "1g.10gb"
  bool operator==(const DraDevice&) const = default;
};

using DraKey = std::tuple<std::string, std::string, std::string>;  // driver, pool, device

}  // namespace gpumeter::k8s
