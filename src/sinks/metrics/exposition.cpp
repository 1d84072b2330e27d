#include "sinks/metrics/exposition.h"

#include "sinks/metrics/readiness.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <set>
#include <stdexcept>

#include "common/text_cell.h"
#include "core/rightsize/workload.h"
#include "domain/pod_label.h"
#include "sinks/metrics/catalogue.h"

namespace gpumeter::metrics {
namespace {

using domain::OwnerKind;

// What each byte of a label value needs: nothing, an escape (\\, " and newline), or, above 0x7f,
// a check that the value is valid UTF-8. One table lookup a byte: every label value of every
// scrape comes through here.
enum class ByteClass : uint8_t { kPlain, kEscape, kHigh };
constexpr std::array<ByteClass, 256> kByteClass = [] {
  std::array<ByteClass, 256> t{};
  for (size_t b = 0x80; b < 256; ++b) t[b] = ByteClass::kHigh;
  t['\\'] = t['"'] = t['\n'] = ByteClass::kEscape;
  return t;
}();

// Appends `v` escaped, copying the runs between escapes whole. With `ascii_only`, returns false
// having appended nothing when `v` holds a byte above 0x7f, so that the caller can make it valid
// UTF-8 first.
bool AppendEscaped(std::string& out, std::string_view v, bool ascii_only = false) {
  const size_t start = out.size();
  size_t run = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const ByteClass k = kByteClass[static_cast<unsigned char>(v[i])];
    if (k == ByteClass::kPlain) continue;
    if (k == ByteClass::kHigh) {
      if (!ascii_only) continue;
      out.resize(start);
      return false;
    }
    out.append(v.data() + run, i - run);
    out += v[i] == '\n' ? "\\n" : v[i] == '"' ? "\\\"" : "\\\\";
    run = i + 1;
  }
  out.append(v.data() + run, v.size() - run);
  return true;
}

// Collects series per catalogue entry. Label values are given in the catalogue's label order
// (then the pod-label names, for gpumeter_pod_labels_info); each label set is rendered once,
// escaped, and may be shared by families with the same label names. Every label value, whatever
// it came from (pods, /proc, the driver, the Node object), is written by AppendValue().
// A family outside the options' set (ContainerSeries) takes no samples: Add() drops them.
class Families {
 public:
  Families(std::vector<std::string> pod_labels, ContainerSeries set)
      : pod_labels_(std::move(pod_labels)) {
    // Families with the same label names share a schema number, so sharing is checked cheaply.
    const auto& c = Catalogue();
    for (size_t i = 0; i < c.size(); ++i) {
      size_t j = 0;
      while (c[j].labels != c[i].labels) ++j;
      schema_.push_back(j);
      exported_.push_back(set == ContainerSeries::kFull || InDefaultSet(c[i].id));
    }
  }

  uint32_t Labels(Metric id, const std::vector<std::string_view>& values,
                  const std::vector<std::string_view>& extra = {}) {
    const auto& def = Def(id);
    if (values.size() != def.labels.size() ||
        (!extra.empty() && (id != Metric::kPodLabels || extra.size() != pod_labels_.size())))
      throw std::logic_error(def.name + ": label values do not match the catalogue");
    std::string out;
    for (size_t i = 0; i < values.size(); ++i) {
      if (i) out += ',';
      out += def.labels[i];
      AppendValue(out, values[i]);
    }
    for (size_t i = 0; i < extra.size(); ++i) {
      out += ',';
      out += pod_labels_[i];
      AppendValue(out, extra[i]);
    }
    set_.label_sets.push_back(std::move(out));
    built_for_.push_back(id);
    return static_cast<uint32_t>(set_.label_sets.size() - 1);
  }
  // Adds a sample with a label set built for a family with the same label names.
  void Add(Metric id, uint32_t labels, double value) {
    if (schema_[static_cast<size_t>(id)] != schema_[static_cast<size_t>(built_for_.at(labels))])
      throw std::logic_error(Def(id).name + ": label set built for " +
                             Def(built_for_[labels]).name);
    if (exported_[static_cast<size_t>(id)])
      set_.families[static_cast<size_t>(id)].push_back({labels, value});
  }
  void Add(Metric id, const std::vector<std::string_view>& values, double value) {
    Add(id, Labels(id, values), value);
  }
  SeriesSet Take() { return std::move(set_); }

