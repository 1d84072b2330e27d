#include "cli/table.h"

#include <fmt/format.h>

#include <map>

namespace gpumeter::cli {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string Gib(std::optional<uint64_t> b) { return b ? fmt::format("{:.1f}", static_cast<double>(*b) / kGiB) : "?"; }

std::string OwnerText(const metrics::NodeContext& ctx, uint32_t pid) {
  const auto o = ctx.owner ? ctx.owner(pid) : std::nullopt;
  if (!o) return "unattributed";
  if (o->pod.empty()) return "system (host process)";
  return o->ns + "/" + o->pod + "/" + o->container;
}

void Processes(std::string& out, const metrics::NodeContext& ctx, const std::vector<gpu::GpuProcess>& procs,
               const std::map<uint32_t, uint32_t>& sm, bool util_known) {
  for (const auto& p : procs) {
    std::string smtext = "n/a";
    if (util_known) {
      auto it = sm.find(p.pid);
      smtext = fmt::format("{}%", it == sm.end() ? 0u : it->second);
    }
    out += fmt::format("      {:<8} {:<4} {:<48} {:>9} {:>6}\n", p.pid, p.type == gpu::ProcessType::kMps ? "MPS" : "C",
                       OwnerText(ctx, p.pid), Gib(p.used_memory_bytes) + " GiB", smtext);
  }
}

}  // namespace

std::string RenderTable(const sampler::SamplerHealth& health, const metrics::NodeContext& ctx) {
  std::string out;
  if (!health.stalled_call.empty())
    out += fmt::format("!! NVML call {} has not returned for {:.1f} s: showing the last good sample\n",
                       health.stalled_call, health.stalled_seconds);
  if (health.latest && !health.latest->ok) out += fmt::format("!! last pass failed: {}\n", health.latest->error);
  if (!health.last_good) return out + "waiting for the first sample...\n";
  const auto& snap = health.last_good->snapshot;
  out += fmt::format("{:<3} {:<24} {:<14} {:<13} {:>5} {:>17} {:>7} {:>11}\n", "GPU", "MODEL", "UUID", "SHARING",
                     "BUSY", "MEM USED/TOTAL GiB", "POWER", "ENERGY kJ");
  for (const auto& d : snap.devices) {
    const std::string busy = d.utilization_gpu_percent ? fmt::format("{}%", *d.utilization_gpu_percent)
                             : d.sm_active_ratio       ? fmt::format("{:.0f}%*", *d.sm_active_ratio * 100)
                                                       : "?";
    out += fmt::format("{:<3} {:<24} {:<14} {:<13} {:>5} {:>17} {:>7} {:>11}{}\n", d.index, d.name.substr(0, 24),
                       d.uuid.substr(0, 12) + "..", ctx.sharing_mode ? ctx.sharing_mode(d.uuid) : "?", busy,
                       d.memory ? Gib(d.memory->used_bytes) + " / " + Gib(d.memory->total_bytes) : "?",
                       d.power_watts ? fmt::format("{:.0f} W", *d.power_watts) : "?",
                       d.energy_joules ? fmt::format("{:.1f}", *d.energy_joules / 1000) : "?",
                       d.lost ? "  GPU LOST" : "");
    for (const auto& e : d.errors) out += fmt::format("      ! {}: {} (code {})\n", e.call, e.message, e.code);
    const auto sm = gpu::LatestSmPercent(d);
    if (!d.mig_enabled) {
      if (!d.processes.empty())
        out += fmt::format("      {:<8} {:<4} {:<48} {:>9} {:>6}\n", "PID", "TYPE", "OWNER", "MEMORY", "SM");
      Processes(out, ctx, d.processes, sm, d.process_utilization_supported);
    }
    for (const auto& m : d.mig_instances) {
      out += fmt::format("    MIG gi={:<3} {:<38} {:>17} {:>9}\n", m.gpu_instance_id, m.name,
                         m.memory ? Gib(m.memory->used_bytes) + " / " + Gib(m.memory->total_bytes) : "?",
                         m.sm_active_ratio ? fmt::format("SM {:.0f}%*", *m.sm_active_ratio * 100) : "SM ?");
      Processes(out, ctx, m.processes, sm, false);
    }
  }
  out += "(* GPM SM activity; n/a: the driver gives no per-process utilization here)\n";
  return out;
}

}  // namespace gpumeter::cli
