// The writer of the snapshot's serialized form; the reader is node_snapshot_read.cpp. Keys are
// written in one order (nlohmann's object is sorted), so a snapshot always writes the same bytes.
#include <nlohmann/json.hpp>

#include "domain/node_snapshot_json.h"
#include "domain/node_snapshot_keys.h"

namespace gpumeter::domain {
namespace {

using nlohmann::json;

template <typename T>
void Put(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

json Memory(const gpu::MemoryInfo& m) {
  json j{{"totalBytes", m.total_bytes}, {"usedBytes", m.used_bytes}, {"freeBytes", m.free_bytes}};
  Put(j, "reservedBytes", m.reserved_bytes);
  return j;
}

json Processes(const std::vector<gpu::GpuProcess>& list) {
  json out = json::array();
  for (const auto& p : list) {
    json j{{"pid", p.pid}, {"type", snapshot_keys::ProcessTypeName(p.type)}};
    Put(j, "usedMemoryBytes", p.used_memory_bytes);
    Put(j, "gpuInstanceId", p.gpu_instance_id);
    Put(j, "computeInstanceId", p.compute_instance_id);
    out.push_back(std::move(j));
  }
  return out;
}

json Errors(const std::vector<gpu::CallError>& list) {
  json out = json::array();
  for (const auto& e : list)
    out.push_back({{"call", e.call}, {"code", e.code}, {"message", e.message}});
  return out;
}

json Health(const gpu::GpuHealth& h) {
  json j = json::object();
  Put(j, "clockEventReasons", h.clock_event_reasons);
  Put(j, "eccCorrected", h.ecc_corrected);
  Put(j, "eccUncorrected", h.ecc_uncorrected);
  if (const auto& r = h.remapped_rows)
    j["remappedRows"] = {{"correctable", r->correctable},
                         {"uncorrectable", r->uncorrectable},
                         {"pending", r->pending},
                         {"failed", r->failed}};
  if (const auto& r = h.retired_pages) {
    json p{{"singleBit", r->single_bit}, {"doubleBit", r->double_bit}};
    Put(p, "pending", r->pending);
    j["retiredPages"] = std::move(p);
  }
  json xids = json::array();
  for (const auto& x : h.xid_events) {
    json e{{"xid", x.xid}, {"seenUs", x.seen_us}};
    Put(e, "gpuInstanceId", x.gpu_instance_id);
    xids.push_back(std::move(e));
  }
  j["xidEvents"] = std::move(xids);
  return j;
}

json Instance(const gpu::MigInstanceSample& m) {
  json j{{"uuid", m.uuid},
         {"name", m.name},
         {"gpuInstanceId", m.gpu_instance_id},
         {"computeInstanceId", m.compute_instance_id},
         {"processes", Processes(m.processes)}};
  if (m.memory) j["memory"] = Memory(*m.memory);
  Put(j, "smActiveRatio", m.sm_active_ratio);
  Put(j, "dramBwRatio", m.dram_bw_ratio);
  Put(j, "slices", m.slices);
  Put(j, "dcgmGrActive", m.dcgm_gr_active);
  Put(j, "dcgmDramActive", m.dcgm_dram_active);
  return j;
}

// The driver's sample buffers as drained: per-process and power samples with their window.
void Samples(const gpu::DeviceSample& d, json& j) {
  json util = json::array();
  for (const auto& s : d.process_util)
    util.push_back({{"pid", s.pid},
                    {"timestampUs", s.timestamp_us},
                    {"smPercent", s.sm_percent},
                    {"memoryPercent", s.memory_percent}});
  j["processUtil"] = std::move(util);
  j["processUtilWindowStartUs"] = d.process_util_window_start_us;
  j["processUtilWindowEndUs"] = d.process_util_window_end_us;
  Put(j, "processUtilPeriodUs", d.process_util_period_us);
  j["processUtilUncoveredUs"] = d.process_util_uncovered_us;
  Put(j, "processUtilBufferSpanUs", d.process_util_buffer_span_us);
  json power = json::array();
  for (const auto& p : d.power_samples)
    power.push_back({{"timestampUs", p.timestamp_us}, {"watts", p.watts}});
  j["powerSamples"] = std::move(power);
}

json Device(const gpu::DeviceSample& d) {
  json j{{"index", d.index},
         {"uuid", d.uuid},
         {"name", d.name},
         {"lost", d.lost},
         {"migEnabled", d.mig_enabled},
         {"processes", Processes(d.processes)},
         {"processUtilizationSupported", d.process_utilization_supported},
         {"dcgmHeld", d.dcgm_held},
         {"errors", Errors(d.errors)},
         {"health", Health(d.health)}};
  if (d.memory) j["memory"] = Memory(*d.memory);
  Put(j, "utilizationGpuPercent", d.utilization_gpu_percent);
  Put(j, "utilizationMemoryPercent", d.utilization_memory_percent);
  Put(j, "powerWatts", d.power_watts);
  Put(j, "energyJoules", d.energy_joules);
  if (d.compute_mode) j["computeMode"] = ToString(*d.compute_mode);
  Samples(d, j);
  Put(j, "smActiveRatio", d.sm_active_ratio);
  Put(j, "dramBwRatio", d.dram_bw_ratio);
  Put(j, "dcgmGrActive", d.dcgm_gr_active);
  Put(j, "dcgmDramActive", d.dcgm_dram_active);
  if (const auto& w = d.dcgm_window)
    j["dcgmWindow"] = {{"activity", w->activity}, {"watts", w->watts}, {"seconds", w->seconds}};
  json mig = json::array();
  for (const auto& m : d.mig_instances) mig.push_back(Instance(m));
  j["migInstances"] = std::move(mig);
  Put(j, "migTotalSlices", d.mig_total_slices);
  return j;
}

json Gpus(const gpu::GpuSnapshot& s) {
  json devices = json::array();
  for (const auto& d : s.devices) devices.push_back(Device(d));
  json j{{"timestampUs", s.timestamp_us},
         {"devices", std::move(devices)},
         {"errors", Errors(s.errors)},
         {"xidWatchError", s.xid_watch_error}};
  Put(j, "xidWatchOk", s.xid_watch_ok);
  return j;
}

json OwnerJson(const Owner& o) {
  json j{{"kind", ToString(o.kind)}};
  if (o.kind == OwnerKind::kContainer)
    j.update({{"namespace", o.ns}, {"pod", o.pod}, {"container", o.container}});
  return j;
}

json Process(const ProcessFact& p) {
  json owner = OwnerJson(p.owner.AsOwner());
  owner["how"] = p.owner.how;
  json j{{"pid", p.pid}, {"owner", std::move(owner)}, {"comm", p.comm}};
  if (p.start) {
    json s{{"ticks", p.start->ticks}};
    Put(s, "unixUs", p.start->unix_us);
    j["start"] = std::move(s);
  }
  Put(j, "mpsThreadFraction", p.mps_thread_fraction);
  if (p.gpu_env) j["gpuEnv"] = *p.gpu_env;
  if (!p.listed) j["listed"] = false;  // absent: listed (every process of a version 1 snapshot)
  return j;
}

json Unit(const UnitFact& u) {
  json holders = json::array();
  for (const auto& h : u.holders)
    holders.push_back({{"owner", OwnerJson(h.owner)}, {"share", h.share}});
  return {{"uuid", u.uuid}, {"mode", ToString(u.mode)}, {"holders", std::move(holders)}};
}

}  // namespace

std::string WriteNodeSnapshot(const NodeSnapshot& s) {
  json processes = json::array(), units = json::array();
  for (const auto& p : s.processes) processes.push_back(Process(p));
  for (const auto& u : s.units) units.push_back(Unit(u));
  json j{{"format", snapshot_keys::kFormat},
         {"version", kNodeSnapshotVersion},
         {"sequence", s.sequence},
         {"ok", s.ok},
         {"error", s.error},
         {"gpus", Gpus(s.gpus)},
         {"processes", std::move(processes)},
         {"units", std::move(units)},
         {"allocationsKnown", s.allocations_known}};
  // A process name is raw bytes: invalid UTF-8 is written as U+FFFD rather than refused.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace gpumeter::domain
