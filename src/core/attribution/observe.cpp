#include "core/attribution/observe.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace gpumeter::attribution {

namespace {

// Mean of two readings, unknown if either is; rounds down, without overflow.
std::optional<uint64_t> Mean(std::optional<uint64_t> a, std::optional<uint64_t> b) {
  if (!a || !b) return std::nullopt;
  return *a / 2 + *b / 2 + (*a % 2 + *b % 2) / 2;
}

void SetMemory(UnitObservation& u, const std::optional<gpu::MemoryInfo>& now,
               const std::optional<gpu::MemoryInfo>* prev) {
  if (!now) return;
  u.memory_total_bytes = now->total_bytes;
  u.memory_used_bytes = now->used_bytes;
  u.memory_reserved_bytes = now->reserved_bytes;
  if (prev && *prev) {
    u.memory_used_bytes = Mean((*prev)->used_bytes, now->used_bytes);
    u.memory_reserved_bytes = Mean((*prev)->reserved_bytes, now->reserved_bytes);
  }
}

// Splits a MIG GPU's energy over its instances (see Observe). Returns the idle energy of slices
// that belong to no instance (0 when there are none, or when that is unknown).
double SplitMigEnergy(const gpu::DeviceSample& d, std::optional<double> energy,
                      std::optional<double> idle_watts, double seconds,
                      std::vector<UnitObservation>& units) {
  if (!energy || units.empty()) return 0;
  const size_t n = std::min(d.mig_instances.size(), units.size());
  std::vector<double> size(n), activity(n);
  bool slices_known = true, activity_known = true;
  for (size_t i = 0; i < n; ++i) {
    const auto& m = d.mig_instances[i];
    slices_known = slices_known && m.slices && *m.slices > 0;
    const auto a = InstanceActivity(m);
    activity_known = activity_known && a;
    activity[i] = std::clamp(a.value_or(0), 0.0, 1.0);
  }
  for (size_t i = 0; i < n; ++i) {
    const auto& m = d.mig_instances[i];
    size[i] = slices_known ? static_cast<double>(*m.slices)
                           : static_cast<double>(m.memory ? m.memory->total_bytes : 0);
  }
  double size_sum = 0, busy_sum = 0;
  for (size_t i = 0; i < n; ++i) size_sum += size[i], busy_sum += size[i] * activity[i];
  if (size_sum <= 0) return 0;
  // Idle power is spread over the whole GPU's slices when their count is known: slices in no
  // instance keep their part (returned), so an instance's idle energy does not depend on its
  // neighbours.
  const double capacity = slices_known && d.mig_total_slices && *d.mig_total_slices >= size_sum
                              ? static_cast<double>(*d.mig_total_slices)
                              : size_sum;
  // Without activity, idle power is still set aside by slices: what holding an
  // instance costs is known even when nobody's use of it is; only the rest is unattributed.
  const bool idle_by_slices_only = !activity_known && slices_known && idle_watts;
  const double idle = (activity_known || idle_by_slices_only) && idle_watts
                          ? std::min(*energy, std::max(0.0, *idle_watts) * seconds)
                          : 0.0;
  const double dynamic = *energy - idle;
  const bool by_activity = activity_known && busy_sum > 0;
  const Rule rule =
      idle_by_slices_only ? Rule::kMigIdleBySlicesRestUnknown
      : !activity_known   ? (slices_known ? Rule::kMigEnergyBySize : Rule::kMigEnergyByMemorySize)
      : !idle_watts
          ? (by_activity ? Rule::kMigEnergyByActivityNoIdle : Rule::kMigEnergyBySizeNoIdle)
      : slices_known ? Rule::kMigIdleBySize
                     : Rule::kMigIdleByMemorySize;
  for (size_t i = 0; i < n; ++i) {
    const double dyn_weight = by_activity ? size[i] * activity[i] / busy_sum : size[i] / size_sum;
    // Without activity or idle power, nothing is set aside for free slices: all goes to instances.
    const double idle_weight = idle > 0 ? size[i] / capacity : 0.0;
    units[i].energy_joules = idle * idle_weight + dynamic * dyn_weight;
    units[i].energy_rule = rule;
    if (idle_by_slices_only) units[i].idle_energy_joules = idle * idle_weight;
  }
  return idle > 0 ? idle * (capacity - size_sum) / capacity : 0.0;
}

// The unit of a MIG GPU's slices that are in no instance: named by the GPU's UUID, holding the
// memory no instance has; nullopt when every slice is in an instance or the counts are unknown.
std::optional<UnitObservation> FreeSlicesUnit(const gpu::DeviceSample& d) {
  if (!d.mig_total_slices) return std::nullopt;
  uint32_t used_slices = 0;
  uint64_t instance_memory = 0;
  for (const auto& m : d.mig_instances) {
    if (!m.slices) return std::nullopt;
    used_slices += *m.slices;
    instance_memory += m.memory ? m.memory->total_bytes : 0;
  }
  if (used_slices >= *d.mig_total_slices) return std::nullopt;
  UnitObservation u;
  u.uuid = d.uuid;
  u.mode = SharingMode::kMig;
  u.memory_total_bytes = d.memory && d.memory->total_bytes > instance_memory
                             ? d.memory->total_bytes - instance_memory
                             : 0;
  return u;
}

}  // namespace

