// DRA devices of this node as the DRA drivers publish them in ResourceSlices (resource.k8s.io/v1,
// kubernetes-node.md §6.3): (driver, pool, device) -> the GPU or MIG instance behind it, from the
// device's attributes (uuid, parentUUID, profile, type). Only a pool's newest generation counts.
// Pure; the caller does the HTTP. Bad input is an error that changes nothing. Not thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/error.h"
#include "domain/dra_device.h"

namespace gpumeter::k8s {

class ResourceSliceStore {
 public:
  // Replaces the devices with those of a ResourceSliceList (JSON). Errors name the slice and field.
  Expected<void> ApplyList(std::string_view body);
  const DraDevice* Find(const std::string& driver, const std::string& pool,
                        const std::string& device) const;
  const std::map<DraKey, DraDevice>& devices() const { return devices_; }

 private:
  std::map<DraKey, DraDevice> devices_;
};

}  // namespace gpumeter::k8s
