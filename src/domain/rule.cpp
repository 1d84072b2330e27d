#include "domain/rule.h"

namespace gpumeter::domain {

const char* ToString(Rule rule) {
  switch (rule) {
    case Rule::kNone:
      return "";
    case Rule::kProcessMemory:
      return "process usedGpuMemory";
    case Rule::kProcessMemoryScaled:
      return "process usedGpuMemory, scaled to device used";
    case Rule::kDriverReservation:
      return "driver reservation (NVML memory v2)";
    case Rule::kDeviceUsedMinusProcesses:
      return "device used minus process memory";
    case Rule::kDeviceUsedMinusProcessesNoReservation:
      return "device used minus process memory (reservation unknown: NVML v1)";
    case Rule::kDeviceFreeMemory:
      return "device free memory";
    case Rule::kMemoryStateUnknown:
      return "device memory state unknown";
    case Rule::kUnitNotBusyDevice:
      return "unit not busy (device busy fraction)";
    case Rule::kUnitNotBusySamples:
      return "unit not busy (sum of per-process samples)";
    case Rule::kActivityUnknown:
      return "unit activity unknown";
    case Rule::kProcessSmSamples:
      return "per-process SM samples";
    case Rule::kProcessSmSamplesScaled:
      return "per-process SM samples, scaled to busy";
    case Rule::kSingleTenant:
      return "single tenant holds the busy time";
    case Rule::kMpsThreadPercentage:
      return "MPS active-thread percentage (no per-process samples)";
    case Rule::kBusyNotCovered:
      return "busy time not covered by process data";
    case Rule::kProcessSmSamplesExtrapolated:
      return "per-process SM samples of the part of the interval the driver still held, "
             "standing for all of it (estimate)";
    case Rule::kSamplesLostBusyUnknown:
      return "time whose per-process samples the driver lost, device busy time unknown";
    case Rule::kEnergyCounterDelta:
      return "energy counter delta";
    case Rule::kMeanBoardPower:
      return "mean board power x time (energy counter missing or reset)";
    case Rule::kMigEnergyBySize:
      return "GPU energy by instance size (instance activity unknown)";
    case Rule::kMigEnergyByMemorySize:
      return "GPU energy by instance memory size (activity and slices unknown)";
    case Rule::kMigEnergyByActivityNoIdle:
      return "GPU energy by instance activity x size (idle power not yet estimated)";
    case Rule::kMigEnergyBySizeNoIdle:
      return "GPU energy by instance size (idle power not yet estimated, no activity)";
    case Rule::kMigIdleBySize:
      return "GPU idle power by instance size, the rest by instance activity x size";
    case Rule::kMigIdleByMemorySize:
      return "GPU idle power by instance memory size, the rest by activity x memory size";
    case Rule::kMigFreeSlicesIdle:
      return "idle power of MIG slices in no instance";
    case Rule::kMigFreeSlicesUnknown:
      return "MIG slices in no instance (idle power unknown)";
    case Rule::kMigIdleBySlicesRestUnknown:
      return "GPU idle power by instance slices; the rest unattributed (instance activity unknown)";
    case Rule::kMigIdleToHolders:
      return "the instance's share of GPU idle power, to its holders by held share";
    case Rule::kGpuLost:
      return "GPU lost: no readings";
    case Rule::kGpuMissing:
      return "GPU missing from the sample";
    case Rule::kUnitNotBusyDcgm:
      return "unit not busy (DCGM GR engine activity)";
    case Rule::kEvenSplitNoSamples:
      return "even split between tenants (no per-process samples)";
    case Rule::kEnergyProfiledByPower:
      return "GPU energy inside a DCGM collection by an activity profile from board power "
             "(estimate)";
  }
  return "";
}

bool IsMemoryRemainder(Rule rule) {
  return rule == Rule::kDeviceUsedMinusProcesses ||
         rule == Rule::kDeviceUsedMinusProcessesNoReservation;
}

bool IsEnergyEstimate(Rule rule) { return rule == Rule::kEnergyProfiledByPower; }

bool IsComputeEstimate(Rule rule) {
  return rule == Rule::kMpsThreadPercentage || rule == Rule::kProcessSmSamplesExtrapolated ||
         rule == Rule::kEvenSplitNoSamples;
}

}  // namespace gpumeter::domain
