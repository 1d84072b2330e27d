#include "core/attribution/attribute.h"

#include <algorithm>
#include <compare>
#include <iterator>
#include <map>

#include "core/attribution/accumulator.h"

namespace gpumeter::attribution {
namespace {

using detail::Accumulator;
using detail::OwnerRanks;

const Owner kIdle{OwnerKind::kIdle, {}, {}, {}};
const Owner kSystem{OwnerKind::kSystem, {}, {}, {}};
const Owner kUnattributed{OwnerKind::kUnattributed, {}, {}, {}};

const Owner& OwnerOf(const ProcessObservation& p) { return p.owner ? *p.owner : kUnattributed; }

// Orders owners by value through pointers (the owners live in the observation or are constants).
struct OwnerPtrLess {
  bool operator()(const Owner* a, const Owner* b) const { return *a < *b; }
};

constexpr double kResidue = 1e-12;  // relative to capacity; far below the 1e-9 conservation bound

void AttributeMemory(const UnitObservation& u, double seconds, Accumulator& acc) {
  const double total = static_cast<double>(u.memory_total_bytes);
  const double reserved = std::min(total, static_cast<double>(u.memory_reserved_bytes.value_or(0)));
  double known = 0;
  for (const auto& p : u.processes) known += static_cast<double>(p.memory_bytes.value_or(0));
  // What processes may hold: `used` when NVML gave it, else everything not reserved.
  const double ceiling = u.memory_used_bytes
                             ? std::min(static_cast<double>(*u.memory_used_bytes), total - reserved)
                             : total - reserved;
  // Per-process figures above the device's own count are sampling skew: scale them down.
  const double scale = known > ceiling && known > 0 ? ceiling / known : 1.0;
  for (const auto& p : u.processes)
    if (p.memory_bytes)
      acc.Memory(OwnerOf(p), static_cast<double>(*p.memory_bytes) * scale * seconds,
                 scale < 1.0 ? Rule::kProcessMemoryScaled : Rule::kProcessMemory);
  const double placed = known * scale;
  acc.Memory(kSystem, reserved * seconds, Rule::kDriverReservation);
  if (u.memory_used_bytes) {
    // Used but not by any process we could size: context overhead, processes NVML reports as N/A,
    // or (NVML v1) the reservation counted inside `used`.
    acc.Memory(kUnattributed, (ceiling - placed) * seconds,
               u.memory_reserved_bytes ? Rule::kDeviceUsedMinusProcesses
                                       : Rule::kDeviceUsedMinusProcessesNoReservation);
    acc.Memory(kIdle, (total - reserved - ceiling) * seconds, Rule::kDeviceFreeMemory);
  } else {
    acc.Memory(kUnattributed, (total - reserved - placed) * seconds,
               u.unknown_reason != Rule::kNone ? u.unknown_reason : Rule::kMemoryStateUnknown);
  }
}

// What the compute split reads of a unit: its busy figure and each process's share. SM time, or
// memory busy time in its place (split by the same rules, so it is conserved, unknown and bounded
// as compute is: docs/attribution.md, "Memory busy time"), read from the same observation.
struct Signal {
  std::optional<double> busy_fraction;
  bool busy_from_dcgm = false, busy_is_instant = false, busy_from_samples = false;
  std::optional<double> samples_period_seconds;
  std::optional<double> ProcessObservation::*share = &ProcessObservation::sm_fraction;
  bool ProcessObservation::*extrapolated = &ProcessObservation::sm_extrapolated;
};

Signal SmSignal(const UnitObservation& u) {
  return {u.busy_fraction, u.busy_from_dcgm, u.busy_is_instant, u.busy_from_samples,
          u.samples_period_seconds};
}

Signal MemoryBusySignal(const UnitObservation& u) {
  Signal s;
  s.busy_fraction = u.memory_busy_fraction;
  s.busy_from_dcgm = u.memory_signal == MemorySignal::kDcgmDramActive;
  s.busy_is_instant = u.memory_busy_is_instant;
  // No windowed busy figure of the samples' kind: extrapolated shares' bound is the lost part.
  if (u.memory_signal == MemorySignal::kProcessMemUtil) s.busy_is_instant = true;
  // Per-process samples are the signal and nothing runs: nothing used the memory.
  if (u.memory_signal == MemorySignal::kProcessMemUtil && u.processes.empty()) s.busy_fraction = 0;
  s.share = &ProcessObservation::memory_busy_fraction;
  s.extrapolated = &ProcessObservation::memory_busy_extrapolated;
  return s;
}

// No per-process samples: the busy fraction `b` split by a proxy, the rule saying which. Returns
// the fraction placed (0 when no proxy applies).
double SplitBusyByProxy(const UnitObservation& u, double b, double seconds, Accumulator& acc) {
  // No per-process samples: split the busy time by a proxy, and say which.
  std::map<const Owner*, double, OwnerPtrLess> weight;
  Rule rule = Rule::kNone;
  // The MPS server runs no kernels of its own: it is neither a tenant nor a thread share.
  const auto client = [](const ProcessObservation& p) { return !p.mps_server; };
  const bool threads = u.mode == SharingMode::kMps &&
                       std::all_of(u.processes.begin(), u.processes.end(), [&](const auto& p) {
                         return !client(p) || p.mps_thread_fraction.has_value();
                       });
  const bool memory = std::all_of(u.processes.begin(), u.processes.end(), [&](const auto& p) {
    return !client(p) || p.memory_bytes.has_value();
  });
  for (const auto& p : u.processes)
    if (client(p)) weight[&OwnerOf(p)] += 0;
  if (weight.size() == 1) {
    weight.begin()->second = 1;
    rule = Rule::kSingleTenant;
  } else if (threads) {
    for (const auto& p : u.processes)
      if (client(p)) weight[&OwnerOf(p)] += std::max(0.0, *p.mps_thread_fraction);
    rule = Rule::kMpsThreadPercentage;
  } else if (memory || u.mode == SharingMode::kMig) {
    // Nothing says who ran: each tenant may have run none to all of the busy time. The even
    // split is the estimate whose worst case is least (docs/attribution.md, Bounds); weighing by
    // memory, as before, moved the estimate away from the middle of what is possible and so
    // widened the bound, with no evidence that memory held follows time used.
    for (auto& [o, w] : weight) w = 1;
    rule = Rule::kEvenSplitNoSamples;
  }
  double sum = 0;
  for (const auto& [o, w] : weight) sum += w;
  if (sum > 0) {
    // Bound: any tenant may have run anywhere from none to all of the busy time (nothing here
    // saw who ran when), so the truth lies in [0, busy]; one tenant alone is exact.
    const double busy = b * seconds;
    for (const auto& [o, w] : weight) {
      const double v = busy * w / sum;
      acc.Compute(*o, v, rule, weight.size() > 1 ? std::max(v, busy - v) : 0.0);
    }
    return b;
  }
  return 0;
}

// Whose compute an unknown hides: owners running a process on the unit; those and the holders
// (the unit gave no readings); or owners of a process without a per-process sample.
enum class Whose { kRunning, kRunningOrHolding, kUnsampled };

// Those owners, each once (the first process's or holder's object of each, by their `ranks`);
// never `unattributed`, which books the unknown time itself.
std::vector<const Owner*> Tenants(const UnitObservation& u, const Signal& sig,
                                  const OwnerRanks& ranks, Whose whose) {
  std::vector<const Owner*> out;
  std::vector<bool> listed(ranks.size());
  auto add = [&](const Owner& o, uint32_t rank) {
    if (!listed[rank]) listed[rank] = true, out.push_back(&o);
  };
  for (size_t i = 0; i < u.processes.size(); ++i) {
    const auto& p = u.processes[i];
    if (OwnerOf(p).kind != OwnerKind::kUnattributed && !p.mps_server &&
        (whose != Whose::kUnsampled || !(p.*sig.share)))
      add(OwnerOf(p), ranks.Process(i));
  }
  if (whose == Whose::kRunningOrHolding)
    for (size_t i = 0; i < u.holders.size(); ++i) add(u.holders[i].owner, ranks.Holder(i));
  return out;
}

// Per-process samples that cover only part of the interval (the driver's buffer lost the rest,
// `U` s) and the unit's busy fraction `b` over all of it (GPM or DCGM, not utilization.gpu). Each
// process gets the busy time its samples show in the covered part, and the busy time they leave
// over, L = b × seconds − Σ covered, which the lost part held, by the processes' rates in the
// covered part (evenly when none ran there): the device's own busy time says how much ran while the
// samples were lost, their rates who likely ran it. Each may have run none to all of L (up to two
// driver periods more: the two windows' ends need not line up): bound max(v, L + slack − v) for
// its part v. L is at most U; busy time beyond that is nobody's listed
// (unattributed). Returns the fraction of the interval placed.
double SplitWithLostSamples(const UnitObservation& u, const Signal& sig, double b, double seconds,
                            Accumulator& acc) {
  const double lost_s = std::clamp(u.samples_uncovered_seconds, 0.0, seconds);
  const double covered_s = seconds - lost_s, busy_s = b * seconds;
  double rates = 0, shown = 0;
  size_t sampled = 0;
  for (const auto& p : u.processes)
    if ((p.*sig.share)) {
      const double r = std::clamp(*(p.*sig.share), 0.0, 1.0);
      rates += r, shown += r * covered_s, ++sampled;
    }
  // Samples showing more than the unit's busy time are noise: scale them to it.
  const double scale = shown > busy_s && shown > 0 ? busy_s / shown : 1.0;
  const double left = std::clamp(busy_s - shown * scale, 0.0, lost_s);
  // `left` comes from two windows that need not line up: the device's busy time between passes
  // and the samples' between period boundaries. Up to a driver period at each end is in one and
  // not the other, so the busy time the lost part held may be that much more than `left`.
  const double slack = 2 * sig.samples_period_seconds.value_or(0);
  const double left_most = std::clamp(busy_s - shown * scale + slack, 0.0, lost_s);
  double placed = 0;
  for (const auto& p : u.processes) {
    if (!(p.*sig.share)) continue;
    const double r = std::clamp(*(p.*sig.share), 0.0, 1.0);
    const double part = left * (rates > 0 ? r / rates : 1.0 / static_cast<double>(sampled));
    const double v = r * covered_s * scale + part;
    acc.Compute(OwnerOf(p), v, Rule::kProcessSmSamplesExtrapolated,
                std::max(part, left_most - part));
    placed += v;
  }
  return placed / seconds;
}

// Per-process samples over the interval: each process's share of it (`sampled` is their sum),
// scaled to the busy fraction `b` where they show more. Returns the fraction placed.
double SplitBySamples(const UnitObservation& u, const Signal& sig, double b, double sampled,
                      double seconds, Rule idle_rule, Accumulator& acc) {
  // Samples above the busy fraction are noise: scale them to it; never above 100 %.
  const double scale = sampled > b && sampled > 0 ? b / sampled : 1.0;
  // Extrapolated without the interval's own busy time (utilization.gpu is one period's): the
  // covered part's share stands for the uncovered seconds, in which the process ran anywhere
  // from none of them to all (at most the unit's busy time).
  const double uncovered = std::clamp(u.samples_uncovered_seconds, 0.0, seconds);
  // The unit's busy time, where known, caps what ran unseen; the samples' own sum does not.
  const double lost_cap =
      idle_rule == Rule::kUnitNotBusySamples ? uncovered : std::min(uncovered, b * seconds);
  double placed = 0;
  for (const auto& p : u.processes) {
    if (!(p.*sig.share)) continue;
    const double share = std::clamp(*(p.*sig.share), 0.0, 1.0) * scale;
    const double stood_for = std::min(share * uncovered, lost_cap);
    acc.Compute(OwnerOf(p), share * seconds,
                (p.*sig.extrapolated) ? Rule::kProcessSmSamplesExtrapolated
                : scale < 1.0         ? Rule::kProcessSmSamplesScaled
                                      : Rule::kProcessSmSamples,
                (p.*sig.extrapolated) ? std::max(stood_for, lost_cap - stood_for) : 0.0);
    placed += share;
  }
  return placed;
}

void AttributeCompute(const UnitObservation& u, const Signal& sig, double seconds,
                      Accumulator& acc) {
  auto tenants = [&](Whose w) {
    return [&u, &sig, &acc, w] { return Tenants(u, sig, acc.ranks(), w); };
  };
  double sampled = 0;
  bool all_sampled = !u.processes.empty();
  for (const auto& p : u.processes) {
    if ((p.*sig.share))
      sampled += std::clamp(*(p.*sig.share), 0.0, 1.0);
    else
      all_sampled = false;
  }
  std::optional<double> busy = sig.busy_fraction;
  Rule idle_rule = sig.busy_from_dcgm      ? Rule::kUnitNotBusyDcgm
                   : sig.busy_from_samples ? Rule::kUnitNotBusySamples
                                           : Rule::kUnitNotBusyDevice;
  if (!busy && all_sampled) {
    busy = std::min(1.0, sampled);
    idle_rule = Rule::kUnitNotBusySamples;
  }
  if (!busy) {
    acc.Compute(kUnattributed, seconds,
                u.unknown_reason != Rule::kNone ? u.unknown_reason : Rule::kActivityUnknown);
    // No readings at all: whoever held the unit may have used it.
    const Whose whose =
        u.unknown_reason != Rule::kNone ? Whose::kRunningOrHolding : Whose::kRunning;
    acc.ComputeUnknown(tenants(whose), seconds);
    return;
  }
  const double b = std::clamp(*busy, 0.0, 1.0);
  // Busy time from the samples alone, some of which the driver lost: the lost part is not idle
  // but unknown (with the device's own busy time, SmShares extrapolated instead).
  double lost = 0;
  const bool extrapolated =
      std::any_of(u.processes.begin(), u.processes.end(),
                  [&sig](const ProcessObservation& p) { return p.*sig.extrapolated; });
  // (Shares extrapolated over the lost part already stand for it.)
  if (idle_rule == Rule::kUnitNotBusySamples && u.samples_uncovered_seconds > 0 && !extrapolated)
    lost = std::clamp(u.samples_uncovered_seconds / seconds, 0.0, 1.0 - b);
  acc.Compute(kUnattributed, lost * seconds, Rule::kSamplesLostBusyUnknown);
  acc.ComputeUnknown(tenants(Whose::kRunning), lost * seconds);
  acc.Compute(kIdle, (1.0 - b - lost) * seconds, idle_rule);

  double placed = 0;
  const bool any_sampled =
      std::any_of(u.processes.begin(), u.processes.end(),
                  [&sig](const ProcessObservation& p) { return (p.*sig.share).has_value(); });
  if (any_sampled && u.samples_uncovered_seconds > 0 && !sig.busy_is_instant && extrapolated) {
    placed = SplitWithLostSamples(u, sig, b, seconds, acc);
    acc.ComputeUnknown(tenants(Whose::kUnsampled), (b - placed) * seconds);
  } else if (any_sampled) {
    placed = SplitBySamples(u, sig, b, sampled, seconds, idle_rule, acc);
    // A process without a sample may have run the busy time the samples leave over.
    acc.ComputeUnknown(tenants(Whose::kUnsampled), (b - placed) * seconds);
  } else if (!u.processes.empty()) {
    placed = SplitBusyByProxy(u, b, seconds, acc);
    // No proxy applied: the busy time is some tenant's, which is unknown.
    if (placed == 0) acc.ComputeUnknown(tenants(Whose::kRunning), b * seconds);
  }
  // Busy time no process accounts for: unattributed, not spread over the others.
  acc.Compute(kUnattributed, (b - placed) * seconds, Rule::kBusyNotCovered);
}

// The row of `o` in `rows` (sorted by owner), added empty where there is none. The reference
// lasts until the next row is added.
Row& RowOf(std::vector<Row>& rows, const Owner& o) {
  auto it = std::lower_bound(rows.begin(), rows.end(), o,
                             [](const Row& r, const Owner& k) { return r.owner < k; });
  if (it == rows.end() || it->owner != o) {
    it = rows.insert(it, Row{});
    it->owner = o;
  }
  return *it;
}

// Activity unknown, idle power known (UnitObservation::idle_energy_joules): nobody's time is
// known, so energy cannot follow time, but the idle part is what holding the unit costs: it goes
// to the holders by held share, the share nobody held to `idle`; the rest stays unattributed.
void PlaceIdleEnergy(const UnitObservation& u, double seconds, UnitLedger& out) {
  // An instance whose own activity is known keeps energy following time, whatever its
  // neighbours' (SplitMigEnergy sets the idle part on every instance of a GPU short of activity).
  if (!out.energy_joules || !u.idle_energy_joules || u.busy_fraction) return;
  auto un = std::find_if(out.rows.begin(), out.rows.end(),
                         [](const Row& r) { return r.owner == kUnattributed; });
  if (un == out.rows.end() || un->compute_seconds < seconds * (1 - 1e-9)) return;  // time known
  Row& unattributed = *un;
  const double idle = std::clamp(*u.idle_energy_joules, 0.0, unattributed.energy_joules);
  if (idle <= 0) return;
  double held = 0;
  for (const auto& r : out.rows)
    if (r.owner.kind == OwnerKind::kContainer) held += r.requested_share_seconds / seconds;
  const double scale = held > 1 ? 1 / held : 1.0;  // over-allocated: shares scaled to the unit
  unattributed.energy_joules -= idle;
  double placed = 0;
  for (auto& r : out.rows) {
    if (r.owner.kind != OwnerKind::kContainer || r.requested_share_seconds <= 0) continue;
    const double e = idle * r.requested_share_seconds / seconds * scale;
    r.energy_joules += e;
    r.energy_rule = Rule::kMigIdleToHolders;
    placed += e;
  }
  if (idle - placed > idle * kResidue) {
    Row& nobody = RowOf(out.rows, kIdle);
    nobody.energy_joules += idle - placed;
    nobody.energy_rule = u.energy_rule;
  }
}

// The unit's bound on its busy time's energy: the busy rows share it by compute (their energy is
// split by it), idle holds all of it (what the busy rows did not draw, idle did).
void PlaceEnergyBound(const UnitObservation& u, UnitLedger& out) {
  if (u.energy_bound_joules <= 0) return;
  double busy = 0;
  for (const auto& r : out.rows)
    if (r.owner.kind != OwnerKind::kIdle) busy += r.compute_seconds;
  for (auto& r : out.rows) {
    if (r.compute_seconds <= 0) continue;
    r.energy_bound_joules = r.owner.kind == OwnerKind::kIdle ? u.energy_bound_joules
                            : busy > 0 ? u.energy_bound_joules * r.compute_seconds / busy
                                       : 0;
  }
}

// Where a row's compute is an estimated split (its compute_bound_seconds), so is its energy, which
// follows its time: the truth within ± the compute's bound at the most a busy second of the unit
// can have drawn. Power is close to linear in activity (idle_power.h), so that is at most the
// unit's energy over its busy seconds (its idle power over them is more than over the idle
// time's share it then had).
void BoundEnergyOfEstimatedSplits(UnitLedger& out) {
  if (!out.energy_joules) return;
  double busy_s = 0;
  for (const auto& r : out.rows)
    if (r.owner.kind != OwnerKind::kIdle) busy_s += r.compute_seconds;
  const double per_second = *out.energy_joules / std::max(busy_s, 1e-9 * out.seconds);
  // No row's energy can be off by more than the unit's.
  for (auto& r : out.rows)
    if (r.owner.kind != OwnerKind::kIdle && r.compute_bound_seconds > 0)
      r.energy_bound_joules += std::min(r.compute_bound_seconds * per_second, *out.energy_joules);
}

// Energy follows each row's time at the power drawn in it, where the driver's power samples say:
// a row's weight is its compute-seconds × the mean power while its processes ran (an owner's
// processes weighted by their activity), idle's × idle time's power, and any other row's (no
// samples: unattributed, a process without any) × the interval's mean power; the unit's energy
// goes by weight. Exact at the samples' resolution (the driver's period) where they cover the
// interval; a burst is charged the power it drew, not the interval's mean. The rows still add up
// to the unit's energy.
void WeighEnergyByPower(const UnitObservation& u, double seconds, UnitLedger& out) {
  if (!out.energy_joules || seconds <= 0 || *out.energy_joules <= 0) return;
  // Energy already placed on rows without time (PlaceIdleEnergy, on MIG instances only, which
  // have no power samples) is not this split's to move.
  for (const auto& r : out.rows)
    if (r.compute_seconds <= 0 && r.energy_joules > 0) return;
  // Σ share × watts, Σ share per owner; keyed by pointer, compared by value (no owner copies):
  // the owners live in the observation, and a row's owner finds its entry by value.
  std::map<const Owner*, std::pair<double, double>, OwnerPtrLess> by_owner;
  for (const auto& p : u.processes)
    if (p.busy_watts && p.sm_fraction && *p.sm_fraction > 0) {
      auto& [sw, sum] = by_owner[&OwnerOf(p)];
      sw += *p.sm_fraction * *p.busy_watts;
      sum += *p.sm_fraction;
    }
  if (by_owner.empty() && !u.idle_time_watts && !u.busy_time_watts) return;
  const double mean = *out.energy_joules / seconds;
  const double busy_mean = u.busy_time_watts.value_or(mean);
  std::vector<double> weight(out.rows.size(), 0);
  double total = 0;
  for (size_t i = 0; i < out.rows.size(); ++i) {
    const Row& r = out.rows[i];
    if (r.compute_seconds <= 0) continue;
    double watts = r.owner.kind == OwnerKind::kIdle ? mean : busy_mean;
    if (r.owner.kind == OwnerKind::kIdle && u.idle_time_watts) {
      watts = *u.idle_time_watts;
    } else if (const auto it = by_owner.find(&r.owner); it != by_owner.end()) {
      watts = it->second.first / it->second.second;
    }
    weight[i] = r.compute_seconds * std::max(0.0, watts);
    total += weight[i];
  }
  if (total <= 0) return;
  for (size_t i = 0; i < out.rows.size(); ++i)
    if (out.rows[i].compute_seconds > 0)
      out.rows[i].energy_joules = *out.energy_joules * weight[i] / total;
}

// Sets each row's memory-busy-time figures from `traffic` (the compute figures of the split of
// MemoryBusySignal), adding rows for owners only the traffic has; both sorted by owner, so one
// walk through both pairs them (a search per traffic row compared owners log n times each).
void SetMemoryTraffic(const std::vector<Row>& traffic, std::vector<Row>& rows) {
  auto set = [](const Row& t, Row& r) {
    r.memory_busy_seconds = t.compute_seconds;
    r.memory_busy_unknown_seconds = t.compute_unknown_seconds;
    r.memory_busy_bound_seconds = t.compute_bound_seconds;
    r.memory_busy_rule = t.compute_rule;
  };
  std::vector<Row> added;  // owners only the traffic has, sorted
  auto r = rows.begin();
  for (const auto& t : traffic) {
    auto order = std::strong_ordering::less;
    while (r != rows.end() && (order = r->owner <=> t.owner) < 0) ++r;
    if (r != rows.end() && order == 0) {
      set(t, *r);
      continue;
    }
    Row row;
    row.owner = t.owner;
    set(t, row);
    added.push_back(std::move(row));
  }
  if (added.empty()) return;
  std::vector<Row> merged;
  merged.reserve(rows.size() + added.size());
  std::merge(std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()),
             std::make_move_iterator(added.begin()), std::make_move_iterator(added.end()),
             std::back_inserter(merged),
             [](const Row& a, const Row& b) { return a.owner < b.owner; });
  rows = std::move(merged);
}

}  // namespace

