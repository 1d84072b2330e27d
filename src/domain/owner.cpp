#include "domain/owner.h"

#include "common/enum_names.h"

namespace gpumeter::domain {
namespace {

constexpr EnumName<OwnerKind> kNames[] = {{OwnerKind::kContainer, "container"},
                                          {OwnerKind::kIdle, "idle"},
                                          {OwnerKind::kSystem, "system"},
                                          {OwnerKind::kUnattributed, "unattributed"}};
static_assert(DistinctEnumNames(kNames));

}  // namespace

const char* ToString(OwnerKind kind) { return EnumToString(kNames, kind, "unattributed"); }

OwnerKind OwnerKindFromString(std::string_view text) {
  return EnumFromString(kNames, text).value_or(OwnerKind::kUnattributed);
}

}  // namespace gpumeter::domain
