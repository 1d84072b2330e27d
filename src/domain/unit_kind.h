// What a unit of allocation and accounting is: a whole GPU, a MIG instance of one, or the slices
// of a MIG-enabled GPU that are in no instance (one unit under the GPU's UUID, which holds their
// idle power and memory). Code decides on the kind; outputs (metrics, the JSON API, the store,
// reports) carry it only as the unit's mig_profile label, written and read here alone. Pure.
#pragma once

#include <string>
#include <string_view>

namespace gpumeter::domain {

enum class UnitKind { kGpu, kMigInstance, kUnpartitioned };

// The label of the slices in no instance, where a MIG instance's label is its profile.
inline constexpr std::string_view kUnpartitionedLabel = "unpartitioned";

// A unit's mig_profile label: "" for a whole GPU, `profile` (e.g. "3g.71gb") for a MIG instance,
// "unpartitioned" for the slices in no instance.
inline std::string MigProfileLabel(UnitKind kind, std::string_view profile) {
  switch (kind) {
    case UnitKind::kGpu:
      return "";
    case UnitKind::kMigInstance:
      return std::string(profile);
    case UnitKind::kUnpartitioned:
      return std::string(kUnpartitionedLabel);
  }
  return "";
}

// The kind a label read back stands for (what a store, a reply or a series keeps of a unit is its
// label): the inverse of MigProfileLabel.
inline UnitKind UnitKindOfLabel(std::string_view mig_profile) {
  if (mig_profile.empty()) return UnitKind::kGpu;
  return mig_profile == kUnpartitionedLabel ? UnitKind::kUnpartitioned : UnitKind::kMigInstance;
}

}  // namespace gpumeter::domain
