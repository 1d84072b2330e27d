#include "domain/sharing_mode.h"

#include "common/enum_names.h"

namespace gpumeter::domain {
namespace {

constexpr EnumName<SharingMode> kNames[] = {{SharingMode::kExclusive, "exclusive"},
                                            {SharingMode::kTimeSlicing, "time-slicing"},
                                            {SharingMode::kMps, "mps"},
                                            {SharingMode::kMig, "mig"}};
static_assert(DistinctEnumNames(kNames));

}  // namespace

const char* ToString(SharingMode mode) { return EnumToString(kNames, mode, "unknown"); }

std::optional<SharingMode> ParseSharingMode(std::string_view text) {
  return EnumFromString(kNames, text);
}

const char* ToStringOr(std::optional<SharingMode> mode, const char* unknown) {
  return mode ? ToString(*mode) : unknown;
}

}  // namespace gpumeter::domain
