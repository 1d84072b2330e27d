// Turns a stream of node samples into per-interval ledgers: keeps, per GPU, the previous sample
// (for deltas and means) and the last good one (so a GPU that stops answering still has a
// capacity to account for); and, per GPU model, the idle-power fit that splits MIG GPUs' energy.
// Idle power is a property of the model, so every GPU of that model on the node feeds the fit:
// whole GPUs (whose activity varies) teach it what a steadily loaded MIG GPU cannot.
// No clock and no I/O: the caller says how long each interval was. Not thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/attribution/attribute.h"
#include "core/attribution/idle_power.h"
#include "core/attribution/observe.h"
#include "domain/gpu_types.h"

namespace gpumeter::attribution {

struct AccountantOptions {
  double idle_power_half_life_s = 3600;
  // Idle power by GPU UUID or model name (as NVML names it), where the operator knows it; else
  // it is fitted (IdlePowerFit).
  std::map<std::string, double> idle_power_watts;
};

class Accountant {
 public:
  explicit Accountant(ObserveContext ctx, AccountantOptions options = {});
  Accountant(const Accountant&) = delete;  // its context refers back to it
  Accountant& operator=(const Accountant&) = delete;

  // Records a sample as the start of the first interval; produces no ledger.
  void Prime(gpu::GpuSnapshot snapshot);

  // Ledgers for the interval of `seconds` (> 0) that ends with `snapshot`, one per unit. A GPU
  // that is lost, or missing from the snapshot, gets ledgers with its whole capacity
  // unattributed (from its last good sample); its next good sample starts a fresh interval.
  // A GPU first seen here has no previous sample: memory from this reading only, no energy.
  std::vector<UnitLedger> Step(gpu::GpuSnapshot snapshot, double seconds);

  // Where an idle-power figure came from, in the order they are tried.
  enum class IdleSource { kConfigured, kFitted, kSeenIdle };
  struct IdlePower {
    double watts;
    IdleSource source;
  };
  // The idle power used for a GPU, if any: configured for its UUID or model; else fitted
  // (IdlePowerFit, needs activity); else the board's power while it ran nothing (IdlePowerSeen).
  std::optional<IdlePower> IdlePowerOf(const std::string& gpu_uuid) const;
  std::optional<double> IdleWatts(const std::string& gpu_uuid) const;

 private:
  struct GpuState {
    std::optional<gpu::DeviceSample> last;  // last good sample
    bool last_is_previous = false;          // false after a gap: no deltas across it
  };

  // Owners are resolved when a process is seen: one seen only in the previous sample (it exited
  // during the interval) keeps the owner it had then, as its PID may now name nothing or another.
  std::optional<Owner> OwnerOf(uint32_t pid) const;
  // Resolves the owner of every PID in `snapshot` into owners_now_ (the old table becomes
  // owners_before_).
  void ResolveOwners(const gpu::GpuSnapshot& snapshot);

  // PID → owner, sorted by PID: rebuilt every interval, so a vector whose storage is reused.
  using OwnerTable = std::vector<std::pair<uint32_t, std::optional<Owner>>>;

  ObserveContext ctx_;  // as given
  ObserveContext
      observe_;  // what Observe gets: owner through OwnerOf, idle power through IdleWatts
  AccountantOptions options_;
  OwnerTable owners_now_, owners_before_;
  std::map<std::string, GpuState> gpus_;       // by GPU UUID
  std::map<std::string, IdlePowerFit> fits_;   // by GPU model name
  std::map<std::string, IdlePowerSeen> seen_;  // by GPU model name
};

}  // namespace gpumeter::attribution
