#include "metrics/exposition.h"

#include <prometheus/text_serializer.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "metrics/catalogue.h"

namespace gpumeter::metrics {
namespace {

using attribution::OwnerKind;
using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

// Collects series per catalogue entry; label values are given in the catalogue's label order,
// then the extra label names the builder was given for owner families.
class Families {
 public:
  explicit Families(std::vector<std::string> owner_extra) : owner_extra_(std::move(owner_extra)) {
    for (const auto& d : Catalogue()) families_.push_back(MetricFamily{d.name, d.help, d.type, {}});
  }
  void Add(Metric id, const std::vector<std::string>& values, double value, const std::vector<std::string>& extra = {}) {
    const auto& def = Def(id);
    if (values.size() != def.labels.size() || (!extra.empty() && extra.size() != owner_extra_.size()))
      throw std::logic_error(def.name + ": label values do not match the catalogue");
    ClientMetric m;
    for (size_t i = 0; i < values.size(); ++i) m.label.push_back({def.labels[i], values[i]});
    for (size_t i = 0; i < extra.size(); ++i) m.label.push_back({owner_extra_[i], extra[i]});
    if (def.type == MetricType::Counter) m.counter.value = value;
    else m.gauge.value = value;
    families_[static_cast<size_t>(id)].metric.push_back(std::move(m));
  }
  std::vector<MetricFamily> Take() {
    std::vector<MetricFamily> out;
    for (auto& f : families_)
      if (!f.metric.empty()) out.push_back(std::move(f));
    return out;
  }

