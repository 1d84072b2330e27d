#include "app/diagnose/probe.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "common/json/key_case.h"
#include "sources/nvml/nvml_gpu_source.h"

namespace gpumeter::app {
namespace {

using nlohmann::json;

template <typename T>
json Opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);  // unknown stays null, never 0
}

json ToJson(const gpu::MemoryInfo& m) {
  return {{"total_bytes", m.total_bytes},
          {"used_bytes", m.used_bytes},
          {"reserved_bytes", Opt(m.reserved_bytes)},
          {"free_bytes", m.free_bytes}};
}

json ToJson(const std::vector<gpu::GpuProcess>& procs) {
  json out = json::array();
  for (const auto& p : procs)
    out.push_back({{"pid", p.pid},
                   {"type", p.type == gpu::ProcessType::kMps ? "mps" : "compute"},
                   {"used_memory_bytes", Opt(p.used_memory_bytes)},
                   {"gpu_instance_id", Opt(p.gpu_instance_id)},
                   {"compute_instance_id", Opt(p.compute_instance_id)}});
  return out;
}

json ToJson(const gpu::DeviceSample& d) {
  json j = {{"index", d.index},
            {"uuid", d.uuid},
            {"name", d.name},
            {"lost", d.lost},
            {"memory", d.memory ? ToJson(*d.memory) : json(nullptr)},
            {"utilization_gpu_percent", Opt(d.utilization_gpu_percent)},
            {"power_watts", Opt(d.power_watts)},
            {"energy_joules", Opt(d.energy_joules)},
            {"compute_mode", d.compute_mode ? json(gpu::ToString(*d.compute_mode)) : json(nullptr)},
            {"mig_enabled", d.mig_enabled},
            {"processes", ToJson(d.processes)},
            {"process_utilization_supported", d.process_utilization_supported},
            {"sm_active_ratio", Opt(d.sm_active_ratio)}};
  json util = json::array();
  for (const auto& s : d.process_util)
    util.push_back({{"pid", s.pid},
                    {"timestamp_us", s.timestamp_us},
                    {"sm_percent", s.sm_percent},
                    {"memory_percent", s.memory_percent}});
  j["process_util"] = util;
  j["process_util_window_us"] = {d.process_util_window_start_us, d.process_util_window_end_us};
  json migs = json::array();
  for (const auto& m : d.mig_instances)
    migs.push_back({{"uuid", m.uuid},
                    {"name", m.name},
                    {"gpu_instance_id", m.gpu_instance_id},
                    {"compute_instance_id", m.compute_instance_id},
                    {"memory", m.memory ? ToJson(*m.memory) : json(nullptr)},
                    {"processes", ToJson(m.processes)},
                    {"sm_active_ratio", Opt(m.sm_active_ratio)}});
  j["mig_instances"] = migs;
  json errors = json::array();
  for (const auto& e : d.errors)
    errors.push_back({{"call", e.call}, {"code", e.code}, {"message", e.message}});
  j["errors"] = errors;
  return j;
}

}  // namespace

int RunProbe(const ProbeOptions& o) {
  nvml::NvmlSourceOptions no;
  if (!o.nvml_library.empty()) no.library_candidates = {o.nvml_library};
  no.first_util_lookback_us = static_cast<uint64_t>(o.interval.count() * 1e6);
  auto source = nvml::NvmlGpuSource::Create(no);
  if (!source) {
    spdlog::error("{}", source.error().message);
    return 1;
  }
  const auto& c = (*source)->capabilities();
  json out = {{"library", c.library_path},
              {"driver_version", c.driver_version},
              {"nvml_version", c.nvml_version},
              {"process_api", c.process_api},
              {"memory_api", c.memory_api},
              {"util_api", c.util_api},
              {"gpm", c.gpm},
              {"mig", c.mig}};
  json samples = json::array();
  for (int i = 0; i < o.samples; ++i) {
    if (i) std::this_thread::sleep_for(o.interval);
    auto snap = (*source)->Sample();
    if (!snap) {
      samples.push_back({{"error", snap.error().message}});
      continue;
    }
    json devices = json::array();
    for (const auto& d : snap->devices) devices.push_back(ToJson(d));
    json errors = json::array();
    for (const auto& e : snap->errors)
      errors.push_back({{"call", e.call}, {"code", e.code}, {"message", e.message}});
    samples.push_back(
        {{"timestamp_us", snap->timestamp_us}, {"devices", devices}, {"errors", errors}});
  }
  out["samples"] = samples;
  const auto camel = json_case::ToCamelCase(out);  // as all of gpumeter's JSON
  // The driver's names and messages may not be UTF-8: U+FFFD rather than an exception.
  fmt::print("{}\n", (camel ? *camel : out).dump(2, ' ', false, json::error_handler_t::replace));
  return 0;
}

}  // namespace gpumeter::app