UnitLedger AttributeUnit(const UnitObservation& unit, double seconds) {
  UnitLedger out;
  out.uuid = unit.uuid;
  out.mode = unit.mode;
  out.seconds = seconds;
  out.memory_capacity_byte_seconds = static_cast<double>(unit.memory_total_bytes) * seconds;
  out.samples_uncovered_seconds = std::clamp(unit.samples_uncovered_seconds, 0.0, seconds);
  if (seconds <= 0) return out;
  const OwnerRanks ranks(unit, kUnattributed, {&kIdle, &kSystem, &kUnattributed});
  Accumulator acc(ranks, kResidue * out.memory_capacity_byte_seconds, kResidue * seconds);
  AttributeMemory(unit, seconds, acc);
  AttributeCompute(unit, SmSignal(unit), seconds, acc);
  for (const auto& h : unit.holders) acc.Request(h.owner, std::clamp(h.share, 0.0, 1.0) * seconds);
  if (unit.energy_joules && *unit.energy_joules >= 0) out.energy_joules = unit.energy_joules;
  out.rows = acc.Take(out.energy_joules, seconds, unit.energy_rule);
  PlaceIdleEnergy(unit, seconds, out);
  WeighEnergyByPower(unit, seconds, out);
  if (out.energy_joules) PlaceEnergyBound(unit, out);
  BoundEnergyOfEstimatedSplits(out);
  // Memory busy time split as compute is, over the same processes and owner ranks.
  Accumulator traffic(ranks, 0, kResidue * seconds);
  AttributeCompute(unit, MemoryBusySignal(unit), seconds, traffic);
  SetMemoryTraffic(traffic.Take(std::nullopt, seconds, Rule::kNone), out.rows);
  out.memory_signal = unit.memory_signal;
  return out;
}

