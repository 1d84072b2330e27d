#include "sim/scenario/truth.h"

#include <algorithm>
#include <cmath>

namespace gpumeter::scenario {

bool IsAlive(const Process& p, double t_s) {
  return t_s >= p.start_s && (!p.end_s || t_s < *p.end_s);
}

const Process* LiveProcess(const Scenario& s, uint32_t pid, double t_s) {
  for (const auto& p : s.processes)
    if (p.pid == pid && IsAlive(p, t_s)) return &p;
  return nullptr;
}

double DutyAt(const Process& p, const DeviceUsage& u, double t_s) {
  if (!IsAlive(p, t_s)) return 0;
  double duty = 0;
  for (const auto& point : u.duty) {
    if (point.at_s > t_s) break;
    duty = point.duty;
  }
  return duty;
}

double MemoryDutyAt(const Process& p, const DeviceUsage& u, double t_s) {
  if (!u.memory_duty) return DutyAt(p, u, t_s) / 2;
  if (!IsAlive(p, t_s)) return 0;
  double duty = 0;
  for (const auto& point : *u.memory_duty) {
    if (point.at_s > t_s) break;
    duty = point.duty;
  }
  return duty;
}

uint64_t MemoryAt(const Process& p, const DeviceUsage& u, double t_s) {
  if (!IsAlive(p, t_s)) return 0;
  const double grown =
      static_cast<double>(u.memory_bytes) + u.memory_growth_bytes_per_s * (t_s - p.start_s);
  uint64_t bytes = static_cast<uint64_t>(std::floor(grown));
  if (u.memory_max_bytes) bytes = std::min(bytes, *u.memory_max_bytes);
  return bytes;
}

UnitTruth UnitAt(const Scenario& s, const std::string& unit_uuid, double t_s) {
  UnitTruth out;
  double demand = 0;
  for (const auto& p : s.processes) {
    if (!IsAlive(p, t_s)) continue;
    for (const auto& u : p.usage) {
      if (u.unit_uuid != unit_uuid) continue;
      ProcessTruth pt{&p, &u, DutyAt(p, u, t_s), 0, MemoryDutyAt(p, u, t_s), MemoryAt(p, u, t_s)};
      demand += pt.duty;
      out.process_memory_bytes += pt.memory_bytes;
      out.processes.push_back(pt);
    }
  }
  out.busy = std::min(1.0, demand);
  const double scale = demand > 1.0 ? 1.0 / demand : 1.0;
  double memory_demand = 0;
  for (auto& pt : out.processes) {
    pt.sm_share = pt.duty * scale;
    pt.memory_share *= scale;  // held the memory duty asked for; now what the time given allows
    memory_demand += pt.memory_share;
  }
  const double memory_scale = memory_demand > 1.0 ? 1.0 / memory_demand : 1.0;
  for (auto& pt : out.processes) pt.memory_share *= memory_scale;
  out.memory_busy = std::min(1.0, memory_demand);
  return out;
}

double GpuBusyAt(const Scenario& s, const Gpu& g, double t_s) {
  if (!g.mig_enabled) return UnitAt(s, g.uuid, t_s).busy;
  double busy = 0;
  for (const auto& m : g.mig_instances)
    busy += UnitAt(s, m.uuid, t_s).busy * m.slices / static_cast<double>(g.mig_total_slices);
  return busy;
}

double GpuPowerWattsAt(const Scenario& s, const Gpu& g, double t_s) {
  return g.power.idle_watts + (g.power.max_watts - g.power.idle_watts) * GpuBusyAt(s, g, t_s);
}

std::vector<double> UnitChangeTimes(const Scenario& s, const std::string& unit_uuid, double t0_s,
                                    double t1_s) {
  std::vector<double> cuts{t0_s, t1_s};
  for (const auto& p : s.processes) {
    for (const auto& u : p.usage) {
      if (u.unit_uuid != unit_uuid) continue;
      cuts.push_back(p.start_s);
      if (p.end_s) cuts.push_back(*p.end_s);
      for (const auto& d : u.duty) cuts.push_back(p.start_s > d.at_s ? p.start_s : d.at_s);
      if (u.memory_duty)
        for (const auto& d : *u.memory_duty)
          cuts.push_back(p.start_s > d.at_s ? p.start_s : d.at_s);
    }
  }
  std::sort(cuts.begin(), cuts.end());
  std::vector<double> out;
  for (double c : cuts)
    if (c >= t0_s && c <= t1_s && (out.empty() || c > out.back())) out.push_back(c);
  return out;
}

double UnitBusySeconds(const Scenario& s, const std::string& unit_uuid, double t0_s, double t1_s) {
  if (t1_s <= t0_s) return 0;
  // Busy only changes where a process starts, ends or changes duty: integrate exactly between them.
  const auto cuts = UnitChangeTimes(s, unit_uuid, t0_s, t1_s);
  double total = 0;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    const double a = cuts[i], b = cuts[i + 1];
    total += UnitAt(s, unit_uuid, a + (b - a) / 2).busy * (b - a);
  }
  return total;
}

double UnitMemoryBusySeconds(const Scenario& s, const std::string& unit_uuid, double t0_s,
                             double t1_s) {
  if (t1_s <= t0_s) return 0;
  const auto cuts = UnitChangeTimes(s, unit_uuid, t0_s, t1_s);
  double total = 0;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    const double a = cuts[i], b = cuts[i + 1];
    total += UnitAt(s, unit_uuid, a + (b - a) / 2).memory_busy * (b - a);
  }
  return total;
}

double GpuMemoryBusySeconds(const Scenario& s, const Gpu& g, double t0_s, double t1_s) {
  if (!g.mig_enabled) return UnitMemoryBusySeconds(s, g.uuid, t0_s, t1_s);
  double total = 0;
  for (const auto& m : g.mig_instances)
    total += UnitMemoryBusySeconds(s, m.uuid, t0_s, t1_s) * m.slices /
             static_cast<double>(g.mig_total_slices);
  return total;
}

double GpuBusySeconds(const Scenario& s, const Gpu& g, double t0_s, double t1_s) {
  if (!g.mig_enabled) return UnitBusySeconds(s, g.uuid, t0_s, t1_s);
  double total = 0;
  for (const auto& m : g.mig_instances)
    total +=
        UnitBusySeconds(s, m.uuid, t0_s, t1_s) * m.slices / static_cast<double>(g.mig_total_slices);
  return total;
}

double GpuEnergyJoulesAt(const Scenario& s, const Gpu& g, double t_s) {
  const double t = std::max(0.0, t_s);
  return g.energy_start_joules + g.power.idle_watts * t +
         (g.power.max_watts - g.power.idle_watts) * GpuBusySeconds(s, g, 0, t);
}

}  // namespace gpumeter::scenario