 private:
  // `="value"`: valid UTF-8 of at most kMaxLabelValueBytes (common/text_cell.h), escaped.
  // Prometheus and promtool refuse a whole page over one invalid byte (a command name the kernel
  // cut inside a character, bytes a process set as its name), and with it every series of the node.
  void AppendValue(std::string& out, std::string_view v) {
    out += "=\"";
    // ASCII within the cap is valid as it is: escaped in one pass, with no copy (the common case).
    if (v.size() > kMaxLabelValueBytes || !AppendEscaped(out, v, /*ascii_only=*/true)) {
      clean_.clear();
      AppendValidUtf8(clean_, v);
      AppendEscaped(out, clean_);
    }
    out += '"';
  }

  std::vector<std::string> pod_labels_;
  std::vector<size_t> schema_;  // by Metric
  std::vector<bool> exported_;  // by Metric: in the options' set
  SeriesSet set_;
  std::vector<Metric> built_for_;
  std::string clean_;  // AppendValue()'s buffer, reused: no allocation per label value
};

void Sources(Families& f, const gpu::SamplerHealth& health, const node::NodeState& state,
             const ExpositionOptions& options, std::chrono::steady_clock::time_point now) {
  const auto nvml_status = NvmlStatus(health, options.stale_after, now);
  const uint32_t nvml = f.Labels(Metric::kSourceUp, {state.node, "nvml"});
  f.Add(Metric::kSourceUp, nvml, nvml_status.up ? 1 : 0);
  f.Add(Metric::kSourceAttempts, nvml, static_cast<double>(nvml_status.attempts));
  f.Add(Metric::kSourceFailures, nvml, static_cast<double>(nvml_status.failures));
  f.Add(Metric::kSourceDeadlineExceeded, nvml, static_cast<double>(health.deadline_exceeded));
  if (nvml_status.last_success) {
    f.Add(Metric::kSourceLastSuccessAge, nvml,
          std::chrono::duration<double>(now - *nvml_status.last_success).count());
    f.Add(Metric::kSourceDuration, nvml, *nvml_status.last_duration_seconds);
  }
  for (const auto& s : state.sources) {
    const uint32_t l = f.Labels(Metric::kSourceUp, {state.node, s.name});
    f.Add(Metric::kSourceUp, l, s.configured && s.up ? 1 : 0);
    f.Add(Metric::kSourceAttempts, l, static_cast<double>(s.attempts));
    f.Add(Metric::kSourceFailures, l, static_cast<double>(s.failures));
    if (s.last_success)
      f.Add(Metric::kSourceLastSuccessAge, l,
            std::chrono::duration<double>(now - *s.last_success).count());
    if (s.last_duration_seconds) f.Add(Metric::kSourceDuration, l, *s.last_duration_seconds);
  }
  if (state.store) {
    f.Add(Metric::kStoreWriteFailures, {state.node},
          static_cast<double>(state.store->write_failures));
    f.Add(Metric::kStorePending, {state.node}, static_cast<double>(state.store->pending));
    f.Add(Metric::kStoreOldestPending, {state.node}, state.store->oldest_pending_seconds);
    f.Add(Metric::kStoreDropped, {state.node}, static_cast<double>(state.store->dropped));
    f.Add(Metric::kStoreLostAtStop, {state.node}, static_cast<double>(state.store->lost_at_stop));
    f.Add(Metric::kClockSteps, {state.node}, static_cast<double>(state.store->clock_steps));
  }
  f.Add(Metric::kAllocationProblems, {state.node},
        static_cast<double>(state.allocation_problems.size()));
}

// What the driver says of the GPU's health: each part only where it could say (unknown is no
// series, never 0).
void Health(Families& f, const std::string& node, const std::string& idx,
            const gpu::DeviceSample& d, uint32_t gpu_labels) {
  const auto& h = d.health;
  if (h.clock_event_reasons)
    for (const auto& r : gpu::ClockEventReasons())
      f.Add(Metric::kGpuClockEventReason, {node, idx, d.uuid, r.name},
            (*h.clock_event_reasons & r.bit) ? 1 : 0);
  if (h.ecc_corrected)
    f.Add(Metric::kGpuEccErrors, {node, idx, d.uuid, "corrected"},
          static_cast<double>(*h.ecc_corrected));
  if (h.ecc_uncorrected)
    f.Add(Metric::kGpuEccErrors, {node, idx, d.uuid, "uncorrected"},
          static_cast<double>(*h.ecc_uncorrected));
  if (h.remapped_rows) {
    f.Add(Metric::kGpuRemappedRows, {node, idx, d.uuid, "correctable"},
          h.remapped_rows->correctable);
    f.Add(Metric::kGpuRemappedRows, {node, idx, d.uuid, "uncorrectable"},
          h.remapped_rows->uncorrectable);
    f.Add(Metric::kGpuRowRemapPending, gpu_labels, h.remapped_rows->pending ? 1 : 0);
    f.Add(Metric::kGpuRowRemapFailed, gpu_labels, h.remapped_rows->failed ? 1 : 0);
  }
  if (h.retired_pages) {
    f.Add(Metric::kGpuRetiredPages, {node, idx, d.uuid, "single_bit_ecc"},
          h.retired_pages->single_bit);
    f.Add(Metric::kGpuRetiredPages, {node, idx, d.uuid, "double_bit_ecc"},
          h.retired_pages->double_bit);
    if (h.retired_pages->pending)
      f.Add(Metric::kGpuRetiredPagesPending, gpu_labels, *h.retired_pages->pending ? 1 : 0);
  }
}

void Devices(Families& f, const node::NodeState& state, const ExpositionOptions& options) {
  if (!state.last_good) return;
  if (state.xid_watch_ok) f.Add(Metric::kXidWatchUp, {state.node}, *state.xid_watch_ok ? 1 : 0);
  auto processes = [&](const std::vector<gpu::GpuProcess>& procs, const std::string& unit,
                       bool util, const std::map<uint32_t, uint32_t>& sm) {
    if (!options.process_series) return;
    for (const auto& p : procs) {
      const std::string pid = std::to_string(p.pid);
      const auto it = state.owners.find(p.pid);
      const domain::ProcessOwner unknown;
      const auto& o = it == state.owners.end() ? unknown : it->second;
      const uint32_t l = f.Labels(Metric::kProcessMemory, {state.node, unit, pid, o.ns, o.pod,
                                                           o.container, domain::ToString(o.kind)});
      if (p.used_memory_bytes)
        f.Add(Metric::kProcessMemory, l, static_cast<double>(*p.used_memory_bytes));
      // A listed process without a sample in the window was idle: NVML only reports busy PIDs.
      if (util) f.Add(Metric::kProcessSm, l, sm.count(p.pid) ? sm.at(p.pid) / 100.0 : 0.0);
    }
  };
  for (const auto& d : state.last_good->snapshot.devices) {
    const std::string idx = std::to_string(d.index);
    const uint32_t gl = f.Labels(Metric::kGpuLost, {state.node, idx, d.uuid});
    const auto* unit = state.FindUnit(d.uuid);
    const std::string mode = d.mig_enabled ? "mig"
                             : unit        ? domain::ToString(unit->mode)
                                           : "unknown";
    f.Add(Metric::kGpuInfo,
          {state.node, idx, d.uuid, d.name, d.mig_enabled ? "enabled" : "disabled", mode}, 1);
    f.Add(Metric::kGpuLost, gl, d.lost ? 1 : 0);
    for (const auto& e : d.errors)
      f.Add(Metric::kNvmlCallFailed, {state.node, idx, d.uuid, e.call, std::to_string(e.code)}, 1);
    Health(f, state.node, idx, d, gl);
    if (const auto x = state.xids.find(d.uuid); x != state.xids.end())
      for (const auto& [xid, total] : x->second) {
        f.Add(Metric::kGpuXidErrors, {state.node, idx, d.uuid, std::to_string(xid)},
              static_cast<double>(total.count));
        f.Add(Metric::kGpuXidLastSeen, {state.node, idx, d.uuid, std::to_string(xid)},
              total.last_seen);
      }
    if (d.memory) {
      f.Add(Metric::kGpuMemoryTotal, gl, static_cast<double>(d.memory->total_bytes));
      f.Add(Metric::kGpuMemoryUsed, gl, static_cast<double>(d.memory->used_bytes));
      if (d.memory->reserved_bytes)
        f.Add(Metric::kGpuMemoryReserved, gl, static_cast<double>(*d.memory->reserved_bytes));
    }
    if (d.utilization_gpu_percent) f.Add(Metric::kGpuBusy, gl, *d.utilization_gpu_percent / 100.0);
    if (d.sm_active_ratio) f.Add(Metric::kGpuSmActive, gl, *d.sm_active_ratio);
    if (d.power_watts) f.Add(Metric::kGpuPower, gl, *d.power_watts);
    if (d.energy_joules) f.Add(Metric::kGpuEnergy, gl, *d.energy_joules);
    const auto sm = gpu::LatestSmPercent(d);
    if (!d.mig_enabled) processes(d.processes, d.uuid, d.process_utilization_supported, sm);
    for (const auto& m : d.mig_instances) {
      const std::string gi = std::to_string(m.gpu_instance_id);
      const uint32_t ml = f.Labels(Metric::kMigMemoryTotal, {state.node, idx, d.uuid, m.uuid, gi});
      if (m.memory) {
        f.Add(Metric::kMigMemoryTotal, ml, static_cast<double>(m.memory->total_bytes));
        f.Add(Metric::kMigMemoryUsed, ml, static_cast<double>(m.memory->used_bytes));
      }
      if (m.sm_active_ratio) f.Add(Metric::kMigSmActive, ml, *m.sm_active_ratio);
      processes(m.processes, m.uuid, false, sm);
    }
  }
}

// The units' info and capacity counters; returns the units by UUID.
std::map<std::string, const node::UnitInfo*> Units(Families& f, const node::NodeState& state) {
  std::map<std::string, const node::UnitInfo*> units;
  for (const auto& u : state.units) {
    units[u.uuid] = &u;
    const std::string index = std::to_string(u.gpu_index), replicas = std::to_string(u.replicas);
    f.Add(Metric::kUnitInfo,
          {state.node, u.uuid, u.gpu_uuid, index, u.model, u.mig_profile, domain::ToString(u.mode),
           replicas, u.evidence},
          1);
    f.Add(Metric::kUnitGpuFraction, {state.node, u.uuid}, u.gpu_fraction);
  }
  for (const auto& [uuid, t] : state.unit_totals) {
    const uint32_t l = f.Labels(Metric::kUnitSeconds, {state.node, uuid});
    f.Add(Metric::kUnitSeconds, l, t.seconds);
    f.Add(Metric::kUnitMemoryCapacity, l, t.memory_capacity_byte_seconds);
    f.Add(Metric::kUnitEnergy, l, t.energy_joules);
    f.Add(Metric::kUnitEnergyUnknown, l, t.energy_unknown_seconds);
    f.Add(Metric::kUnitSamplesUncovered, l, t.samples_uncovered_seconds);
    for (const auto& [signal, seconds] : t.memory_signal_seconds)
      f.Add(Metric::kUnitMemorySignalSeconds,
            {state.node, uuid,
             signal == domain::MemorySignal::kNone ? "none" : domain::ToString(signal)},
            seconds);
    // Cost: only once the unit had a price (before, it is unknown, not 0).
    if (t.price) f.Add(Metric::kUnitCost, l, t.cost);
    if (t.unpriced_seconds > 0) f.Add(Metric::kUnitUnpriced, l, t.unpriced_seconds);
  }
  if (const auto& n = state.node_facts)
    f.Add(Metric::kNodeInfo,
          {state.node, n->instance_type, n->region, n->zone, n->capacity_type, n->cloud,
           n->provider_id},
          1);
  if (!state.cost_policy.empty())
    f.Add(Metric::kCostInfo, {state.node, state.currency, state.cost_policy}, 1);
  for (const auto& u : state.units)
    if (const auto t = state.unit_totals.find(u.uuid);
        t != state.unit_totals.end() && t->second.price)
      f.Add(Metric::kUnitPrice, {state.node, u.uuid, state.currency, t->second.price->source},
            t->second.price->per_gpu_hour * u.gpu_fraction);
  return units;
}

using TotalsRow = decltype(node::NodeState::totals)::value_type;  // ((unit UUID, owner), totals)

// Series cap: container rows that were active most recently (then the largest) are kept; the
// rows to export, in order, and how many were dropped.
std::vector<const TotalsRow*> KeptRows(const node::NodeState& state,
                                       const ExpositionOptions& options, size_t& dropped) {
  std::vector<const TotalsRow*> rows;
  size_t containers = 0;
  for (const auto& entry : state.totals)
    containers += entry.first.second.kind == OwnerKind::kContainer;
  for (const auto& entry : state.totals) rows.push_back(&entry);
  dropped = 0;
  if (containers > options.max_series) {
    std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
      const bool ca = a->first.second.kind == OwnerKind::kContainer,
                 cb = b->first.second.kind == OwnerKind::kContainer;
      if (ca != cb) return !ca;  // non-container rows first: always kept
      if (a->second.last_interval != b->second.last_interval)
        return a->second.last_interval > b->second.last_interval;
      return a->second.memory_byte_seconds + a->second.compute_seconds >
             b->second.memory_byte_seconds + b->second.compute_seconds;
    });
    const size_t keep = rows.size() - containers + options.max_series;
    dropped = rows.size() - keep;
    rows.resize(keep);
  }
  return rows;
}

