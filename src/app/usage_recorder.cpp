#include "app/usage_recorder.h"

#include <spdlog/spdlog.h>

namespace gpumeter::app {
store::IntervalRecord ToIntervalRecord(const node::NodeState& state,
                                       const std::map<std::string, node::UnitInfo>& known) {
  store::IntervalRecord rec;
  if (!state.last_good) return rec;
  rec.end_unix_s = static_cast<int64_t>(state.last_good->snapshot.timestamp_us / 1'000'000);
  for (const auto& ledger : state.last_interval) {
    store::UnitRecord u;
    const auto* info = state.FindUnit(ledger.uuid);
    if (!info || info->model.empty())  // a lost GPU has no name in its sample
      if (auto it = known.find(ledger.uuid); it != known.end()) info = &it->second;
    u.unit.node = state.node;
    u.unit.uuid = ledger.uuid;
    u.unit.gpu_uuid = info ? info->gpu_uuid : ledger.uuid;
    u.unit.model = info ? info->model : "";
    u.unit.mig_profile = info ? info->mig_profile : "";
    u.unit.mode = domain::ToString(ledger.mode);
    u.unit.fraction = info ? info->gpu_fraction : 1;
    u.seconds = ledger.seconds;
    u.memory_capacity_byte_seconds = ledger.memory_capacity_byte_seconds;
    if (ledger.energy_joules)
      u.energy_joules = *ledger.energy_joules;
    else
      u.energy_unknown_seconds = ledger.seconds;
    for (const auto& row : ledger.rows) {
      u.owners.push_back({row.owner, row.memory_byte_seconds, row.compute_seconds,
                          row.energy_joules, row.requested_share_seconds});
      if (row.owner.kind == domain::OwnerKind::kContainer)
        if (auto it = state.pod_labels.find({row.owner.ns, row.owner.pod});
            it != state.pod_labels.end())
          rec.pod_labels[it->first] = it->second;
    }
    rec.units.push_back(std::move(u));
  }
  return rec;
}

void UsageRecorder::Record(const node::NodeState& state) {
  if (state.intervals == 0 || state.intervals == last_interval_) return;
  last_interval_ = state.intervals;
  for (const auto& u : state.units)
    if (!u.model.empty())
      known_[u.uuid] = u;  // a lost GPU's empty description must not replace its last good one
  const auto rec = ToIntervalRecord(state, known_);
  if (rec.units.empty()) return;
  if (auto r = store_.Write(rec); !r) {
    ++failed_;
    if (!failing_)
      spdlog::error(
          "{} (usage of this interval not stored; retrying with the next; metrics are unaffected)",
          r.error().message);
    failing_ = true;
    return;
  }
  if (failing_)
    spdlog::info("store {}: writing again after {} failed interval(s)", store_.path(), failed_);
  failing_ = false;
  ++written_;
  if (rec.end_unix_s - last_prune_s_ >= 3600) {  // retention, hourly
    if (auto p = store_.Prune(rec.end_unix_s); !p) spdlog::warn("{}", p.error().message);
    last_prune_s_ = rec.end_unix_s;
  }
}

}  // namespace gpumeter::app
