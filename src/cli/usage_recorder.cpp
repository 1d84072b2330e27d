#include "cli/usage_recorder.h"

#include <spdlog/spdlog.h>

namespace gpumeter::cli {
namespace {

// The fraction of its GPU a unit is: 1 for a whole GPU; a MIG instance's compute slices over the
// GPU's; the slices in no instance for the free-slices unit (named by the GPU's UUID).
double Fraction(const gpu::GpuSnapshot& snap, const std::string& unit_uuid) {
  for (const auto& d : snap.devices) {
    if (!d.mig_enabled || !d.mig_total_slices || *d.mig_total_slices == 0) {
      if (d.uuid == unit_uuid) return 1;
      continue;
    }
    const double total = *d.mig_total_slices;
    double used = 0;
    for (const auto& m : d.mig_instances) {
      if (m.uuid == unit_uuid) return m.slices ? *m.slices / total : 0;
      used += m.slices.value_or(0);
    }
    if (d.uuid == unit_uuid) return std::max(0.0, total - used) / total;
  }
  return 1;
}

}  // namespace

store::IntervalRecord ToIntervalRecord(const node::NodeState& state) {
  store::IntervalRecord rec;
  if (!state.last_good) return rec;
  const auto& snap = state.last_good->snapshot;
  rec.end_unix_s = static_cast<int64_t>(snap.timestamp_us / 1'000'000);
  for (const auto& ledger : state.last_interval) {
    store::UnitRecord u;
    const auto* info = state.FindUnit(ledger.uuid);
    u.unit.node = state.node;
    u.unit.uuid = ledger.uuid;
    u.unit.gpu_uuid = info ? info->gpu_uuid : ledger.uuid;
    u.unit.model = info ? info->model : "";
    u.unit.mig_profile = info ? info->mig_profile : "";
    u.unit.mode = attribution::ToString(ledger.mode);
    u.unit.fraction = Fraction(snap, ledger.uuid);
    u.seconds = ledger.seconds;
    u.memory_capacity_byte_seconds = ledger.memory_capacity_byte_seconds;
    if (ledger.energy_joules) u.energy_joules = *ledger.energy_joules;
    else u.energy_unknown_seconds = ledger.seconds;
    for (const auto& row : ledger.rows) {
      u.owners.push_back({row.owner, row.memory_byte_seconds, row.compute_seconds, row.energy_joules, row.requested_share_seconds});
      if (row.owner.kind == attribution::OwnerKind::kContainer)
        if (auto it = state.pod_labels.find({row.owner.ns, row.owner.pod}); it != state.pod_labels.end())
          rec.pod_labels[it->first] = it->second;
    }
    rec.units.push_back(std::move(u));
  }
  return rec;
}

void UsageRecorder::Record(const node::NodeState& state) {
  if (state.intervals == 0 || state.intervals == last_interval_) return;
  last_interval_ = state.intervals;
  const auto rec = ToIntervalRecord(state);
  if (rec.units.empty()) return;
  if (auto r = store_.Write(rec); !r) {
    ++failed_;
    if (!failing_) spdlog::error("{} (usage of this interval not stored; retrying with the next; metrics are unaffected)", r.error().message);
    failing_ = true;
    return;
  }
  if (failing_) spdlog::info("store {}: writing again after {} failed interval(s)", store_.path(), failed_);
  failing_ = false;
  ++written_;
  if (rec.end_unix_s - last_prune_s_ >= 3600) {  // retention, hourly
    if (auto p = store_.Prune(rec.end_unix_s); !p) spdlog::warn("{}", p.error().message);
    last_prune_s_ = rec.end_unix_s;
  }
}

}  // namespace gpumeter::cli