const std::string kNone;  // an unknown label value

// The values of the --pod-label keys for a pod ("" where unknown), in key order.
std::vector<std::string_view> PodLabelValues(const node::NodeState& state,
                                             const ExpositionOptions& options,
                                             const std::string& ns, const std::string& pod) {
  std::vector<std::string_view> extra;
  const auto pl = state.pod_labels.find({ns, pod});
  for (const auto& k : options.pod_label_keys) {
    const std::string* v = &kNone;
    if (pl != state.pod_labels.end())
      if (const auto it = pl->second.find(k); it != pl->second.end()) v = &it->second;
    extra.push_back(*v);
  }
  return extra;
}

// The series of one (unit, owner) row; `u` is its unit (nullptr when no longer listed), `held`
// the share each container holds now.
void OwnerRow(Families& f, const node::NodeState& state, const TotalsRow& row,
              const node::UnitInfo* u,
              const std::map<std::pair<std::string, domain::Owner>, double>& held) {
  const auto& [key, t] = row;
  const auto& [unit_uuid, owner] = key;
  // One label set for the row, shared by its families.
  const uint32_t l = f.Labels(Metric::kMemoryByteSeconds,
                              {state.node, unit_uuid, u ? u->gpu_uuid : kNone, u ? u->model : kNone,
                               u ? u->mig_profile : kNone, owner.ns, owner.pod, owner.container,
                               domain::ToString(owner.kind)});
  f.Add(Metric::kMemoryByteSeconds, l, t.memory_byte_seconds);
  f.Add(Metric::kComputeSeconds, l, t.compute_seconds);
  // Only where something was unknown: one series per row otherwise, all 0. Monotonic, so a
  // series once shown stays.
  if (t.compute_unknown_seconds > 0)
    f.Add(Metric::kComputeUnknownSeconds, l, t.compute_unknown_seconds);
  if (t.compute_bound_seconds > 0) f.Add(Metric::kComputeBoundSeconds, l, t.compute_bound_seconds);
  f.Add(Metric::kMemoryBusySeconds, l, t.memory_busy_seconds);
  if (t.memory_busy_unknown_seconds > 0)
    f.Add(Metric::kMemoryBusyUnknownSeconds, l, t.memory_busy_unknown_seconds);
  if (t.memory_busy_bound_seconds > 0)
    f.Add(Metric::kMemoryBusyBoundSeconds, l, t.memory_busy_bound_seconds);
  f.Add(Metric::kEnergyJoules, l, t.energy_joules);
  if (t.energy_bound_joules > 0) f.Add(Metric::kEnergyBoundJoules, l, t.energy_bound_joules);
  f.Add(Metric::kRequestedShareSeconds, l, t.requested_share_seconds);
  if (t.priced) {
    f.Add(Metric::kCost, l, t.cost);
    f.Add(Metric::kIdleCost, l, t.idle_cost);
  }
  // Gauges describe now: only rows of the latest interval.
  if (t.last_interval == state.intervals) {
    f.Add(Metric::kMemoryBytes, l, t.last_memory_bytes);
    f.Add(Metric::kComputeRatio, l, t.last_compute_ratio);
    // A lower bound is not a reading: a scaler must not see unknown use as none.
    if (u && !t.last_compute_unknown)
      f.Add(Metric::kComputeGpus, l, t.last_compute_ratio * u->gpu_fraction);
    if (u && u->gpu_memory_total_bytes && *u->gpu_memory_total_bytes > 0)
      f.Add(Metric::kMemoryGpus, l,
            t.last_memory_bytes / static_cast<double>(*u->gpu_memory_total_bytes));
  }
  if (owner.kind == OwnerKind::kContainer) {
    const auto h = held.find(key);
    f.Add(Metric::kRequestedShare, l, h == held.end() ? 0.0 : h->second);
  }
}

