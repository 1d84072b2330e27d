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

void DcgmAligner::Apply(const DcgmReading& reading, double now_s, gpu::GpuSnapshot& snapshot) {
  std::set<DcgmKey> present;
  auto step = [&](DcgmKey key) {
    const auto it = reading.series.find(key);
    present.insert(key);
    return Step(key, it == reading.series.end() ? nullptr : &it->second, now_s);
  };
  for (auto& d : snapshot.devices) {
    if (d.lost || d.uuid.empty()) continue;
    if (d.mig_enabled) {
      for (auto& m : d.mig_instances) m.dcgm_gr_active = step({d.uuid, m.gpu_instance_id});
    } else {
      d.dcgm_gr_active = step({d.uuid, std::nullopt});
    }
  }
  // Units no longer in the snapshot (a GPU lost, an instance destroyed) start afresh.
  std::erase_if(units_, [&](const auto& e) { return !present.count(e.first); });
}

}  // namespace gpumeter::dcgm
