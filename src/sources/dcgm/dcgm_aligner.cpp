#include "sources/dcgm/dcgm_aligner.h"

#include <algorithm>
#include <set>

namespace gpumeter::dcgm {

std::optional<double> DcgmAligner::Step(const DcgmKey& key, const DcgmSeries* series,
                                        double now_s) {
  if (!series || series->stale) {
    units_.erase(key);
    return std::nullopt;
  }
  auto [it, fresh] = units_.try_emplace(key);
  Unit& u = it->second;
  const double seen = std::min(series->seen_s, now_s);
  if (fresh) {
    // Everything before the first pass counts as accounted: only later intervals are filled.
    u = Unit{seen, 0, series->value, series->value * (now_s - seen), now_s};
    return std::nullopt;
  }
  if (seen > u.known_until_s) {  // a new collection: its mean covers the time since the last
    u.known_busy_s += series->value * (seen - u.known_until_s);
    u.known_until_s = seen;
    u.value = series->value;
  }
  const double dt = now_s - u.last_pass_s;
  if (dt <= 0) return std::nullopt;
  const double target = u.known_busy_s + u.value * (now_s - u.known_until_s);
  const double busy = std::clamp((target - u.attributed_s) / dt, 0.0, 1.0);
  u.attributed_s += busy * dt;
  u.last_pass_s = now_s;
  return busy;
}

std::optional<gpu::ActivityWindow> DcgmAligner::Window(const gpu::DeviceSample& d,
                                                       double collection_s,
                                                       std::optional<double> activity,
                                                       double now_s) {
  auto [it, fresh] = gpus_.try_emplace(d.uuid);
  GpuWindow& g = it->second;
  if (!activity) {  // some unit has no fresh series: no window across the gap
    gpus_.erase(it);
    return std::nullopt;
  }
  if (!fresh && collection_s <= g.collection_s) return std::nullopt;
  std::optional<gpu::ActivityWindow> out;
  if (!fresh && g.energy_joules && d.energy_joules && *d.energy_joules >= *g.energy_joules &&
      now_s > g.pass_s)
    out = gpu::ActivityWindow{*activity, (*d.energy_joules - *g.energy_joules) / (now_s - g.pass_s),
                              now_s - g.pass_s};
  g = GpuWindow{collection_s, now_s, d.energy_joules};
  return out;
}

void DcgmAligner::Apply(const DcgmReading& reading, double now_s, gpu::GpuSnapshot& snapshot) {
  std::set<DcgmKey> present;
  double collection_s = 0;
  std::optional<double> activity;  // of the GPU, slice-weighted; unknown if any unit is
  auto step = [&](DcgmKey key, double weight) {
    const auto it = reading.series.find(key);
    present.insert(key);
    const DcgmSeries* s = it == reading.series.end() ? nullptr : &it->second;
    if (s && !s->stale && activity) {
      *activity += s->value * weight;
      collection_s = std::max(collection_s, s->seen_s);
    } else {
      activity.reset();
    }
    return Step(key, s, now_s);
  };
  for (auto& d : snapshot.devices) {
    if (d.lost || d.uuid.empty()) continue;
    activity = 0.0;
    collection_s = 0;
    if (d.mig_enabled) {
      const double total = d.mig_total_slices ? *d.mig_total_slices : 0.0;
      for (auto& m : d.mig_instances) {
        m.dcgm_gr_active =
            step({d.uuid, m.gpu_instance_id}, m.slices && total > 0 ? *m.slices / total : 0.0);
        if (!m.slices || m.sm_active_ratio) activity.reset();  // GPM feeds the fit itself
      }
      if (total <= 0 || d.mig_instances.empty()) activity.reset();
    } else {
      d.dcgm_gr_active = step({d.uuid, std::nullopt}, 1.0);
      if (d.sm_active_ratio || d.utilization_gpu_percent) activity.reset();
    }
    d.dcgm_window = Window(d, collection_s, activity, now_s);
  }
  // Units no longer in the snapshot (a GPU lost, an instance destroyed) start afresh.
  std::erase_if(units_, [&](const auto& e) { return !present.count(e.first); });
}

}  // namespace gpumeter::dcgm