void Attribution(Families& f, const node::NodeState& state, const ExpositionOptions& options) {
  const auto units = Units(f, state);
  // The share each container holds now, from the units' holders.
  std::map<std::pair<std::string, domain::Owner>, double> held;
  for (const auto& u : state.units)
    for (const auto& h : u.holders) held[{u.uuid, h.AsOwner()}] += h.share;
  size_t dropped = 0;
  const auto rows = KeptRows(state, options, dropped);
  f.Add(Metric::kSeriesDropped, {state.node}, static_cast<double>(dropped));
  std::set<std::pair<std::string, std::string>> pods;
  for (const auto* row : rows) {
    const auto uit = units.find(row->first.first);
    OwnerRow(f, state, *row, uit == units.end() ? nullptr : uit->second, held);
    if (const auto& o = row->first.second; o.kind == OwnerKind::kContainer)
      pods.insert({o.ns, o.pod});
  }
  for (const auto& [ns, pod] : pods) {
    const auto pl = state.pod_labels.find({ns, pod});
    const auto w = rightsize::WorkloadOf(
        pod, pl == state.pod_labels.end() ? std::map<std::string, std::string>{} : pl->second);
    f.Add(Metric::kPodWorkloadInfo, {state.node, ns, pod, w.kind, w.name}, 1.0);
    if (!options.pod_label_keys.empty())
      f.Add(Metric::kPodLabels,
            f.Labels(Metric::kPodLabels, {state.node, ns, pod},
                     PodLabelValues(state, options, ns, pod)),
            1.0);
  }
}

