// `gpumeter probe`: load the real NVML (or the one given), take samples an interval apart (two by
// default, more to watch a workload) and print what the driver offers and returned, as JSON. The
// first thing to run on a new node or driver; `scripts/device_check.sh` runs it on a GPU machine.
#pragma once

#include <string>
#include "common/duration.h"

namespace gpumeter::app {

struct ProbeOptions {
  std::string nvml_library;  // empty: the driver's soname
  Seconds interval{1};       // between consecutive samples
  int samples = 2;           // how many; the second is the first with GPM and utilization windows
};

int RunProbe(const ProbeOptions& options);

}  // namespace gpumeter::app