 private:
  std::vector<std::string> owner_extra_;
  std::vector<MetricFamily> families_;
};

void Sources(Families& f, const sampler::SamplerHealth& health, const node::NodeState& state,
             std::chrono::steady_clock::time_point now) {
  const std::vector<std::string> nvml{state.node, "nvml"};
  f.Add(Metric::kSourceUp, nvml, health.latest && health.latest->ok && health.stalled_call.empty() ? 1 : 0);
  f.Add(Metric::kSourceAttempts, nvml, static_cast<double>(health.passes));
  f.Add(Metric::kSourceFailures, nvml, static_cast<double>(health.failures));
  f.Add(Metric::kSourceDeadlineExceeded, nvml, static_cast<double>(health.deadline_exceeded));
  if (health.last_good) {
    f.Add(Metric::kSourceLastSuccessAge, nvml, std::chrono::duration<double>(now - health.last_good->taken).count());
    f.Add(Metric::kSourceDuration, nvml, health.last_good->duration_seconds);
  }
  for (const auto& s : state.sources) {
    const std::vector<std::string> l{state.node, s.name};
    f.Add(Metric::kSourceUp, l, s.configured && s.up ? 1 : 0);
    f.Add(Metric::kSourceAttempts, l, static_cast<double>(s.attempts));
    f.Add(Metric::kSourceFailures, l, static_cast<double>(s.failures));
    if (s.last_success) f.Add(Metric::kSourceLastSuccessAge, l, std::chrono::duration<double>(now - *s.last_success).count());
    if (s.last_duration_seconds) f.Add(Metric::kSourceDuration, l, *s.last_duration_seconds);
  }
  f.Add(Metric::kAllocationProblems, {state.node}, static_cast<double>(state.allocation_problems.size()));
}

void Devices(Families& f, const node::NodeState& state) {
  if (!state.last_good) return;
  auto owner_of = [&](uint32_t pid) {
    const auto it = state.owners.find(pid);
    if (it == state.owners.end()) return std::vector<std::string>{"", "", "", "unattributed"};
    const auto& o = it->second;
    return std::vector<std::string>{o.ns, o.pod, o.container, k8s::ToString(o.kind)};
  };
  auto processes = [&](const std::vector<gpu::GpuProcess>& procs, const std::string& unit, bool util,
                       const std::map<uint32_t, uint32_t>& sm) {
    for (const auto& p : procs) {
      std::vector<std::string> l{state.node, unit, std::to_string(p.pid)};
      for (auto& v : owner_of(p.pid)) l.push_back(std::move(v));
      if (p.used_memory_bytes) f.Add(Metric::kProcessMemory, l, static_cast<double>(*p.used_memory_bytes));
      // A listed process without a sample in the window was idle: NVML only reports busy PIDs.
      if (util) f.Add(Metric::kProcessSm, l, sm.count(p.pid) ? sm.at(p.pid) / 100.0 : 0.0);
    }
  };
  for (const auto& d : state.last_good->snapshot.devices) {
    const std::string idx = std::to_string(d.index);
    const std::vector<std::string> gl{state.node, idx, d.uuid};
    const auto* unit = state.FindUnit(d.uuid);
    const std::string mode = d.mig_enabled ? "mig" : unit ? attribution::ToString(unit->mode) : "unknown";
    f.Add(Metric::kGpuInfo, {state.node, idx, d.uuid, d.name, d.mig_enabled ? "enabled" : "disabled", mode}, 1);
    f.Add(Metric::kGpuLost, gl, d.lost ? 1 : 0);
    for (const auto& e : d.errors) f.Add(Metric::kNvmlCallFailed, {state.node, idx, d.uuid, e.call, std::to_string(e.code)}, 1);
    if (d.memory) {
      f.Add(Metric::kGpuMemoryTotal, gl, static_cast<double>(d.memory->total_bytes));
      f.Add(Metric::kGpuMemoryUsed, gl, static_cast<double>(d.memory->used_bytes));
      if (d.memory->reserved_bytes) f.Add(Metric::kGpuMemoryReserved, gl, static_cast<double>(*d.memory->reserved_bytes));
    }
    if (d.utilization_gpu_percent) f.Add(Metric::kGpuBusy, gl, *d.utilization_gpu_percent / 100.0);
    if (d.sm_active_ratio) f.Add(Metric::kGpuSmActive, gl, *d.sm_active_ratio);
    if (d.power_watts) f.Add(Metric::kGpuPower, gl, *d.power_watts);
    if (d.energy_joules) f.Add(Metric::kGpuEnergy, gl, *d.energy_joules);
    const auto sm = gpu::LatestSmPercent(d);
    if (!d.mig_enabled) processes(d.processes, d.uuid, d.process_utilization_supported, sm);
    for (const auto& m : d.mig_instances) {
      const std::vector<std::string> ml{state.node, idx, d.uuid, m.uuid, std::to_string(m.gpu_instance_id)};
      if (m.memory) {
        f.Add(Metric::kMigMemoryTotal, ml, static_cast<double>(m.memory->total_bytes));
        f.Add(Metric::kMigMemoryUsed, ml, static_cast<double>(m.memory->used_bytes));
      }
      if (m.sm_active_ratio) f.Add(Metric::kMigSmActive, ml, *m.sm_active_ratio);
      processes(m.processes, m.uuid, false, sm);
    }
  }
}

void Attribution(Families& f, const node::NodeState& state, const ExpositionOptions& options) {
  std::map<std::string, const node::UnitInfo*> units;
  for (const auto& u : state.units) {
    units[u.uuid] = &u;
    f.Add(Metric::kUnitInfo, {state.node, u.uuid, u.gpu_uuid, std::to_string(u.gpu_index), u.model, u.mig_profile,
                              attribution::ToString(u.mode), std::to_string(u.replicas), u.evidence},
          1);
  }
  for (const auto& [uuid, t] : state.unit_totals) {
    f.Add(Metric::kUnitSeconds, {state.node, uuid}, t.seconds);
    f.Add(Metric::kUnitMemoryCapacity, {state.node, uuid}, t.memory_capacity_byte_seconds);
    f.Add(Metric::kUnitEnergy, {state.node, uuid}, t.energy_joules);
    f.Add(Metric::kUnitEnergyUnknown, {state.node, uuid}, t.energy_unknown_seconds);
  }
  // The share each container holds now, from the units' holders.
  std::map<std::pair<std::string, attribution::Owner>, double> held;
  for (const auto& u : state.units)
    for (const auto& h : u.holders) held[{u.uuid, {OwnerKind::kContainer, h.ns, h.pod, h.container}}] += h.share;

  // Series cap: container rows that were active most recently (then the largest) are kept.
  std::vector<const std::pair<const std::pair<std::string, attribution::Owner>, node::OwnerTotals>*> rows;
  size_t containers = 0;
  for (const auto& entry : state.totals) containers += entry.first.second.kind == OwnerKind::kContainer;
  for (const auto& entry : state.totals) rows.push_back(&entry);
  size_t dropped = 0;
  if (containers > options.max_series) {
    std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
      const bool ca = a->first.second.kind == OwnerKind::kContainer, cb = b->first.second.kind == OwnerKind::kContainer;
      if (ca != cb) return !ca;  // non-container rows first: always kept
      if (a->second.last_interval != b->second.last_interval) return a->second.last_interval > b->second.last_interval;
      return a->second.memory_byte_seconds + a->second.compute_seconds > b->second.memory_byte_seconds + b->second.compute_seconds;
    });
    const size_t keep = rows.size() - containers + options.max_series;
    dropped = rows.size() - keep;
    rows.resize(keep);
  }
  f.Add(Metric::kSeriesDropped, {state.node}, static_cast<double>(dropped));