std::optional<double> GpuEnergyJoules(const gpu::DeviceSample* previous, const gpu::DeviceSample& d,
                                      double seconds, Rule* rule) {
  if (previous && previous->energy_joules && d.energy_joules &&
      *d.energy_joules >= *previous->energy_joules) {
    if (rule) *rule = Rule::kEnergyCounterDelta;
    return *d.energy_joules - *previous->energy_joules;
  }
  if (previous && previous->power_watts && d.power_watts) {
    if (rule) *rule = Rule::kMeanBoardPower;
    return (*previous->power_watts + *d.power_watts) / 2 * seconds;
  }
  return std::nullopt;
}

std::optional<double> BusyFraction(const gpu::DeviceSample& d) {
  if (d.sm_active_ratio) return d.sm_active_ratio;
  if (d.utilization_gpu_percent) return *d.utilization_gpu_percent / 100.0;
  return d.dcgm_gr_active;
}

std::optional<double> InstanceActivity(const gpu::MigInstanceSample& m) {
  return m.sm_active_ratio ? m.sm_active_ratio : m.dcgm_gr_active;
}

std::optional<double> MigGpuActivity(const gpu::DeviceSample& d) {
  if (!d.mig_enabled || d.mig_instances.empty() || !d.mig_total_slices || *d.mig_total_slices == 0)
    return std::nullopt;
  double busy = 0;
  for (const auto& m : d.mig_instances) {
    const auto a = InstanceActivity(m);
    if (!a || !m.slices) return std::nullopt;
    busy += std::clamp(*a, 0.0, 1.0) * *m.slices;
  }
  return std::min(1.0, busy / *d.mig_total_slices);
}

std::vector<UnitObservation> ObserveUnavailable(const gpu::DeviceSample& last, Rule reason,
                                                const IntervalFacts& ctx) {
  std::vector<UnitObservation> out;
  auto unit = [&](const std::string& uuid, SharingMode mode,
                  const std::optional<gpu::MemoryInfo>& memory) {
    UnitObservation u;
    u.uuid = uuid;
    u.mode = mode;
    u.memory_total_bytes = memory ? memory->total_bytes : 0;
    u.holders = ctx.HoldersOf(uuid);
    u.unknown_reason = reason;
    out.push_back(std::move(u));
  };
  if (last.mig_enabled) {
    for (const auto& m : last.mig_instances) unit(m.uuid, SharingMode::kMig, m.memory);
    if (auto free = FreeSlicesUnit(last)) {  // its capacity is unknown-in-use too, not dropped
      free->holders = ctx.HoldersOf(free->uuid);
      free->unknown_reason = reason;
      out.push_back(std::move(*free));
    }
  } else {
    unit(last.uuid, ctx.ModeOf(last.uuid), last.memory);
  }
  return out;
}

