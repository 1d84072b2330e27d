#include "domain/rule.h"

#include "common/enum_names.h"

namespace gpumeter::domain {
namespace {

constexpr EnumName<Rule> kNames[] = {
    {Rule::kNone, ""},
    {Rule::kProcessMemory, "process usedGpuMemory"},
    {Rule::kProcessMemoryScaled, "process usedGpuMemory, scaled to device used"},
    {Rule::kDriverReservation, "driver reservation (NVML memory v2)"},
    {Rule::kDeviceUsedMinusProcesses, "device used minus process memory"},
    {Rule::kDeviceUsedMinusProcessesNoReservation,
     "device used minus process memory (reservation unknown: NVML v1)"},
    {Rule::kDeviceFreeMemory, "device free memory"},
    {Rule::kMemoryStateUnknown, "device memory state unknown"},
    {Rule::kUnitNotBusyDevice, "unit not busy (device busy fraction)"},
    {Rule::kUnitNotBusySamples, "unit not busy (sum of per-process samples)"},
    {Rule::kActivityUnknown, "unit activity unknown"},
    {Rule::kProcessSmSamples, "per-process SM samples"},
    {Rule::kProcessSmSamplesScaled, "per-process SM samples, scaled to busy"},
    {Rule::kSingleTenant, "single tenant holds the busy time"},
    {Rule::kMpsThreadPercentage, "MPS active-thread percentage (no per-process samples)"},
    {Rule::kBusyNotCovered, "busy time not covered by process data"},
    {Rule::kProcessSmSamplesExtrapolated,
     "per-process SM samples of the part of the interval the driver still held, "
     "standing for all of it (estimate)"},
    {Rule::kSamplesLostBusyUnknown,
     "time whose per-process samples the driver lost, device busy time unknown"},
    {Rule::kEnergyCounterDelta, "energy counter delta"},
    {Rule::kMeanBoardPower, "mean board power x time (energy counter missing or reset)"},
    {Rule::kMigEnergyBySize, "GPU energy by instance size (instance activity unknown)"},
    {Rule::kMigEnergyByMemorySize,
     "GPU energy by instance memory size (activity and slices unknown)"},
    {Rule::kMigEnergyByActivityNoIdle,
     "GPU energy by instance activity x size (idle power not yet estimated)"},
    {Rule::kMigEnergyBySizeNoIdle,
     "GPU energy by instance size (idle power not yet estimated, no activity)"},
    {Rule::kMigIdleBySize, "GPU idle power by instance size, the rest by instance activity x size"},
    {Rule::kMigIdleByMemorySize,
     "GPU idle power by instance memory size, the rest by activity x memory size"},
    {Rule::kMigFreeSlicesIdle, "idle power of MIG slices in no instance"},
    {Rule::kMigFreeSlicesUnknown, "MIG slices in no instance (idle power unknown)"},
    {Rule::kMigIdleBySlicesRestUnknown,
     "GPU idle power by instance slices; the rest unattributed (instance activity unknown)"},
    {Rule::kMigIdleToHolders,
     "the instance's share of GPU idle power, to its holders by held share"},
    {Rule::kGpuLost, "GPU lost: no readings"},
    {Rule::kGpuMissing, "GPU missing from the sample"},
    {Rule::kUnitNotBusyDcgm, "unit not busy (DCGM GR engine activity)"},
    {Rule::kEvenSplitNoSamples, "even split between tenants (no per-process samples)"},
    {Rule::kEnergyProfiledByPower,
     "GPU energy inside a DCGM collection by an activity profile from board power "
     "(estimate)"}};
static_assert(DistinctEnumNames(kNames));

}  // namespace

const char* ToString(Rule rule) { return EnumToString(kNames, rule, ""); }

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