  std::vector<std::string> extra_names;
  for (const auto& k : options.pod_label_keys) extra_names.push_back(PodLabelName(k));
  for (const auto* row : rows) {
    const auto& [key, t] = *row;
    const auto& [unit_uuid, owner] = key;
    const auto uit = units.find(unit_uuid);
    const node::UnitInfo* u = uit == units.end() ? nullptr : uit->second;
    const std::vector<std::string> l{state.node, unit_uuid, u ? u->gpu_uuid : "", u ? u->model : "", u ? u->mig_profile : "",
                                     owner.ns, owner.pod, owner.container, attribution::ToString(owner.kind)};
    std::vector<std::string> extra;
    if (!options.pod_label_keys.empty()) {
      const auto pl = state.pod_labels.find({owner.ns, owner.pod});
      for (const auto& k : options.pod_label_keys) {
        std::string v;
        if (pl != state.pod_labels.end())
          if (const auto it = pl->second.find(k); it != pl->second.end()) v = it->second;
        extra.push_back(v);
      }
    }
    f.Add(Metric::kMemoryByteSeconds, l, t.memory_byte_seconds, extra);
    f.Add(Metric::kComputeSeconds, l, t.compute_seconds, extra);
    f.Add(Metric::kEnergyJoules, l, t.energy_joules, extra);
    f.Add(Metric::kRequestedShareSeconds, l, t.requested_share_seconds, extra);
    // Gauges describe now: only rows of the latest interval.
    if (t.last_interval == state.intervals) {
      f.Add(Metric::kMemoryBytes, l, t.last_memory_bytes, extra);
      f.Add(Metric::kComputeRatio, l, t.last_compute_ratio, extra);
    }
    if (owner.kind == OwnerKind::kContainer) {
      const auto h = held.find(key);
      f.Add(Metric::kRequestedShare, l, h == held.end() ? 0.0 : h->second, extra);
    }
  }
}

}  // namespace

std::string PodLabelName(const std::string& key) {
  std::string out = "label_";
  for (const char c : key) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  return out;
}

std::vector<MetricFamily> BuildFamilies(const sampler::SamplerHealth& health, const node::NodeState& state,
                                        const ExpositionOptions& options, std::chrono::steady_clock::time_point now) {
  std::vector<std::string> extra;
  for (const auto& k : options.pod_label_keys) extra.push_back(PodLabelName(k));
  Families f(std::move(extra));
  Sources(f, health, state, now);
  Devices(f, state);
  Attribution(f, state, options);
  return f.Take();
}

std::string RenderText(const std::vector<MetricFamily>& families) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace gpumeter::metrics
