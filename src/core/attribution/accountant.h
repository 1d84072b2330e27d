// Turns a stream of node samples into per-interval ledgers: keeps, per GPU, the previous sample
// (for deltas and means) and the last good one (so a GPU that stops answering still has a
// capacity to account for); and, per GPU model, the idle-power fit that splits MIG GPUs' energy.
// Idle power is a property of the model, so every GPU of that model on the node feeds the fit:
// whole GPUs (whose activity varies) teach it what a steadily loaded MIG GPU cannot.
// No clock and no I/O: the caller says how long each interval was. Not thread-safe.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/attribution/attribute.h"
#include "core/attribution/collection_profile.h"
#include "core/attribution/idle_power.h"
#include "core/attribution/observe.h"
#include "domain/gpu_types.h"

namespace gpumeter::attribution {

struct AccountantOptions {
  double idle_power_half_life_s = 3600;
  // Idle power by GPU UUID or model name (as NVML names it), where the operator knows it; else
  // it is fitted (IdlePowerFit).
  std::map<std::string, double> idle_power_watts;
  // How late the DCGM source sees a collection at most (its poll period, DcgmSourceOptions):
  // the collections' edges on the agent's clock are this uncertain, and the bounds of energy
  // estimated inside them say so (collection_profile.h).
  double dcgm_seen_within_s = 2;
};

// The activity of one unit of a held GPU over a past interval (Accountant::Release): pending
// while the source cannot tell it yet; else its mean, [0, 1], or unknown.
struct PastActivity {
  bool pending = false;
  std::optional<double> mean;
  // The unit's memory busy time over the same interval where the source has it (DCGM DRAM_ACTIVE),
  // [0, 1]; unknown otherwise. It never holds an interval back: activity does.
  std::optional<double> memory = std::nullopt;
  // While pending: how far the source can tell the unit's activity now (the end of its last
  // collection seen), so an interval across it can be split there (Accountant::Release).
  std::optional<double> covered_until_s = std::nullopt;
};
// (GPU UUID, MIG GPU instance ID or none for the whole GPU, from_s, to_s) -> its activity over
// (from_s, to_s], on the clock of the snapshots' timestamps.
using PastActivityOf = std::function<PastActivity(
    const std::string& gpu_uuid, std::optional<uint32_t> gpu_instance, double from_s, double to_s)>;

class Accountant {
 public:
  explicit Accountant(AccountantOptions options = {});
  Accountant(const Accountant&) = delete;  // one history of the node: never two copies of it
  Accountant& operator=(const Accountant&) = delete;

  // Records a pass as the start of the first interval; produces no ledger. The snapshot is shared
  // and never changed: the accountant keeps it while it needs its samples and owners.
  void Prime(std::shared_ptr<const domain::NodeSnapshot> snapshot);

  // Ledgers for the interval of `seconds` (> 0) that ends with `snapshot` (non-null; a failed
  // pass is one with no GPU), one per unit: the owners of its processes, its units' modes and
  // holders are the snapshot's (IntervalFacts over it and the one before). A GPU
  // that is lost, or missing from the snapshot, gets ledgers with its whole capacity
  // unattributed (from its last good sample); its next good sample starts a fresh interval.
  // A GPU first seen here has no previous sample: memory from this reading only, no energy.
  // A GPU marked dcgm_held gets no ledger here: its interval is held (with the owners, holders
  // and modes of now) until Release can tell its activity.
  std::vector<UnitLedger> Step(std::shared_ptr<const domain::NodeSnapshot> snapshot,
                               double seconds);