void Findings(Families& f, const node::NodeState& state) {
  for (const auto& x : state.findings) {
    const std::vector<std::string_view> values{state.node,
                                               guard::ToString(x.kind),
                                               guard::ToString(x.severity),
                                               x.ns,
                                               x.pod,
                                               x.container,
                                               x.unit_uuid,
                                               x.gpu_uuid,
                                               x.process};
    const uint32_t l = f.Labels(Metric::kFindingOpen, values);
    f.Add(Metric::kFindingOpen, l, x.first_seen);
    if (x.waste_gpu_hours) f.Add(Metric::kFindingWaste, l, *x.waste_gpu_hours * 3600);
    if (x.waste_cost) {
      auto with_currency = values;
      with_currency.push_back(x.currency);
      f.Add(Metric::kFindingWasteCost, with_currency, *x.waste_cost);
    }
  }
  for (const auto& [key, n] : state.findings_opened)
    f.Add(Metric::kFindingsOpened,
          {state.node, guard::ToString(key.first), guard::ToString(key.second)},
          static_cast<double>(n));
}

void Rightsizing(Families& f, const node::NodeState& state) {
  if (!state.rightsizing) return;
  for (const auto& r : *state.rightsizing) {
    const std::string replicas = std::to_string(r.replicas);
    // Codes, not prose, as label values: a bounded vocabulary keeps the series few and stable.
    std::vector<std::string_view> values{state.node,         r.ns,     r.workload,
                                         r.container,        r.action, r.current_code,
                                         r.recommended_code, replicas};
    f.Add(Metric::kRightsizeRecommendedGpu, values, r.recommended_gpu);
    if (r.monthly_savings) {
      values.push_back(r.currency);
      f.Add(Metric::kRightsizeSavings, values, *r.monthly_savings);
    }
  }
}

}  // namespace

