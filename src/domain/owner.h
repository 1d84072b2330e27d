// Who a share of a GPU belongs to: a container, or one of the special owners that make a unit's
// rows add up to its capacity (idle, system, unattributed). Plain values, thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpumeter::domain {

enum class OwnerKind { kContainer, kIdle, kSystem, kUnattributed };

// "container", "idle", "system" or "unattributed": the owner_kind label and the API's kind.
const char* ToString(OwnerKind kind);
// The inverse of ToString (what the store and Prometheus hold); anything else is unattributed.
OwnerKind OwnerKindFromString(std::string_view text);

struct Owner {
  OwnerKind kind = OwnerKind::kUnattributed;
  std::string ns, pod, container;  // kContainer only
  auto operator<=>(const Owner&) const = default;

  static Owner Container(std::string ns, std::string pod, std::string container) {
    return {OwnerKind::kContainer, std::move(ns), std::move(pod), std::move(container)};
  }
};

// The owner of one GPU process as found from /proc: a container, the host (system), or
// unattributed (found running but not placed). Never kIdle.
struct ProcessOwner {
  OwnerKind kind = OwnerKind::kUnattributed;
  std::string ns, pod, container;  // kContainer only
  std::string how;                 // how it was found, or why not (for logs, rules and the API)

  // As an owner of ledger rows: the names only for a container.
  Owner AsOwner() const {
    return kind == OwnerKind::kContainer ? Owner::Container(ns, pod, container)
                                         : Owner{kind, {}, {}, {}};
  }
};

// A container's allocation of a unit, as the kubelet gave it: exclusive 1, time-slicing or MPS
// 1/replicas per replica held, a MIG instance 1.
struct UnitHolder {
  std::string ns, pod, container;
  double share = 1;
  uint32_t replicas_held = 1;

  Owner AsOwner() const { return Owner::Container(ns, pod, container); }
};

}  // namespace gpumeter::domain