void MergeInto(UnitLedger& into, const UnitLedger& later) {
  into.seconds += later.seconds;
  into.memory_capacity_byte_seconds += later.memory_capacity_byte_seconds;
  into.samples_uncovered_seconds += later.samples_uncovered_seconds;
  into.energy_joules = into.energy_joules && later.energy_joules
                           ? std::optional<double>(*into.energy_joules + *later.energy_joules)
                           : std::nullopt;
  into.mode = later.mode;
  into.late_seconds = later.late_seconds;
  into.memory_signal = later.memory_signal;
  std::vector<Row> rows;
  rows.reserve(into.rows.size() + later.rows.size());
  auto a = into.rows.begin();
  auto b = later.rows.begin();
  while (a != into.rows.end() || b != later.rows.end()) {
    if (b == later.rows.end() || (a != into.rows.end() && a->owner < b->owner)) {
      rows.push_back(*a++);
    } else if (a == into.rows.end() || b->owner < a->owner) {
      rows.push_back(*b++);
    } else {
      Row r = *b;
      r.memory_byte_seconds += a->memory_byte_seconds;
      r.compute_seconds += a->compute_seconds;
      r.energy_joules += a->energy_joules;
      r.requested_share_seconds += a->requested_share_seconds;
      r.compute_unknown_seconds += a->compute_unknown_seconds;
      r.compute_bound_seconds += a->compute_bound_seconds;
      r.memory_busy_seconds += a->memory_busy_seconds;
      r.memory_busy_unknown_seconds += a->memory_busy_unknown_seconds;
      r.memory_busy_bound_seconds += a->memory_busy_bound_seconds;
      r.energy_bound_joules += a->energy_bound_joules;
      // An estimate merged with a measurement is still one (its bound is in the sum).
      if (domain::IsEnergyEstimate(a->energy_rule)) r.energy_rule = a->energy_rule;
      rows.push_back(std::move(r));
      ++a, ++b;
    }
  }
  into.rows = std::move(rows);
}

}  // namespace gpumeter::attribution