SeriesSet BuildFamilies(const gpu::SamplerHealth& health, const node::NodeState& state,
                        const ExpositionOptions& options, std::chrono::steady_clock::time_point now,
                        const ServerStats& server) {
  std::vector<std::string> extra;
  for (const auto& k : options.pod_label_keys) extra.push_back(domain::PodLabelName(k));
  Families f(std::move(extra), options.container_series);
  Sources(f, health, state, options, now);
  f.Add(Metric::kHttpConnectionsCut, {state.node}, static_cast<double>(server.connections_cut));
  Devices(f, state, options);
  Attribution(f, state, options);
  Findings(f, state);
  Rightsizing(f, state);
  return f.Take();
}

size_t SeriesSet::series() const {
  size_t n = 0;
  for (const auto& f : families) n += f.size();
  return n;
}

namespace {

void AppendNumber(std::string& out, double v) {
  if (std::isnan(v))
    out += "NaN";
  else if (std::isinf(v))
    out += v > 0 ? "+Inf" : "-Inf";
  else
    fmt::format_to(std::back_inserter(out), "{}", v);  // shortest round-trip; never the locale
}

void AppendHelp(std::string& out, std::string_view help, bool openmetrics) {
  for (const char c : help) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '"' && openmetrics)
      out += "\\\"";
    else
      out += c;
  }
}

