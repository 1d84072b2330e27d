// The attribution core, per unit and interval: who held how much of a GPU (or MIG instance).
// Pure: plain values in, a ledger out; no clock, I/O or globals. Conservation is enforced: for
// memory and compute the rows of a unit add up to its capacity × interval, and no row is negative.
// Rules and worked examples: docs/attribution.md.
//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/memory_signal.h"
#include "domain/node_snapshot.h"
#include "domain/owner.h"
#include "domain/rule.h"
#include "domain/sharing_mode.h"

namespace gpumeter::attribution {

using domain::MemorySignal;
using domain::Owner;
using domain::OwnerKind;
using domain::Rule;
using domain::SharingMode;
using domain::ToString;

// A container's allocation of a unit: the share of it the kubelet gave the container
// (exclusive 1, time-slicing/MPS 1/replicas, a MIG instance 1).
using Holding = domain::Holding;

struct ProcessObservation {
  uint32_t pid = 0;
  std::optional<Owner> owner;                 // unknown container: counted as unattributed
  std::optional<uint64_t> memory_bytes;       // NVML usedGpuMemory
  std::optional<double> sm_fraction;          // mean per-process SM share over the interval, [0, 1]
  std::optional<double> mps_thread_fraction;  // CUDA_MPS_ACTIVE_THREAD_PERCENTAGE / 100
  bool sm_extrapolated = false;  // sm_fraction from part of the interval (samples were lost)
  // Mean per-process memory-busy share over the interval (memUtil), [0, 1]; unknown without
  // per-process samples. Extrapolated (the covered part's share standing for the samples the
  // driver lost) where memory_busy_extrapolated says.
  std::optional<double> memory_busy_fraction = std::nullopt;
  bool memory_busy_extrapolated = false;
  // Mean board power over the driver periods this process ran in, weighted by its activity in
  // each (power samples beside per-process samples), watts; unknown where either is missing.
  std::optional<double> busy_watts = std::nullopt;
  // The MPS control daemon's server (nvidia-cuda-mps-server, not a process of a container that
  // holds the unit): infrastructure on every MPS GPU. Its memory is the platform's (its owner is
  // `system`); it takes no share of busy time and never stops a thread-percentage split.
  bool mps_server = false;
};

struct UnitObservation {
  std::string uuid;
  SharingMode mode = SharingMode::kExclusive;
  uint64_t memory_total_bytes = 0;
  std::optional<uint64_t> memory_used_bytes;      // excluding the reservation when it is known
  std::optional<uint64_t> memory_reserved_bytes;  // driver/firmware (NVML v2 only)
  std::optional<double> busy_fraction;            // device (or GPM instance) activity, [0, 1]
  bool busy_from_dcgm = false;                    // busy_fraction is DCGM's, not NVML's
  // busy_fraction is one driver period's reading (utilization.gpu without GPM), not the
  // interval's mean: it cannot say how much ran while per-process samples were lost.
  bool busy_is_instant = false;
  // busy_fraction is the per-process samples' own over the window (every PID the driver sampled,
  // listed or not), in place of utilization.gpu's one period (observe.cpp SamplesBusyFraction).
  bool busy_from_samples = false;
  std::vector<ProcessObservation> processes;
  // Memory busy time of the unit over the interval, [0, 1], of the kind `memory_signal` says;
  // unknown (nullopt) where the processes' own memory-busy shares are the signal (their sum is
  // the unit's) or where there is none (memory_signal kNone).
  std::optional<double> memory_busy_fraction;
  bool memory_busy_is_instant = false;  // utilization.memory: one driver period, not the mean
  MemorySignal memory_signal = MemorySignal::kNone;
  std::optional<double> energy_joules;  // the unit's energy over the interval
  Rule energy_rule = Rule::kNone;       // how energy_joules was obtained
  // Set when the unit's activity is unknown but the part of energy_joules that is idle power is
  // known (a MIG instance's slices' share of the GPU's idle power): that part goes to the unit's
  // holders by the share they hold (the rest of the share's to `idle`), the remainder stays
  // unattributed with the compute it follows. Joules, ≤ energy_joules.
  std::optional<double> idle_energy_joules;
  std::vector<Holding> holders;  // allocations, from the kubelet
  // Seconds of the interval whose per-process samples the driver no longer held.
  double samples_uncovered_seconds = 0;
  // The driver's per-process sample period, seconds; unknown before two distinct stamps.
  std::optional<double> samples_period_seconds;
  // Mean board power over the interval's sampled periods weighted by the part of each that
  // nobody was busy, watts: idle time's power, as ProcessObservation::busy_watts is busy time's.
  // With them, energy follows each row's time at the power drawn in it (docs/attribution.md).
  std::optional<double> idle_time_watts;
  // Mean power of the unit's busy time, watts, where it is known for the unit but not per
  // process (a DCGM-fed unit's activity profile inside a collection, collection_profile.h): the
  // power of every row with time but idle's when no process has its own busy_watts.
  std::optional<double> busy_time_watts;
  // Where the unit's energy split between busy and idle time is an estimate (energy_rule
  // kEnergyProfiledByPower), the truth of its busy time's energy lies within ± this, joules:
  // shared by the busy rows by compute, and idle's as the complement (Row::energy_bound_joules).
  double energy_bound_joules = 0;
  // Set when the unit gave no readings this interval (e.g. GPU lost): the rule of its
  // unattributed memory and compute rows.
  Rule unknown_reason = Rule::kNone;
};

struct Row {
  Owner owner;
  double memory_byte_seconds = 0;
  double compute_seconds = 0;          // seconds of the unit's time: 1 compute-second per second
  double energy_joules = 0;            // 0 in every row when UnitLedger::energy_joules is unknown
  double requested_share_seconds = 0;  // Σ share held × seconds (a request, not usage)
  // Seconds of the interval in which this owner's compute is unknown: it ran a process on the
  // unit (or held it when the unit gave no readings) while the unit's activity, or which process
  // was busy, was unknown. compute_seconds is then a lower bound, compute_seconds +
  // compute_unknown_seconds an upper one. Outside conservation: that time itself is
  // unattributed's compute.
  double compute_unknown_seconds = 0;
  // Where compute_seconds is an estimate (domain::IsComputeEstimate of compute_rule, or of a rule
  // it was merged with), the truth lies within compute_seconds ± this: what the signals the split
  // had leave open (docs/attribution.md, "Bounds"). 0 where compute is measured. Seconds; summed
  // over intervals and processes, so a sum's bound is the sum of the bounds.
  double compute_bound_seconds = 0;
  // Memory busy time, a second measure of use (UnitLedger::memory_signal says which kind): seconds
  // of the unit's memory kept busy, split exactly as compute is (the same rules, conservation,
  // unknown and bound, from the memory signal instead of the SM one): the rows add up to the
  // unit's seconds, idle's being the time nobody used the memory.
  double memory_busy_seconds = 0;
  double memory_busy_unknown_seconds = 0;
  double memory_busy_bound_seconds = 0;
  // Where energy_joules is an estimate (domain::IsEnergyEstimate of energy_rule, or of a rule it
  // was merged with), the truth lies within energy_joules ± this. Joules; summed as
  // compute_bound_seconds is. 0 where energy follows measured time and power.
  double energy_bound_joules = 0;
  // Which rule produced each figure (the unit's sharing mode is in UnitLedger).
  Rule memory_rule = Rule::kNone;
  Rule compute_rule = Rule::kNone;
  Rule energy_rule = Rule::kNone;
  Rule memory_busy_rule = Rule::kNone;  // a compute rule, applied to the memory signal
};

struct UnitLedger {
  std::string uuid;
  SharingMode mode = SharingMode::kExclusive;
  double seconds = 0;
  double memory_capacity_byte_seconds = 0;
  std::optional<double> energy_joules;   // the unit's energy; unknown: no energy in any row
  double samples_uncovered_seconds = 0;  // as in UnitObservation
  // The signal of the rows' memory_busy_seconds (kNone: unknown, all of it unattributed's); of
  // the later interval after MergeInto.
  MemorySignal memory_signal = MemorySignal::kNone;
  std::vector<Row> rows;  // one per owner, sorted by owner
  // Seconds between the end of the time this ledger covers and the end of the interval that
  // booked it: 0, except for a GPU whose activity comes from DCGM, whose intervals are held
  // until the collection that covers them is seen (Accountant::Release).
  double late_seconds = 0;
};

// Attributes one unit over an interval of `seconds` (> 0).
UnitLedger AttributeUnit(const UnitObservation& unit, double seconds);

// Adds `later`, the same unit's ledger of the interval after `into`'s, into `into` (callers merge
// only ledgers whose memory busy time came from one signal: its kinds do not add up): seconds,
// capacity, energy (known only while both are), rows by owner (figures summed, rules the later
// ones); late_seconds becomes later's. Conservation holds for the sum as for each.
void MergeInto(UnitLedger& into, const UnitLedger& later);

}  // namespace gpumeter::attribution
