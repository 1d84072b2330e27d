// `gpumeter probe`: load the real NVML (or the one given), take two samples a second apart and
// print what the driver offers and what it returned, as JSON. The first thing to run on a new
// node or driver; `scripts/device_check.sh` runs it on a GPU machine.
#pragma once

#include <string>
#include "common/duration.h"

namespace gpumeter::app {

struct ProbeOptions {
  std::string nvml_library;  // empty: the driver's soname
  Seconds interval{1};       // between the two samples
};

int RunProbe(const ProbeOptions& options);

}  // namespace gpumeter::app
