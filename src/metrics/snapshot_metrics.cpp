#include "metrics/snapshot_metrics.h"

#include <prometheus/text_serializer.h>

#include <map>
#include <sstream>

namespace gpumeter::metrics {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

class Families {
 public:
  MetricFamily& Get(const std::string& name, const std::string& help, MetricType type) {
    auto it = index_.find(name);
    if (it != index_.end()) return families_[it->second];
    index_[name] = families_.size();
    families_.push_back(MetricFamily{name, help, type, {}});
    return families_.back();
  }
  void Add(const std::string& name, const std::string& help, MetricType type,
           std::vector<ClientMetric::Label> labels, double value) {
    ClientMetric m;
    m.label = std::move(labels);
    if (type == MetricType::Counter) m.counter.value = value;
    else m.gauge.value = value;
    Get(name, help, type).metric.push_back(std::move(m));
  }
  std::vector<MetricFamily> Take() { return std::move(families_); }

 private:
  std::vector<MetricFamily> families_;
  std::map<std::string, size_t> index_;
};

constexpr auto G = MetricType::Gauge;
constexpr auto C = MetricType::Counter;

}  // namespace

std::vector<MetricFamily> BuildFamilies(const sampler::SamplerHealth& health, const NodeContext& ctx,
                                        std::chrono::steady_clock::time_point now) {
  Families f;
  const std::vector<ClientMetric::Label> src{{"node", ctx.node}, {"source", "nvml"}};
  f.Add("gpumeter_source_up", "1 if the last pass of the source succeeded and no call is stalled.", G, src,
        health.latest && health.latest->ok && health.stalled_call.empty() ? 1 : 0);
  f.Add("gpumeter_source_passes_total", "Sampling passes of the source.", C, src, static_cast<double>(health.passes));
  f.Add("gpumeter_source_failures_total", "Sampling passes that failed as a whole.", C, src, static_cast<double>(health.failures));
  f.Add("gpumeter_source_deadline_exceeded_total", "Driver calls that ran past their deadline.", C, src,
        static_cast<double>(health.deadline_exceeded));
  if (health.last_good) {
    f.Add("gpumeter_source_last_success_age_seconds", "Seconds since the last successful pass.", G, src,
          std::chrono::duration<double>(now - health.last_good->taken).count());
    f.Add("gpumeter_source_duration_seconds", "Duration of the last successful pass.", G, src,
          health.last_good->duration_seconds);
  }
  if (!health.last_good) return f.Take();

  for (const auto& d : health.last_good->snapshot.devices) {
    const std::vector<ClientMetric::Label> gl{{"node", ctx.node}, {"gpu", std::to_string(d.index)}, {"uuid", d.uuid}};
    f.Add("gpumeter_gpu_info", "GPU identity; value is always 1.", G,
          {{"node", ctx.node}, {"gpu", std::to_string(d.index)}, {"uuid", d.uuid}, {"model", d.name},
           {"mig", d.mig_enabled ? "enabled" : "disabled"},
           {"sharing_mode", ctx.sharing_mode ? ctx.sharing_mode(d.uuid) : "unknown"}},
          1);
    f.Add("gpumeter_gpu_lost", "1 if the GPU fell off the bus (NVML_ERROR_GPU_IS_LOST).", G, gl, d.lost ? 1 : 0);
    for (const auto& e : d.errors) {
      auto l = gl;
      l.push_back({"call", e.call});
      l.push_back({"code", std::to_string(e.code)});
      f.Add("gpumeter_nvml_call_failed", "1 for each NVML call that failed on this GPU in the last pass.", G, l, 1);
    }
    if (d.memory) {
      f.Add("gpumeter_gpu_memory_total_bytes", "Framebuffer memory of the GPU.", G, gl, static_cast<double>(d.memory->total_bytes));
      f.Add("gpumeter_gpu_memory_used_bytes", "Framebuffer memory in use (excludes the driver reservation when it is known).", G, gl,
            static_cast<double>(d.memory->used_bytes));
      if (d.memory->reserved_bytes)
        f.Add("gpumeter_gpu_memory_reserved_bytes", "Framebuffer memory reserved by the driver and firmware.", G, gl,
              static_cast<double>(*d.memory->reserved_bytes));
    }
    if (d.utilization_gpu_percent)
      f.Add("gpumeter_gpu_busy_ratio", "Fraction of the last sample period in which a kernel ran (NVML utilization.gpu / 100).", G, gl,
            *d.utilization_gpu_percent / 100.0);
    if (d.sm_active_ratio)
      f.Add("gpumeter_gpu_sm_active_ratio", "GPM SM activity between the last two passes, 0-1.", G, gl, *d.sm_active_ratio);
    if (d.power_watts) f.Add("gpumeter_gpu_power_watts", "Board power draw.", G, gl, *d.power_watts);
    if (d.energy_joules)
      f.Add("gpumeter_gpu_energy_joules_total", "Energy used since the driver was loaded (NVML counter).", C, gl, *d.energy_joules);

    // Process memory and SM samples, by owner.
    const auto sm_latest = gpu::LatestSmPercent(d);
    auto process_labels = [&](uint32_t pid, const std::string& unit) {
      std::vector<ClientMetric::Label> l{{"node", ctx.node}, {"uuid", unit}, {"pid", std::to_string(pid)}};
      const auto owner = ctx.owner ? ctx.owner(pid) : std::nullopt;
      l.push_back({"namespace", owner ? owner->ns : ""});
      l.push_back({"pod", owner ? owner->pod : ""});
      l.push_back({"container", owner ? owner->container : ""});
      l.push_back({"owner", !owner ? "unattributed" : owner->pod.empty() ? "system" : "container"});
      return l;
    };
    auto add_processes = [&](const std::vector<gpu::GpuProcess>& procs, const std::string& unit, bool util) {
      for (const auto& p : procs) {
        const auto l = process_labels(p.pid, unit);
        if (p.used_memory_bytes)
          f.Add("gpumeter_process_memory_used_bytes", "GPU memory used by a process (NVML usedGpuMemory).", G, l,
                static_cast<double>(*p.used_memory_bytes));
        // A listed process without a sample in the window was idle: NVML only reports busy PIDs.
        if (util)
          f.Add("gpumeter_process_sm_ratio", "Latest per-process SM sample, 0-1; 0 when the process had no sample in the window (NVML reports busy processes only); absent where the driver has no per-process utilization.", G, l,
                sm_latest.count(p.pid) ? sm_latest.at(p.pid) / 100.0 : 0.0);
      }
    };
    const bool util = d.process_utilization_supported && !d.mig_enabled;
    if (!d.mig_enabled) add_processes(d.processes, d.uuid, util);
    for (const auto& m : d.mig_instances) {
      std::vector<ClientMetric::Label> ml{{"node", ctx.node}, {"gpu", std::to_string(d.index)}, {"uuid", d.uuid},
                                          {"mig_uuid", m.uuid}, {"gpu_instance", std::to_string(m.gpu_instance_id)}};
      if (m.memory) {
        f.Add("gpumeter_mig_memory_total_bytes", "Memory of a MIG instance.", G, ml, static_cast<double>(m.memory->total_bytes));
        f.Add("gpumeter_mig_memory_used_bytes", "Memory in use in a MIG instance.", G, ml, static_cast<double>(m.memory->used_bytes));
      }
      if (m.sm_active_ratio)
        f.Add("gpumeter_mig_sm_active_ratio", "GPM SM activity of a MIG GPU instance, 0-1.", G, ml, *m.sm_active_ratio);
      add_processes(m.processes, m.uuid, false);
    }
  }
  return f.Take();
}

std::string RenderText(const std::vector<MetricFamily>& families) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace gpumeter::metrics
