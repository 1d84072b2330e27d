#include "domain/sharing_mode.h"

namespace gpumeter::domain {

const char* ToString(SharingMode mode) {
  switch (mode) {
    case SharingMode::kExclusive:
      return "exclusive";
    case SharingMode::kTimeSlicing:
      return "time-slicing";
    case SharingMode::kMps:
      return "mps";
    case SharingMode::kMig:
      return "mig";
  }
  return "unknown";
}

std::optional<SharingMode> ParseSharingMode(std::string_view text) {
  for (const SharingMode m :
       {SharingMode::kExclusive, SharingMode::kTimeSlicing, SharingMode::kMps, SharingMode::kMig})
    if (text == ToString(m)) return m;
  return std::nullopt;
}

const char* ToStringOr(std::optional<SharingMode> mode, const char* unknown) {
  return mode ? ToString(*mode) : unknown;
}

}  // namespace gpumeter::domain
