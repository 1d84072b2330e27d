// Turns one NVML sample of a device into the per-unit observations the attribution core takes:
// the GPU itself, or each MIG instance. Pure. The per-process SM share over the sample's window
// is estimated from the driver's samples: NVML reports one sample per busy process per driver
// period, so share = Σ smUtil / 100 / (periods in the window), with the period the NVML source
// measured (DeviceSample::process_util_period_us).
#pragma once

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "core/attribution/attribute.h"
#include "domain/gpu_types.h"
#include "domain/node_snapshot.h"

namespace gpumeter::attribution {

// The process that held a PID at an interval's start when another holds it at the end: the PID
// was reused within the interval (Linux hands out PIDs again once they wrap).
struct EarlierProcess {
  std::optional<Owner> owner;  // unknown: unattributed
  // When the process holding the PID now started, Unix µs (its /proc start time on the boot
  // clock); nullopt when unknown. Splits the PID's SM samples between the two.
  std::optional<uint64_t> successor_start_us;
};

using ProcessStart = domain::ProcessStart;

// What the node said about the processes and units of one interval: the snapshot of the pass
// that ends it and of the one that starts it. Owners come from the end, or for a PID seen at the
// start only (it exited within the interval), from the start, as its PID may now name nothing or
// another process; a PID whose start time differs between the two was reused (EarlierOf). Units'
// modes and holders, and MPS thread shares, are the end's. Holds the snapshots (shared, never
// changed), so it can be kept with an interval held for DCGM. Cheap to copy; thread-compatible.
class IntervalFacts {
 public:
  IntervalFacts() = default;  // nothing known: owners unknown, units exclusive and unheld
  IntervalFacts(std::shared_ptr<const domain::NodeSnapshot> end,
                std::shared_ptr<const domain::NodeSnapshot> start);

  std::optional<Owner> OwnerOf(uint32_t pid) const;  // nullopt: unattributed
  std::optional<double> MpsThreadFraction(uint32_t pid) const;
  // Set when the process holding a PID at the interval's start is not the one holding it at the
  // end (both starts known, and different); nullopt otherwise.
  std::optional<EarlierProcess> EarlierOf(uint32_t pid) const;
  // The three above in one lookup of each snapshot (what Observe needs of every process).
  struct Process {
    std::optional<Owner> owner;
    std::optional<double> mps_thread_fraction;
    std::optional<EarlierProcess> earlier;
    // The end knows the PID only from a drain between the passes (ProcessFact::listed false):
    // the process holding it at the end ran between them, unlisted.
    bool met_between = false;
    bool mps_server_name = false;  // its command is nvidia-cuda-mps-server
  };
  Process ProcessOf(uint32_t pid) const;
  // Where a walk over PIDs in ascending order is in each snapshot's index: each lookup of the
  // walk starts where the last one ended (ProcessOf(pid, cursor)), a few steps, not a search.
  struct Cursor {
    size_t end = 0, start = 0;
  };
  Process ProcessOf(uint32_t pid, Cursor& cursor) const;   // PIDs in ascending order per cursor
  SharingMode ModeOf(const std::string& unit_uuid) const;  // exclusive where not listed
  std::vector<Holding> HoldersOf(const std::string& unit_uuid) const;

  const domain::NodeSnapshot* end() const { return end_.get(); }

 private:
  // The PIDs of each snapshot's processes, in their order: a compact array to search. A
  // ProcessFact is a few hundred bytes, and a search over them missed the cache at every step.
  struct Index {
    std::vector<uint32_t> end, start;
  };
  static const domain::ProcessFact* Find(const domain::NodeSnapshot* s,
                                         const std::vector<uint32_t>& pids, uint32_t pid);
  // The same from `from` on (every PID before it is below `pid`), leaving `from` at the place.
  static const domain::ProcessFact* FindFrom(const domain::NodeSnapshot* s,
                                             const std::vector<uint32_t>& pids, uint32_t pid,
                                             size_t& from);
  Process Of(const domain::ProcessFact* now, const domain::ProcessFact* before) const;
  const domain::ProcessFact* AtEnd(uint32_t pid) const;
  const domain::ProcessFact* AtStart(uint32_t pid) const;

