#include "domain/owner.h"

namespace gpumeter::domain {

const char* ToString(OwnerKind kind) {
  switch (kind) {
    case OwnerKind::kContainer:
      return "container";
    case OwnerKind::kIdle:
      return "idle";
    case OwnerKind::kSystem:
      return "system";
    case OwnerKind::kUnattributed:
      break;
  }
  return "unattributed";
}

OwnerKind OwnerKindFromString(std::string_view text) {
  for (auto k : {OwnerKind::kContainer, OwnerKind::kIdle, OwnerKind::kSystem})
    if (text == ToString(k)) return k;
  return OwnerKind::kUnattributed;
}

}  // namespace gpumeter::domain
