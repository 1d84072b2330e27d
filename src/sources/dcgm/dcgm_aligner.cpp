#include "sources/dcgm/dcgm_aligner.h"

#include <algorithm>
#include <set>

#include "domain/power_trace.h"

namespace gpumeter::dcgm {
namespace {
// Collections kept per unit: the accountant asks only back to its oldest held interval (at most
// a stale series' age), so this bounds memory without ever cutting an answer short in practice.
constexpr size_t kMaxCollections = 256;
// Interval ends a hair past a collection (float noise in seconds) still count as covered.
constexpr double kEpsilonS = 1e-6;
// A unit whose series is missing (a failed read empties the reading) keeps its history this long,
// as the source's default --dcgm-max-age: a read that fails once does not lose what is pending.
constexpr double kMaxMissingS = 90;
}  // namespace

void DcgmAligner::Record(const DcgmKey& key, const DcgmSeries* series, double now_s) {
  if (series && series->stale) {
    units_.erase(key);
    return;
  }
  if (!series) {  // a failed read or a series gone: its collections may come back, for a while
    const auto it = units_.find(key);
    if (it == units_.end()) return;
    if (!it->second.missing_since_s) it->second.missing_since_s = now_s;
    if (now_s - *it->second.missing_since_s > kMaxMissingS) units_.erase(it);
    return;
  }
  const double seen = std::min(series->seen_s, now_s);
  auto [it, fresh] = units_.try_emplace(key);
  Unit& u = it->second;
  u.missing_since_s.reset();
  if (fresh) {  // its mean covers time before the history starts: only later collections count
    u.start_s = seen;
    return;
  }
  const double last = u.collections.empty() ? u.start_s : u.collections.back().first;
  if (seen <= last) return;  // the same collection
  u.collections.emplace_back(seen, std::clamp(series->value, 0.0, 1.0));
  if (u.collections.size() > kMaxCollections) {
    u.start_s = u.collections.front().first;
    u.collections.pop_front();
  }
}

Coverage DcgmAligner::Mean(const DcgmKey& key, double from_s, double to_s) const {
  const auto it = units_.find(key);
  if (it == units_.end() || to_s <= from_s) return {};
  const Unit& u = it->second;
  if (from_s < u.start_s - kEpsilonS) return {};  // before the history: never filled in
  const double last = u.collections.empty() ? u.start_s : u.collections.back().first;
  if (to_s > last + kEpsilonS)
    return {.pending = true, .mean = std::nullopt, .covered_until_s = last};
  double busy = 0, begin = u.start_s;
  for (const auto& [end, mean] : u.collections) {
    const double overlap = std::min(to_s, end) - std::max(from_s, begin);
    if (overlap > 0) busy += mean * overlap;
    begin = end;
    if (begin >= to_s) break;
  }
  return {.pending = false, .mean = std::clamp(busy / (to_s - from_s), 0.0, 1.0)};
}

std::optional<gpu::ActivityWindow> DcgmAligner::Window(const gpu::DeviceSample& d,
                                                       double collection_s,
                                                       std::optional<double> activity,
                                                       double now_s) {
  auto [it, fresh] = gpus_.try_emplace(d.uuid);
  GpuWindow& g = it->second;
  // The energy counter at the collection's time, from the passes on either side of it (the
  // passes may be a 15 s step apart, the collection is seen within the source's poll): by the
  // board's power samples between them where they cover the pass, else linearly.
  std::optional<double> at_collection;
  if (d.energy_joules && g.pass_energy && *d.energy_joules >= *g.pass_energy && now_s > g.pass_s) {
    const double c = std::clamp(collection_s, g.pass_s, now_s);
    const double share =
        domain::EnergyShareBy(domain::MergePowerSamples(g.pass_samples, d.power_samples), g.pass_s,
                              now_s, c)
            .value_or((c - g.pass_s) / (now_s - g.pass_s));
    at_collection = *g.pass_energy + (*d.energy_joules - *g.pass_energy) * share;
  }
  g.pass_s = now_s;
  g.pass_energy = d.energy_joules;
  g.pass_samples = d.power_samples;
  if (!activity) {  // some unit has no fresh series: no window across the gap
    g.collection_s = 0;
    g.energy_joules.reset();
    return std::nullopt;
  }
  if (collection_s <= g.collection_s) {
    // The same collection: its counter may be told now (the first pass had no pass before it).
    if (collection_s == g.collection_s && !g.energy_joules) g.energy_joules = at_collection;
    return std::nullopt;
  }
  std::optional<gpu::ActivityWindow> out;
  if (!fresh && g.energy_joules && at_collection && *at_collection >= *g.energy_joules &&
      g.collection_s > 0)
    out = gpu::ActivityWindow{*activity,
                              (*at_collection - *g.energy_joules) / (collection_s - g.collection_s),
                              collection_s - g.collection_s};
  g.collection_s = collection_s;
  g.energy_joules = at_collection;
  return out;
}

void DcgmAligner::Apply(const DcgmReading& reading, double now_s, gpu::GpuSnapshot& snapshot) {
  std::set<DcgmKey> present;
  double collection_s = 0;
  std::optional<double> activity;  // of the GPU, slice-weighted; unknown if any unit is
  // Records the unit's series; true when DCGM is where its activity comes from.
  auto record = [&](DcgmKey key, double weight, bool nvml_activity) {
    const auto it = reading.series.find(key);
    present.insert(key);
    const DcgmSeries* s = it == reading.series.end() ? nullptr : &it->second;
    if (s && !s->stale && activity) {
      *activity += std::clamp(s->value, 0.0, 1.0) * weight;
      collection_s = std::max(collection_s, s->seen_s);
    } else {
      activity.reset();
    }
    Record(key, s, now_s);
    return units_.count(key) > 0 && !nvml_activity;
  };
  auto record_dram = [&](const DcgmKey& key) {
    const auto it = reading.series.find(key);
    present.insert(key);
    Record(key, it == reading.series.end() ? nullptr : &it->second, now_s);
  };
  for (auto& d : snapshot.devices) {
    if (d.lost || d.uuid.empty()) continue;
    activity = 0.0;
    collection_s = 0;
    bool held = false;
    if (d.mig_enabled) {
      const double total = d.mig_total_slices ? *d.mig_total_slices : 0.0;
      for (auto& m : d.mig_instances) {
        held |= record({d.uuid, m.gpu_instance_id}, m.slices && total > 0 ? *m.slices / total : 0.0,
                       m.sm_active_ratio.has_value());
        if (!m.slices || m.sm_active_ratio) activity.reset();  // GPM feeds the fit itself
      }
      if (total <= 0 || d.mig_instances.empty()) activity.reset();
    } else {
      const bool nvml = d.sm_active_ratio || d.utilization_gpu_percent;
      held = record({d.uuid, std::nullopt}, 1.0, nvml);
      if (nvml) activity.reset();
    }
    // Memory busy time rides along: kept per unit as activity is, never deciding what is held.
    if (d.mig_enabled)
      for (const auto& m : d.mig_instances) record_dram({d.uuid, m.gpu_instance_id, true});
    else
      record_dram({d.uuid, std::nullopt, true});
    d.dcgm_held = held;
    d.dcgm_window = Window(d, collection_s, activity, now_s);
  }
  // Units no longer in the snapshot (a GPU lost, an instance destroyed) start afresh.
  std::erase_if(units_, [&](const auto& e) { return !present.count(e.first); });
}

}  // namespace gpumeter::dcgm
