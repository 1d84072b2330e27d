#include "attribution/observe.h"

#include <algorithm>
#include <set>

namespace gpumeter::attribution {

std::map<uint32_t, double> SmShares(const gpu::DeviceSample& d) {
  std::map<uint32_t, double> out;
  if (!d.process_utilization_supported) return out;
  const double window_us = static_cast<double>(d.process_util_window_end_us - d.process_util_window_start_us);
  std::set<uint64_t> stamps;
  for (const auto& s : d.process_util) stamps.insert(s.timestamp_us);
  double period_us = 0;
  for (auto it = stamps.begin(); it != stamps.end() && std::next(it) != stamps.end(); ++it) {
    const double gap = static_cast<double>(*std::next(it) - *it);
    if (period_us == 0 || gap < period_us) period_us = gap;
  }
  std::map<uint32_t, double> sum_pct;
  std::map<uint32_t, int> count;
  for (const auto& s : d.process_util) {
    sum_pct[s.pid] += s.sm_percent;
    ++count[s.pid];
  }
  for (const auto& [pid, pct] : sum_pct) {
    // One distinct timestamp: the period is unknown; take the samples' mean as the share.
    const double periods = period_us > 0 && window_us > 0 ? window_us / period_us : count[pid];
    out[pid] = std::clamp(pct / 100.0 / std::max(periods, static_cast<double>(count[pid])), 0.0, 1.0);
  }
  for (const auto& p : d.processes)
    if (!out.count(p.pid)) out[p.pid] = 0.0;  // listed but no sample: idle in the window
  return out;
}

namespace {

// Mean of two readings, unknown if either is; rounds down, without overflow.
std::optional<uint64_t> Mean(std::optional<uint64_t> a, std::optional<uint64_t> b) {
  if (!a || !b) return std::nullopt;
  return *a / 2 + *b / 2 + (*a % 2 + *b % 2) / 2;
}

void SetMemory(UnitObservation& u, const std::optional<gpu::MemoryInfo>& now, const std::optional<gpu::MemoryInfo>* prev) {
  if (!now) return;
  u.memory_total_bytes = now->total_bytes;
  u.memory_used_bytes = now->used_bytes;
  u.memory_reserved_bytes = now->reserved_bytes;
  if (prev && *prev) {
    u.memory_used_bytes = Mean((*prev)->used_bytes, now->used_bytes);
    u.memory_reserved_bytes = Mean((*prev)->reserved_bytes, now->reserved_bytes);
  }
}

}  // namespace

std::vector<UnitObservation> Observe(const gpu::DeviceSample* previous, const gpu::DeviceSample& d,
                                     double seconds, const ObserveContext& ctx) {
  std::vector<UnitObservation> out;
  if (d.lost || d.uuid.empty()) return out;
  if (previous && (previous->uuid != d.uuid || previous->lost)) previous = nullptr;
  auto processes = [&](const std::vector<gpu::GpuProcess>& procs, const std::vector<gpu::GpuProcess>* before,
                       const std::map<uint32_t, double>& shares) {
    std::map<uint32_t, std::pair<std::optional<uint64_t>, std::optional<uint64_t>>> mem;  // before, now
    for (const auto& p : procs) mem[p.pid].second = p.used_memory_bytes ? p.used_memory_bytes : std::nullopt;
    std::map<uint32_t, bool> unknown;
    for (const auto& p : procs) unknown[p.pid] = unknown[p.pid] || !p.used_memory_bytes;
    if (before) {
      for (const auto& p : *before) {
        mem[p.pid].first = p.used_memory_bytes;
        unknown[p.pid] = unknown[p.pid] || !p.used_memory_bytes;
      }
    }
    std::vector<ProcessObservation> ps;
    for (const auto& [pid, m] : mem) {
      ProcessObservation o;
      o.pid = pid;
      o.owner = ctx.owner ? ctx.owner(pid) : std::nullopt;
      if (!unknown[pid]) {
        o.memory_bytes = before ? Mean(m.first.value_or(0), m.second.value_or(0)) : m.second;
      }
      if (auto it = shares.find(pid); it != shares.end()) o.sm_fraction = it->second;
      if (ctx.mps_thread_fraction) o.mps_thread_fraction = ctx.mps_thread_fraction(pid);
      ps.push_back(o);
    }
    return ps;
  };
  if (d.mig_enabled) {
    for (const auto& m : d.mig_instances) {
      UnitObservation u;
      u.uuid = m.uuid;
      u.mode = SharingMode::kMig;
      const gpu::MigInstanceSample* before = nullptr;
      if (previous)
        for (const auto& pm : previous->mig_instances)
          if (pm.uuid == m.uuid) before = &pm;
      SetMemory(u, m.memory, before ? &before->memory : nullptr);
      u.busy_fraction = m.sm_active_ratio;
      u.processes = processes(m.processes, before ? &before->processes : nullptr, {});
      out.push_back(std::move(u));
    }
    return out;
  }
  UnitObservation u;
  u.uuid = d.uuid;
  u.mode = ctx.sharing ? ctx.sharing(d.uuid) : SharingMode::kExclusive;
  SetMemory(u, d.memory, previous ? &previous->memory : nullptr);
  // GPM activity covers the same window as the per-process samples; utilization.gpu is only
  // the driver's last period.
  if (d.sm_active_ratio) u.busy_fraction = d.sm_active_ratio;
  else if (d.utilization_gpu_percent) u.busy_fraction = *d.utilization_gpu_percent / 100.0;
  u.processes = processes(d.processes, previous ? &previous->processes : nullptr, SmShares(d));
  if (previous && previous->energy_joules && d.energy_joules && *d.energy_joules >= *previous->energy_joules) {
    u.energy_joules = *d.energy_joules - *previous->energy_joules;
    u.energy_rule = "energy counter delta";
  } else if (previous && previous->power_watts && d.power_watts) {
    u.energy_joules = (*previous->power_watts + *d.power_watts) / 2 * seconds;
    u.energy_rule = "mean board power x time (energy counter missing or reset)";
  }
  out.push_back(std::move(u));
  return out;
}

}  // namespace gpumeter::attribution
