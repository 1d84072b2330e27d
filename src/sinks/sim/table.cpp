#include "sinks/sim/table.h"

#include <fmt/format.h>

#include <map>

#include "common/text_cell.h"

namespace gpumeter::app {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string Gib(std::optional<uint64_t> b) {
  return b ? fmt::format("{:.1f}", static_cast<double>(*b) / kGiB) : "?";
}

std::string OwnerText(const node::NodeState& state, uint32_t pid) {
  const auto it = state.owners.find(pid);
  if (it == state.owners.end()) return "unattributed (not resolved)";
  const auto& o = it->second;
  switch (o.kind) {
    case domain::OwnerKind::kContainer:
      return TerminalCell(o.ns + "/" + o.pod + "/" + o.container);
    case domain::OwnerKind::kSystem:
      return "system (host process)";
    case domain::OwnerKind::kIdle:  // never a process's owner
    case domain::OwnerKind::kUnattributed:
      break;
  }
  return "unattributed: " + o.how;
}

void Processes(std::string& out, const node::NodeState& state,
               const std::vector<gpu::GpuProcess>& procs, const std::map<uint32_t, uint32_t>& sm,
               bool util_known) {
  for (const auto& p : procs) {
    std::string smtext = "n/a";
    if (util_known) {
      auto it = sm.find(p.pid);
      smtext = fmt::format("{}%", it == sm.end() ? 0u : it->second);
    }
    out += fmt::format("      {:<8} {:<4} {:<48} {:>9} {:>6}\n", p.pid,
                       p.type == gpu::ProcessType::kMps ? "MPS" : "C", OwnerText(state, p.pid),
                       Gib(p.used_memory_bytes) + " GiB", smtext);
  }
}

std::string RowOwner(const domain::Owner& o) {
  switch (o.kind) {
    case domain::OwnerKind::kContainer:
      return TerminalCell(o.ns + "/" + o.pod + "/" + o.container);
    case domain::OwnerKind::kIdle:
      return "idle";
    case domain::OwnerKind::kSystem:
      return "system";
    case domain::OwnerKind::kUnattributed:
      break;
  }
  return "unattributed";
}

void Devices(std::string& out, const node::NodeState& state) {
  const auto& snap = state.last_good->snapshot;
  out += fmt::format("{:<3} {:<24} {:<14} {:<13} {:>5} {:>17} {:>7} {:>11}\n", "GPU", "MODEL",
                     "UUID", "SHARING", "BUSY", "MEM USED/TOTAL GiB", "POWER", "ENERGY kJ");
  for (const auto& d : snap.devices) {
    const std::string busy = d.utilization_gpu_percent
                                 ? fmt::format("{}%", *d.utilization_gpu_percent)
                             : d.sm_active_ratio ? fmt::format("{:.0f}%*", *d.sm_active_ratio * 100)
                                                 : "?";
    const auto* unit = state.FindUnit(d.uuid);
    const std::string mode = d.mig_enabled ? "mig" : unit ? domain::ToString(unit->mode) : "?";
    out +=
        fmt::format("{:<3} {:<24} {:<14} {:<13} {:>5} {:>17} {:>7} {:>11}{}\n", d.index,
                    d.name.substr(0, 24), d.uuid.substr(0, 12) + "..", mode, busy,
                    d.memory ? Gib(d.memory->used_bytes) + " / " + Gib(d.memory->total_bytes) : "?",
                    d.power_watts ? fmt::format("{:.0f} W", *d.power_watts) : "?",
                    d.energy_joules ? fmt::format("{:.1f}", *d.energy_joules / 1000) : "?",
                    d.lost ? "  GPU LOST" : "");
    for (const auto& e : d.errors)
      out += fmt::format("      ! {}: {} (code {})\n", e.call, e.message, e.code);
    const auto sm = gpu::LatestSmPercent(d);
    if (!d.mig_enabled) {
      if (!d.processes.empty())
        out += fmt::format("      {:<8} {:<4} {:<48} {:>9} {:>6}\n", "PID", "TYPE", "OWNER",
                           "MEMORY", "SM");
      Processes(out, state, d.processes, sm, d.process_utilization_supported);
    }
    for (const auto& m : d.mig_instances) {
      out += fmt::format(
          "    MIG gi={:<3} {:<38} {:>17} {:>9}\n", m.gpu_instance_id, m.name,
          m.memory ? Gib(m.memory->used_bytes) + " / " + Gib(m.memory->total_bytes) : "?",
          m.sm_active_ratio ? fmt::format("SM {:.0f}%*", *m.sm_active_ratio * 100) : "SM ?");
      Processes(out, state, m.processes, sm, false);
    }
  }
  out += "(* GPM SM activity; n/a: the driver gives no per-process utilization here)\n";
}

void Units(std::string& out, const node::NodeState& state) {
  if (state.intervals == 0) return;
  out +=
      "\nATTRIBUTION since start: each unit's owners add up to the unit (HELD: share allocated by "
      "the kubelet)\n";
  out += fmt::format("    {:<52} {:>6} {:>8} {:>11} {:>10}\n", "OWNER", "HELD", "COMPUTE",
                     "MEMORY GiB", "ENERGY kJ");
  for (const auto& u : state.units) {
    const auto ut = state.unit_totals.find(u.uuid);
    if (ut == state.unit_totals.end() || ut->second.seconds <= 0) continue;
    const double secs = ut->second.seconds;
    const std::string what = u.mig_profile.empty() ? fmt::format("GPU {}", u.gpu_index)
                                                   : fmt::format("GPU {} MIG {} gi={}", u.gpu_index,
                                                                 u.mig_profile, u.mig_gpu_instance);
    out += fmt::format("  {} {}: {}{} [{}]\n", what, u.uuid, domain::ToString(u.mode),
                       u.replicas > 1 ? fmt::format(" x{}", u.replicas) : "", u.evidence);
    for (const auto& [key, t] : state.totals) {
      if (key.first != u.uuid) continue;
      const bool energy_known = ut->second.energy_unknown_seconds < secs;
      out += fmt::format("    {:<52} {:>6} {:>7.1f}% {:>11.2f} {:>10}\n",
                         RowOwner(key.second).substr(0, 52),
                         t.requested_share_seconds > 0
                             ? fmt::format("{:.0f}%", t.requested_share_seconds / secs * 100)
                             : "-",
                         t.compute_seconds / secs * 100, t.memory_byte_seconds / secs / kGiB,
                         energy_known ? fmt::format("{:.2f}", t.energy_joules / 1000) : "?");
    }
  }
  if (!state.allocation_problems.empty())
    for (const auto& p : state.allocation_problems) out += "  ! allocation: " + p + "\n";
}

void Findings(std::string& out, const node::NodeState& state) {
  if (state.findings.empty()) {
    out += "\nFindings: none\n";
    return;
  }
  out += fmt::format("\nFindings ({} open; `gpumeter audit --agent URL` or /api/v2/findings):\n",
                     state.findings.size());
  for (const auto& f : state.findings) {
    const std::string who = f.pod.empty() ? (f.process.empty() ? f.unit_uuid : "host " + f.process)
                                          : f.ns + "/" + f.pod + "/" + f.container;
    out += fmt::format("  {:<8} {:<23} {}\n           {}\n", guard::ToString(f.severity),
                       guard::ToString(f.kind), TerminalCell(who), TerminalCell(f.evidence));
  }
}

}  // namespace

std::string RenderTable(const gpu::SamplerHealth& health, const node::NodeState& state) {
  std::string out;
  if (!health.stalled_call.empty())
    out +=
        fmt::format("!! NVML call {} has not returned for {:.1f} s: showing the last good sample\n",
                    health.stalled_call, health.stalled_seconds);
  if (health.latest && !health.latest->ok)
    out += fmt::format("!! last pass failed: {}\n", health.latest->error);
  for (const auto& s : state.sources)
    if (s.configured && !s.up)
      out += fmt::format("!! source {} is down: {} (using its last good data)\n", s.name,
                         s.last_error);
  if (!state.last_good) return out + "waiting for the first sample...\n";
  Devices(out, state);
  Units(out, state);
  Findings(out, state);
  return out;
}

}  // namespace gpumeter::app