namespace {

// The processes of one unit over the interval, from its process list now and (when the unit was
// there at the start) before: memory is the mean of both ends, SM share and owner by PID. A PID
// that another process took over within the interval (IntervalFacts::EarlierOf) is two processes:
// the earlier one seen at the start only, the later one at the end only, and the PID's SM samples
// split at the later one's start (unknown for both when that start is unknown). `device` (null for
// a MIG instance) holds the samples. A reused PID's samples between its earlier process `old` and
// the one holding it now `o`, split at the later one's start where known; else both idle when the
// PID had no sample, and unknown when it did (whose samples were whose cannot be told).
void SplitReusedPid(uint32_t pid, const gpu::DeviceSample* device,
                    std::optional<uint64_t> successor_start_us, const SmShareTable& shares,
                    const SmShareTable& memory_shares, ProcessObservation& old,
                    ProcessObservation& o) {
  if (device && successor_start_us) {
    std::tie(old.sm_fraction, o.sm_fraction) = SmShareSplit(*device, pid, *successor_start_us);
    std::tie(old.memory_busy_fraction, o.memory_busy_fraction) =
        MemoryBusyShareSplit(*device, pid, *successor_start_us);
    return;
  }
  if (const auto whole = SmShareOf(shares, pid); whole && *whole == 0)
    old.sm_fraction = o.sm_fraction = 0.0;
  if (const auto whole = SmShareOf(memory_shares, pid); whole && *whole == 0)
    old.memory_busy_fraction = o.memory_busy_fraction = 0.0;
}

// PIDs the driver sampled in the window that neither pass listed: processes that ran between the
// two. Each is booked to the owner /proc gave when a drain met it (IntervalFacts), else
// unattributed; its memory was never read, so it is unknown, not 0. `listed` is sorted by PID.
// The share of `pid` in `table` (sorted by PID), looking on from `from`, which it leaves at the
// place: a walk over ascending PIDs reads each table once.
std::optional<double> ShareFrom(const SmShareTable& table, uint32_t pid, size_t& from) {
  while (from < table.size() && table[from].first < pid) ++from;
  if (from == table.size() || table[from].first != pid) return std::nullopt;
  return table[from].second;
}

template <typename Listed>
void AddUnlisted(const Listed& listed, const SmShareTable& shares,
                 const SmShareTable& memory_shares, const IntervalFacts& ctx,
                 std::vector<ProcessObservation>& out) {
  size_t j = 0, k = 0;
  for (const auto& [pid, share] : shares) {
    while (j < listed.size() && listed[j].pid < pid) ++j;
    if (j < listed.size() && listed[j].pid == pid) continue;
    while (k < memory_shares.size() && memory_shares[k].first < pid) ++k;
    const double memory =
        k < memory_shares.size() && memory_shares[k].first == pid ? memory_shares[k].second : 0.0;
    if (share <= 0 && memory <= 0) continue;
    ProcessObservation o;
    o.pid = pid;
    o.owner = ctx.OwnerOf(pid);
    o.sm_fraction = share;
    o.memory_busy_fraction = memory;
    out.push_back(std::move(o));
  }
}

std::vector<ProcessObservation> ObserveProcesses(const std::vector<gpu::GpuProcess>& procs,
                                                 const std::vector<gpu::GpuProcess>* before,
                                                 const SmShareTable& shares,
                                                 const SmShareTable& memory_shares,
                                                 const gpu::DeviceSample* device,
                                                 const IntervalFacts& ctx) {
  // One entry per PID seen at either end (a vector: this runs for every process every second).
  struct Seen {
    uint32_t pid;
    std::optional<uint64_t> before, now;  // memory readings
    bool unknown;
    bool at_start, at_end;  // listed (whether its memory was readable or not)
  };
  std::vector<Seen> seen;
  seen.reserve(procs.size() + (before ? before->size() : 0));
  for (const auto& p : procs)
    seen.push_back({p.pid, std::nullopt, p.used_memory_bytes, !p.used_memory_bytes, false, true});
  if (before)
    for (const auto& p : *before)
      seen.push_back({p.pid, p.used_memory_bytes, std::nullopt, !p.used_memory_bytes, true, false});
  std::stable_sort(seen.begin(), seen.end(),
                   [](const Seen& a, const Seen& b) { return a.pid < b.pid; });
  std::vector<ProcessObservation> ps;
  ps.reserve(seen.size());
  IntervalFacts::Cursor cursor;  // PIDs come in ascending order: lookups go on from the last
  size_t at_sm = 0, at_memory = 0;
  for (size_t i = 0; i < seen.size();) {
    Seen m{seen[i].pid, std::nullopt, std::nullopt, false, false, false};
    for (; i < seen.size() && seen[i].pid == m.pid;
         ++i) {  // a PID listed twice: the last reading wins
      if (seen[i].now) m.now = seen[i].now;
      if (seen[i].before) m.before = seen[i].before;
      m.unknown = m.unknown || seen[i].unknown;
      m.at_start = m.at_start || seen[i].at_start;
      m.at_end = m.at_end || seen[i].at_end;
    }
    ProcessObservation o;
    o.pid = m.pid;
    auto facts = ctx.ProcessOf(m.pid, cursor);
    o.owner = std::move(facts.owner);
    o.mps_thread_fraction = facts.mps_thread_fraction;
    o.mps_server = facts.mps_server_name;
    const auto earlier = before && m.at_start ? std::move(facts.earlier) : std::nullopt;
    // Its PID now another process's: listed at the end, or met by a drain between the passes.
    const bool successor = earlier && (m.at_end || facts.met_between);
    // Seen at the start only, its PID now another process's elsewhere (here or on another GPU):
    // the owner is the earlier process's, not the one holding the PID now.
    if (earlier && !successor) {
      o.owner = earlier->owner;
      o.mps_thread_fraction.reset();
    }
    if (!successor) {
      if (!m.unknown)
        o.memory_bytes = before ? Mean(m.before.value_or(0), m.now.value_or(0)) : m.now;
      o.sm_fraction = ShareFrom(shares, m.pid, at_sm);
      o.memory_busy_fraction = ShareFrom(memory_shares, m.pid, at_memory);
      // A PID with no sample while the driver gives them (one that exited, seen at the start
      // only) moved no memory in the window: 0, not unknown, which would make the unit's unknown
      // (its processes' shares are its only memory-busy-time figure).
      if (!o.memory_busy_fraction && device && device->process_utilization_supported)
        o.memory_busy_fraction = 0.0;
      ps.push_back(std::move(o));
      continue;
    }
    ProcessObservation old = o;
    old.mps_server = false;  // the command read is the process's holding the PID now
    old.owner = earlier->owner;
    old.mps_thread_fraction.reset();  // the earlier process's environment is not known
    if (!m.unknown) {
      old.memory_bytes = Mean(m.before, uint64_t{0});
      // A successor met between passes only was never listed: its memory is not known.
      if (m.at_end) o.memory_bytes = Mean(uint64_t{0}, m.now);
    }
    SplitReusedPid(m.pid, device, earlier->successor_start_us, shares, memory_shares, old, o);
    ps.push_back(std::move(old));
    ps.push_back(std::move(o));
  }
  AddUnlisted(seen, shares, memory_shares, ctx, ps);
  return ps;
}

// A MIG-enabled GPU: one unit per instance, then one for the slices in no instance; the GPU's
// energy is split between them.
std::vector<UnitObservation> ObserveMig(const gpu::DeviceSample* previous,
                                        const gpu::DeviceSample& d, double seconds,
                                        const IntervalFacts& ctx,
                                        std::optional<double> idle_watts) {
  std::vector<UnitObservation> out;
  for (const auto& m : d.mig_instances) {
    UnitObservation u;
    u.uuid = m.uuid;
    u.mode = SharingMode::kMig;
    const gpu::MigInstanceSample* before = nullptr;
    if (previous)
      for (const auto& pm : previous->mig_instances)
        if (pm.uuid == m.uuid) before = &pm;
    SetMemory(u, m.memory, before ? &before->memory : nullptr);
    u.busy_fraction = InstanceActivity(m);
    u.busy_from_dcgm = !m.sm_active_ratio && m.dcgm_gr_active;
    u.processes =
        ObserveProcesses(m.processes, before ? &before->processes : nullptr, {}, {}, nullptr, ctx);
    // GPM's share of the instance's peak bandwidth (Hopper on); A100/A30: DCGM's DRAM_ACTIVE,
    // where the pipeline sets it from held collections. Nothing per process on MIG.
    if (m.dram_bw_ratio) {
      u.memory_busy_fraction = m.dram_bw_ratio;
      u.memory_signal = MemorySignal::kGpmDramBandwidth;
    } else if (m.dcgm_dram_active) {
      u.memory_busy_fraction = m.dcgm_dram_active;
      u.memory_signal = MemorySignal::kDcgmDramActive;
    }
    u.holders = ctx.HoldersOf(m.uuid);
    out.push_back(std::move(u));
  }
  const auto energy = GpuEnergyJoules(previous, d, seconds, nullptr);
  const double free_idle = SplitMigEnergy(d, energy, idle_watts, seconds, out);
  // Slices in no instance are idle and keep their share of idle power, so the GPU's energy and
  // cost add up.
  if (auto free = FreeSlicesUnit(d)) {
    free->memory_used_bytes = 0;
    free->busy_fraction = 0;
    free->memory_busy_fraction = 0;  // no instance: nothing can use it
    for (const auto& u : out)        // of the kind the instances' traffic is, for the unit's signal
      if (u.memory_signal != MemorySignal::kNone) free->memory_signal = u.memory_signal;
    if (energy) {
      free->energy_joules = free_idle;
      free->energy_rule = free_idle > 0 ? Rule::kMigFreeSlicesIdle : Rule::kMigFreeSlicesUnknown;
    }
    out.push_back(std::move(*free));
  }
  return out;
}

// The board power each process's busy time drew, and idle time's, from the driver's power samples
// beside its per-process samples. A per-process sample stamped s covers the driver period
// (s − period, s]; the power samples stamped inside it give that period's power (their mean), and
// a power sample's period is busy by every per-process sample whose period holds its stamp. The
// two need not share a grid or a period. A power sample in no sampled period had nobody busy
// (NVML writes no per-process sample then), if the samples covered its time.
void SetPowerWeights(const gpu::DeviceSample& d, UnitObservation& u) {
  if (d.power_samples.empty() || !d.process_utilization_supported || !d.process_util_period_us ||
      *d.process_util_period_us == 0)
    return;
  const uint64_t period = *d.process_util_period_us;
  const auto& power = d.power_samples;  // sorted by stamp
  auto first_at_or_after = [&power](uint64_t t) {
    return std::lower_bound(
        power.begin(), power.end(), t,
        [](const gpu::PowerSample& p, uint64_t v) { return p.timestamp_us < v; });
  };
  // Mean power over (s − period, s]; unknown when no power sample falls in it.
  auto watts_in = [&](uint64_t s) -> std::optional<double> {
    double sum = 0;
    int n = 0;
    for (auto it = first_at_or_after(s > period ? s - period + 1 : 0);
         it != power.end() && it->timestamp_us <= s; ++it)
      sum += it->watts, ++n;
    if (n == 0) return std::nullopt;
    return sum / n;
  };
  std::map<uint64_t, double> busy_at;                    // Σ activity per sample stamp
  std::map<uint32_t, std::pair<double, double>> by_pid;  // Σ activity × watts, Σ activity
  for (const auto& s : d.process_util) {
    const double a = std::min(1.0, s.sm_percent / 100.0);
    busy_at[s.timestamp_us] += a;
    if (const auto w = watts_in(s.timestamp_us)) {
      by_pid[s.pid].first += a * *w;
      by_pid[s.pid].second += a;
    }
  }
  for (auto& p : u.processes)
    if (const auto it = by_pid.find(p.pid); it != by_pid.end() && it->second.second > 0)
      p.busy_watts = it->second.first / it->second.second;
  const uint64_t from = d.process_util_window_start_us + d.process_util_uncovered_us;
  double idle_w = 0, idle = 0;
  for (const auto& p : power) {
    if (p.timestamp_us <= from || p.timestamp_us > d.process_util_window_end_us) continue;
    double busy = 0;  // every per-process sample whose period [s − period, s) holds the stamp
    for (auto it = busy_at.lower_bound(p.timestamp_us);
         it != busy_at.end() && it->first < p.timestamp_us + period; ++it)
      busy += it->second;
    busy = std::min(1.0, busy);
    idle_w += (1 - busy) * p.watts;
    idle += 1 - busy;
  }
  if (idle > 0) u.idle_time_watts = idle_w / idle;
}

// The memory-busy-time signal of a whole GPU: per-process memUtil where the driver gives
// per-process samples (the processes' shares add up to the unit's), else GPM's DRAM bandwidth over
// the window, else utilization.memory (one period). Per-process samples win over GPM although GPM
// covers the window: the two measure different things, and only memUtil says whose traffic it was.
void SetMemorySignal(const gpu::DeviceSample& d, UnitObservation& u) {
  if (d.process_utilization_supported) {
    u.memory_signal = MemorySignal::kProcessMemUtil;
  } else if (d.dram_bw_ratio) {
    u.memory_busy_fraction = d.dram_bw_ratio;
    u.memory_signal = MemorySignal::kGpmDramBandwidth;
  } else if (d.dcgm_dram_active) {
    u.memory_busy_fraction = d.dcgm_dram_active;
    u.memory_signal = MemorySignal::kDcgmDramActive;
  } else if (d.utilization_memory_percent) {
    u.memory_busy_fraction = *d.utilization_memory_percent / 100.0;
    u.memory_busy_is_instant = true;
    u.memory_signal = MemorySignal::kDeviceMemoryUtil;
  }
}

// The MPS server is infrastructure: `system`'s, with no share of busy time. A process that calls
// itself nvidia-cuda-mps-server but runs in a container holding the unit is that tenant's, and
// computes as any tenant does (a name must not make work free).
void KeepMpsServerApart(UnitObservation& u) {
  for (auto& p : u.processes) {
    if (!p.mps_server) continue;
    const bool tenant = p.owner && p.owner->kind == OwnerKind::kContainer &&
                        std::any_of(u.holders.begin(), u.holders.end(),
                                    [&](const Holding& h) { return h.owner == *p.owner; });
    if (tenant) {
      p.mps_server = false;
      continue;
    }
    p.owner = Owner{OwnerKind::kSystem, {}, {}, {}};
  }
}

// A GPU without MIG: one unit, in the sharing mode the context gives it.
UnitObservation ObserveWholeGpu(const gpu::DeviceSample* previous, const gpu::DeviceSample& d,
                                double seconds, const IntervalFacts& ctx) {
  UnitObservation u;
  u.uuid = d.uuid;
  u.mode = ctx.ModeOf(d.uuid);
  SetMemory(u, d.memory, previous ? &previous->memory : nullptr);
  u.busy_fraction = BusyFraction(d);
  u.busy_from_dcgm = !d.sm_active_ratio && !d.utilization_gpu_percent && d.dcgm_gr_active;
  u.busy_is_instant = !d.sm_active_ratio && d.utilization_gpu_percent.has_value();
  // utilization.gpu is one driver period's reading; the samples over the whole window are the
  // window's own (docs/attribution.md, "Compute").
  if (u.busy_is_instant)
    if (const auto b = SamplesBusyFraction(d, u.mode == SharingMode::kMps)) {
      u.busy_fraction = b;
      u.busy_is_instant = false;
      u.busy_from_samples = true;
    }
  const auto shares = SmAndMemoryBusyShares(d);
  u.processes = ObserveProcesses(d.processes, previous ? &previous->processes : nullptr,
                                 shares.first, shares.second, &d, ctx);
  SetMemorySignal(d, u);
  u.samples_uncovered_seconds = static_cast<double>(d.process_util_uncovered_us) / 1e6;
  if (d.process_util_period_us)
    u.samples_period_seconds = static_cast<double>(*d.process_util_period_us) / 1e6;
  if (SmSharesExtrapolated(d))
    for (auto& p : u.processes) p.sm_extrapolated = p.sm_fraction.has_value();
  if (MemorySharesExtrapolated(d))
    for (auto& p : u.processes) p.memory_busy_extrapolated = p.memory_busy_fraction.has_value();
  u.energy_joules = GpuEnergyJoules(previous, d, seconds, &u.energy_rule);
  SetPowerWeights(d, u);
  u.holders = ctx.HoldersOf(d.uuid);
  KeepMpsServerApart(u);
  return u;
}

}  // namespace

std::vector<UnitObservation> Observe(const gpu::DeviceSample* previous, const gpu::DeviceSample& d,
                                     double seconds, const IntervalFacts& ctx,
                                     std::optional<double> idle_watts) {
  std::vector<UnitObservation> out;
  if (d.lost || d.uuid.empty()) return out;
  if (previous && (previous->uuid != d.uuid || previous->lost)) previous = nullptr;
  if (d.mig_enabled) return ObserveMig(previous, d, seconds, ctx, idle_watts);
  out.push_back(ObserveWholeGpu(previous, d, seconds, ctx));
  return out;
}

}  // namespace gpumeter::attribution
