// Ground truth of a scenario: what each process really does at time t, and exact integrals.
// The fake NVML derives everything it reports from these functions, and the accuracy harness
// scores attribution against them. Pure functions; t is seconds since the scenario starts.
//
// Model: a unit's busy fraction is min(1, Σ duty of its live processes). When the sum exceeds 1,
// the scheduler (time-slicing or MPS) gives each process duty / Σ duty of the unit. Memory busy
// time follows the time a process gets: its memory share is its memory duty scaled as its SM duty
// was, and scaled again so that the unit's shares add up to at most 1 (the memory's whole
// bandwidth). The simulated driver reports that one number both as memory-busy time (memUtil,
// utilization.memory) and as a share of peak bandwidth (GPM DRAM_BW_UTIL): on real GPUs they
// differ, and no source converts one into the other (docs/attribution.md, definitions of use).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/scenario/model.h"

namespace gpumeter::scenario {

bool IsAlive(const Process& p, double t_s);
// The process with this PID alive at t (PIDs are reused, never by two live processes), or null.
const Process* LiveProcess(const Scenario& s, uint32_t pid, double t_s);
double DutyAt(const Process& p, const DeviceUsage& u, double t_s);  // 0 when not alive
// The memory duty asked for at t (half the SM duty where the scenario gives none); 0 when not
// alive.
double MemoryDutyAt(const Process& p, const DeviceUsage& u, double t_s);
uint64_t MemoryAt(const Process& p, const DeviceUsage& u, double t_s);  // 0 when not alive

struct ProcessTruth {
  const Process* process = nullptr;
  const DeviceUsage* usage = nullptr;
  double duty = 0;          // what the process asks for, [0, 1]
  double sm_share = 0;      // fraction of the unit's time it actually holds, [0, 1]
  double memory_share = 0;  // fraction of the unit's memory bandwidth it actually uses, [0, 1]
  uint64_t memory_bytes = 0;
};

struct UnitTruth {
  double busy = 0;         // [0, 1]
  double memory_busy = 0;  // Σ memory_share, [0, 1]
  uint64_t process_memory_bytes = 0;
  std::vector<ProcessTruth> processes;  // live processes on this unit, in scenario order
};

// Truth for one unit (a GPU UUID, or a MIG UUID) at t.
UnitTruth UnitAt(const Scenario& s, const std::string& unit_uuid, double t_s);

// Busy fraction of a physical GPU at t; on MIG GPUs the slice-weighted mean of its instances.
double GpuBusyAt(const Scenario& s, const Gpu& g, double t_s);
double GpuPowerWattsAt(const Scenario& s, const Gpu& g, double t_s);

// The times in [t0_s, t1_s] where a unit's truth may change (a process starts, ends or changes
// duty), sorted, unique, with both ends: between two of them busy and shares are constant.
std::vector<double> UnitChangeTimes(const Scenario& s, const std::string& unit_uuid, double t0_s,
                                    double t1_s);
// ∫ busy dt over [t0, t1] for a unit (exact: busy is piecewise constant).
double UnitBusySeconds(const Scenario& s, const std::string& unit_uuid, double t0_s, double t1_s);
// ∫ memory_busy dt over [t0, t1] for a unit, and for a physical GPU (slice-weighted on MIG GPUs).
double UnitMemoryBusySeconds(const Scenario& s, const std::string& unit_uuid, double t0_s,
                             double t1_s);
double GpuMemoryBusySeconds(const Scenario& s, const Gpu& g, double t0_s, double t1_s);
// ∫ busy dt over [t0, t1] for a physical GPU (slice-weighted on MIG GPUs).
double GpuBusySeconds(const Scenario& s, const Gpu& g, double t0_s, double t1_s);
// The energy counter at t: energy_start_joules + ∫0..t P dt.
double GpuEnergyJoulesAt(const Scenario& s, const Gpu& g, double t_s);

}  // namespace gpumeter::scenario