// Text 0.0.4, or OpenMetrics 1.0: counter families named without `_total`, `# UNIT` from the
// catalogue, `_info` gauges as the info type, `# EOF` at the end.
std::string Render(const SeriesSet& set, bool openmetrics) {
  std::string out;
  size_t bytes = 64;
  for (const auto& f : set.families) bytes += f.size() * 32;
  for (const auto& l : set.label_sets) bytes += l.size();
  out.reserve(bytes * 2);
  for (size_t id = 0; id < set.families.size(); ++id) {
    const auto& samples = set.families[id];
    if (samples.empty()) continue;
    const auto& def = Catalogue()[id];
    const bool counter = def.type == MetricType::kCounter;
    std::string base = def.name, suffix;
    const char* type = counter ? "counter" : "gauge";
    if (openmetrics) {
      if (counter && base.ends_with("_total")) base.resize(base.size() - 6), suffix = "_total";
      if (!counter && base.ends_with("_info"))
        base.resize(base.size() - 5), suffix = "_info", type = "info";
    }
    out += openmetrics ? "# TYPE " : "# HELP ";
    out += base;
    if (openmetrics) {
      out += ' ';
      out += type;
      out += '\n';
      if (!def.unit.empty() && base.ends_with("_" + def.unit))
        out += "# UNIT " + base + " " + def.unit + "\n";
      out += "# HELP " + base;
    }
    out += ' ';
    AppendHelp(out, def.help, openmetrics);
    out += '\n';
    if (!openmetrics) out += "# TYPE " + base + " " + type + "\n";
    const std::string name = base + suffix;
    for (const auto& s : samples) {
      out += name;
      const auto& labels = set.label_sets[s.labels];
      if (!labels.empty()) {
        out += '{';
        out += labels;
        out += '}';
      }
      out += ' ';
      AppendNumber(out, s.value);
      out += '\n';
    }
  }
  if (openmetrics) out += "# EOF\n";
  return out;
}

}  // namespace

std::string RenderText(const SeriesSet& set) { return Render(set, false); }
std::string RenderOpenMetrics(const SeriesSet& set) { return Render(set, true); }

bool WantsOpenMetrics(const std::string& accept) {
  return accept.find("application/openmetrics-text") != std::string::npos;
}

}  // namespace gpumeter::metrics
