// The rule that produced a figure of a ledger row (docs/attribution.md), so every number can be
// explained. An enum in the core; its text only at the edges (metrics, JSON, tables), where
// ToString gives the wording. Code that must know what a rule means asks the predicates below,
// never the wording.
#pragma once

#include <cstdint>

namespace gpumeter::domain {

enum class Rule : uint8_t {
  kNone,  // no figure, or not yet attributed
  // Memory.
  kProcessMemory,
  kProcessMemoryScaled,
  kDriverReservation,
  kDeviceUsedMinusProcesses,
  kDeviceUsedMinusProcessesNoReservation,
  kDeviceFreeMemory,
  kMemoryStateUnknown,
  // Compute.
  kUnitNotBusyDevice,
  kUnitNotBusySamples,
  kActivityUnknown,
  kProcessSmSamples,
  kProcessSmSamplesScaled,
  kSingleTenant,
  kMpsThreadPercentage,
  kBusyNotCovered,
  kProcessSmSamplesExtrapolated,  // samples of part of the interval (the driver lost the rest)
  kSamplesLostBusyUnknown,        // the lost part, where the device's busy time is unknown
  // Energy.
  kEnergyCounterDelta,
  kMeanBoardPower,
  kMigEnergyBySize,
  kMigEnergyByMemorySize,
  kMigEnergyByActivityNoIdle,
  kMigEnergyBySizeNoIdle,
  kMigIdleBySize,
  kMigIdleByMemorySize,
  kMigFreeSlicesIdle,
  kMigFreeSlicesUnknown,
  // Activity unknown but idle power known: idle power by slices, the rest unattributed (the
  // unit's rule); and the idle part of an instance placed on its holders (their rows' rule).
  kMigIdleBySlicesRestUnknown,
  kMigIdleToHolders,
  // A unit that gave no readings in the interval (memory and compute are unattributed).
  kGpuLost,
  kGpuMissing,
  // Compute from DCGM's GR engine activity (MIG instances and GPUs NVML gives no activity for).
  kUnitNotBusyDcgm,
  kEvenSplitNoSamples,  // tenants of a unit, nothing per process: an even split (an estimate)
  // A DCGM-fed unit's energy inside a collection at the power its activity profile drew (an
  // estimate, with Row::energy_bound_joules; core/attribution/collection_profile.h).
  kEnergyProfiledByPower,
};

// The wording shown in /api/v1 and tables ("" for kNone). A static string.
const char* ToString(Rule rule);

// Memory in use that no process accounts for (device used minus the processes' memory).
bool IsMemoryRemainder(Rule rule);
// A compute split estimated without per-process samples for the whole interval (MPS thread
// share, an even split, or samples of part of it standing for all).
bool IsComputeEstimate(Rule rule);
// An energy split estimated where the power drawn in each row's time is not measured (a DCGM
// collection's activity profile from board power): Row::energy_bound_joules bounds it.
bool IsEnergyEstimate(Rule rule);

}  // namespace gpumeter::domain