  // Ledgers of the held intervals whose activity `activity` now tells, oldest first, merged per
  // unit (late_seconds says how far back they end; a run of intervals with known energy and one
  // without stay apart). A GPU the latest Step did not hold (its DCGM series went stale, the GPU
  // was lost), and every GPU when `all` is set (at a stop), gives all its held intervals, those
  // still pending with unknown activity. Call after each Step.
  std::vector<UnitLedger> Release(const PastActivityOf& activity, bool all = false);
  // Units (MIG instances and GPUs) with intervals held.
  std::set<std::string> HeldUnits() const;

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
    // The last good sample, in the snapshot that holds it (kept alive here).
    std::shared_ptr<const domain::NodeSnapshot> from;
    const gpu::DeviceSample* last = nullptr;
    bool last_is_previous = false;  // false after a gap: no deltas across it
  };

  // An interval of a GPU whose activity is not known yet, with what Observe will need then.
  struct HeldInterval {
    std::optional<gpu::DeviceSample> previous;
    gpu::DeviceSample device;
    double seconds = 0, from_s = 0, to_s = 0;
    IntervalFacts facts;  // owners, modes and holders as they were then
    // Where the interval was split at a collection's end (SplitAtCoverage): the part's energy
    // (unknown without the counter); else the counter's delta between `previous` and `device`.
    bool split = false;
    std::optional<double> joules;
  };
  // The interval's energy and the rule that gave it (HeldInterval::joules, or the counter's).
  static std::optional<double> HeldEnergy(const HeldInterval& h, Rule* rule);
  // Splits the first interval of `queue` still pending at the end of the last collection seen of
  // every unit, where that end lies inside it: the part before is booked with that collection,
  // the rest waits for the next, so a collection is booked whole at any step. Energy is split by
  // the board's power samples where they cover the interval, else by time.
  static void SplitAtCoverage(std::deque<HeldInterval>& queue, const PastActivityOf& activity);
  static HeldInterval Hold(const gpu::DeviceSample* previous, const gpu::DeviceSample& d,
                           double seconds, const IntervalFacts& facts);
  // The activity of each unit of a held interval (MIG instances in order, or the whole GPU), and
  // its memory busy time; nullopt while some unit's is pending and not `force`d (pending then reads
  // unknown).
  struct Means {
    std::vector<std::optional<double>> activity, memory;
  };
  std::optional<Means> Resolve(const HeldInterval& h, const PastActivityOf& activity,
                               bool force) const;
  // Observes a held interval with `means` filled in, its energy at `watts` when given; with
  // `profile` (per unit, as Means), each unit's energy and the power of its busy and idle time
  // from ProfileCollections instead.
  std::vector<UnitObservation> ObserveHeld(const HeldInterval& h, const Means& means,
                                           std::optional<double> watts,
                                           const std::vector<UnitProfile>* profile = nullptr) const;
  // The activity profile of a GPU's released intervals `known` (the front of `queue`) inside
  // their collections, from the board's power (accountant_profile.cpp): per interval, the
  // units' mean activity and energies. Empty where it cannot be told (an interval without a
  // counted energy, a unit's activity or size unknown, the instances changed): those spread
  // power evenly.
  struct HeldProfile {
    Means means;
    std::vector<UnitProfile> units;
  };
  std::vector<HeldProfile> Profile(const std::deque<HeldInterval>& queue,
                                   const std::vector<Means>& known, const PastActivityOf& activity);

  AccountantOptions options_;
  // The snapshots of the last two passes: the interval Step accounts lies between them.
  std::shared_ptr<const domain::NodeSnapshot> now_, before_;
  std::map<std::string, GpuState> gpus_;                  // by GPU UUID
  std::map<std::string, IdlePowerFit> fits_;              // by GPU model name
  std::map<std::string, IdlePowerSeen> seen_;             // by GPU model name
  std::map<std::string, std::deque<HeldInterval>> held_;  // by GPU UUID, oldest first
  std::set<std::string> held_now_;                        // GPUs the latest Step held
  // The activity of each unit of a GPU's last released interval (by GPU UUID): which units
  // changed between collections (Profile).
  std::map<std::string, std::vector<double>> last_released_;
  double last_s_ = 0;  // timestamp of the latest snapshot (s)
};

}  // namespace gpumeter::attribution
