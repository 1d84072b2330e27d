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

}  // namespace gpumeter::domain