  std::shared_ptr<const domain::NodeSnapshot> end_, start_;
  std::shared_ptr<const Index> index_;  // null when default-constructed
};

// Observations for the interval that ends with `device`. With the `previous` sample of the same
// device (null on the first pass), memory is the mean of the readings at both ends: a process
// seen at one end only held its memory for part of the interval (half, as the best estimate),
// and linear growth integrates exactly. Energy of a whole GPU is the energy counter's delta over
// the interval (`seconds` long); where the counter is missing or went backwards (driver reload),
// the mean of the two power readings × `seconds`; else unknown. On a MIG GPU that energy is split
// over the instances: idle power × `seconds` by instance size (compute slices), the rest by
// activity × size; without an idle-power estimate all of it by activity × size; without activity
// but with idle power, idle power by slices (the instance's idle_energy_joules, which goes to its
// holders) and the rest by size (unattributed within the instance); with neither, by size alone.
// Each instance's observation names the rule. `idle_watts`: the GPU's idle power (IdlePowerFit,
// or configured); unknown: nullopt.
std::vector<UnitObservation> Observe(const gpu::DeviceSample* previous,
                                     const gpu::DeviceSample& device, double seconds,
                                     const IntervalFacts& facts,
                                     std::optional<double> idle_watts = std::nullopt);

// Units of a GPU that gave no readings this interval (lost, or missing from the sample), named
// from its `last_good` sample: capacity known, everything else unknown, with `reason` as rule.
std::vector<UnitObservation> ObserveUnavailable(const gpu::DeviceSample& last_good, Rule reason,
                                                const IntervalFacts& facts);

// The GPU's energy over the interval and the rule that gave it (see Observe); unknown: nullopt.
std::optional<double> GpuEnergyJoules(const gpu::DeviceSample* previous,
                                      const gpu::DeviceSample& device, double seconds, Rule* rule);

// Busy fraction of a whole GPU over the sample window, [0, 1]: GPM SM activity (it covers the same
// window as the per-process samples), else utilization.gpu (the driver's last period only), else
// DCGM's GR engine activity where the pipeline set it.
std::optional<double> BusyFraction(const gpu::DeviceSample& device);

// Activity of a MIG GPU instance over the window, [0, 1]: GPM, else DCGM GR engine activity.
std::optional<double> InstanceActivity(const gpu::MigInstanceSample& instance);

// Slice-weighted activity (GPM or DCGM, as InstanceActivity) of a MIG GPU over the sample window,
// [0, 1]: Σ activity × slices / total slices. Unknown unless every instance's activity and slices
// are known.
std::optional<double> MigGpuActivity(const gpu::DeviceSample& device);

// Mean SM share of each PID over the device's sample window, [0, 1], as (PID, share) sorted by
// PID; empty when the driver gives no per-process utilization. Exposed for tests.
using SmShareTable = std::vector<std::pair<uint32_t, double>>;
SmShareTable SmShares(const gpu::DeviceSample& device);

// Mean memory-busy share (memUtil) of each PID over the window, as SmShares; where the driver's
// buffer lost the window's start, the covered part's shares stand for all of it
// (MemorySharesExtrapolated), whatever is known of the device's busy time.
SmShareTable MemoryBusyShares(const gpu::DeviceSample& device);
// Both tables from one pass over the samples (what Observe takes for a whole GPU).
std::pair<SmShareTable, SmShareTable> SmAndMemoryBusyShares(const gpu::DeviceSample& device);
bool MemorySharesExtrapolated(const gpu::DeviceSample& device);

// True when SmShares stood the covered part of the window for all of it: the driver's buffer lost
// the window's start (process_util_uncovered_us) and the device's busy time is known.
bool SmSharesExtrapolated(const gpu::DeviceSample& device);

// The GPU's busy fraction over the sample window from its per-process samples, [0, 1]: per driver
// period, the sum of every sampled PID's smUtil (listed or not: the driver samples every process
// that ran), at most 100 %, over the window's periods. Unknown unless the samples cover the whole
// window on a known period grid, and under MPS (clients' kernels run at once, so their shares add
// up past the busy time).
std::optional<double> SamplesBusyFraction(const gpu::DeviceSample& device, bool mps);

// The share of `pid` in the device's sample window from its samples stamped before `at_us` and
// from those at or after it (a reused PID: the earlier process's and the later one's); the two add
// up to SmShareOf(SmShares(device), pid). Both nullopt without per-process utilization.
std::pair<std::optional<double>, std::optional<double>> SmShareSplit(
    const gpu::DeviceSample& device, uint32_t pid, uint64_t at_us);

// As SmShareSplit, of the memory-busy share (memUtil).
std::pair<std::optional<double>, std::optional<double>> MemoryBusyShareSplit(
    const gpu::DeviceSample& device, uint32_t pid, uint64_t at_us);

// The share of `pid` in a table from SmShares; nullopt when the PID is not in it.
std::optional<double> SmShareOf(const SmShareTable& shares, uint32_t pid);

}  // namespace gpumeter::attribution
