#include "store/writer/usage_recorder.h"

#include <spdlog/spdlog.h>

#include <charconv>
#include <thread>

#include "common/rfc3339.h"

namespace gpumeter::app {
namespace {

// What the store keeps of the Node object: the cloud identity a bill is matched by.
store::NodeRecord NodeRecordOf(const k8s::NodeFacts& f) {
  store::NodeRecord n;
  n.name = f.name;
  n.provider_id = f.provider_id;
  n.instance_id = f.instance_id;
  n.instance_type = f.instance_type;
  n.region = f.region;
  n.zone = f.zone;
  n.capacity_type = f.capacity_type;
  if (const auto it = f.gpu_labels.find("nvidia.com/gpu.count"); it != f.gpu_labels.end()) {
    int gpus = 0;
    const auto [end, ec] =
        std::from_chars(it->second.data(), it->second.data() + it->second.size(), gpus);
    if (ec == std::errc() && end == it->second.data() + it->second.size() && gpus > 0 &&
        gpus <= 1024)
      n.gpu_count = gpus;  // a label that is not a count leaves it unknown
  }
  return n;
}

}  // namespace

store::IntervalRecord ToIntervalRecord(const node::NodeState& state,
                                       const std::map<std::string, node::UnitInfo>& known) {
  store::IntervalRecord rec;
  if (!state.last_good) return rec;
  rec.end_unix_s = static_cast<int64_t>(state.last_good->snapshot.timestamp_us / 1'000'000);
  if (state.node_facts) rec.node = NodeRecordOf(*state.node_facts);
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
    u.unit.mode = ledger.mode;
    u.unit.fraction = info ? info->gpu_fraction : 1;
    u.seconds = ledger.seconds;
    u.memory_capacity_byte_seconds = ledger.memory_capacity_byte_seconds;
    if (ledger.energy_joules)
      u.energy_joules = *ledger.energy_joules;
    else
      u.energy_unknown_seconds = ledger.seconds;
    for (const auto& row : ledger.rows) {
      u.owners.push_back({row.owner, row.memory_byte_seconds, row.compute_seconds,
                          row.energy_joules, row.requested_share_seconds,
                          row.compute_unknown_seconds, row.compute_bound_seconds,
                          row.memory_busy_seconds, row.memory_busy_unknown_seconds,
                          row.memory_busy_bound_seconds, row.energy_bound_joules});
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
  auto rec = ToIntervalRecord(state, known_);
  if (rec.units.empty()) return;
  const auto now = clock_();
  WatchClock(rec, now);
  pending_.push_back(std::move(rec));
  if (auto e = keeper_.Ensure(now); e && *e == StoreKeeper::Event::kReopened) {
    // The intervals since the last check may have gone to the deleted file: again, oldest first.
    for (auto it = recent_.rbegin(); it != recent_.rend(); ++it) pending_.push_front(*it);
    recent_.clear();
    step_recorded_ = false;  // and the clock step, to the new file
  }
  // Past the bound, the oldest are given up: memory stays bounded in a long outage.
  while (pending_.size() > 1 &&
         pending_.back().end_unix_s - pending_.front().end_unix_s > max_pending_s_) {
    pending_.pop_front();
    ++health_.dropped;
  }
  WritePending();
  health_.pending = pending_.size();
  health_.oldest_pending_seconds =
      pending_.empty()
          ? 0
          : static_cast<double>(pending_.back().end_unix_s - pending_.front().end_unix_s);
}

void UsageRecorder::WritePending() {
  const size_t waiting = pending_.size();
  const auto store = keeper_.Current();
  if (!store) {  // not open (yet, or again): kept, and the keeper retries
    if (!pending_.empty()) health_.last_error = "store " + keeper_.path() + ": not open";
    failing_ = !pending_.empty();
    return;
  }
  const int64_t keep_recent_s = 7;  // the keeper's 5 s check, and a margin
  if (step_ && !step_recorded_) {   // before the rows written after it, and before any prune
    if (auto r = store->RecordClockStep(*step_); r)
      step_recorded_ = true;
    else if (!failing_)
      spdlog::warn("{} (tried again with the next interval; pruning stays suspended meanwhile)",
                   r.error().message);
  }
  while (!pending_.empty()) {
    const auto& rec = pending_.front();
    if (auto r = store->Write(rec); !r) {
      ++health_.write_failures;
      health_.last_error = r.error().message;
      keeper_.WriteFailed(r.error().message);
      if (!failing_)
        spdlog::error(
            "{} (the interval is kept in memory, up to {} s of them, and written when "
            "the store accepts again; metrics are unaffected)",
            r.error().message, max_pending_s_);
      failing_ = true;
      return;
    }
    ++health_.written;
    const int64_t end = rec.end_unix_s;
    recent_.push_back(std::move(pending_.front()));
    while (!recent_.empty() && recent_.front().end_unix_s < end - keep_recent_s)
      recent_.pop_front();
    pending_.pop_front();
    // Retention, hourly; never on a clock suspected of a step, nor before the store knows of it.
    if (end - last_prune_s_ >= 3600 && !guard_.suspect() && (!step_ || step_recorded_)) {
      if (auto p = store->Prune(end); !p) spdlog::warn("{}", p.error().message);
      last_prune_s_ = end;
    }
    if (end - last_release_s_ >= 60) {  // the page cache holds a minute's pages, not the file's
      if (auto m = store->ReleaseMemory(); !m) spdlog::warn("{}", m.error().message);
      last_release_s_ = end;
    }
  }
  if (waiting > 0) keeper_.WriteSucceeded(clock_());
  if (failing_)
    spdlog::info(
        "store {}: writing again after {} failed attempt(s); {} pending interval(s) written ({} "
        "dropped so far)",
        keeper_.path(), health_.write_failures, waiting, health_.dropped);
  failing_ = false;
}

void UsageRecorder::WatchClock(store::IntervalRecord& rec, Clock::time_point now) {
  const auto v = guard_.Observe(rec.end_unix_s, now);
  rec.clock_suspect = v.suspect;
  if (v.step) {
    ++health_.clock_steps;
    const int64_t before = guard_.newest_before_step().value_or(rec.end_unix_s);
    step_ = store::ClockStep{before, v.step_s, rec.end_unix_s};
    step_recorded_ = false;
    last_release_s_ = 0;  // due again, whichever way the clock went
    spdlog::warn(
        "the wall clock stepped by {} s between two intervals (this one ends at {}, the newest "
        "before the step at {}): pruning of store {} is suspended, and the rows written are "
        "marked clock_suspect, until the wall clock has moved with the monotonic clock for an "
        "hour; the rows within retention of {} are kept from then on",
        v.step_s, Rfc3339(rec.end_unix_s), Rfc3339(before), keeper_.path(), Rfc3339(before));
  }
  if (v.settled) {
    last_prune_s_ = 0;  // due at the next write, on the settled clock
    spdlog::info(
        "the wall clock has moved with the monotonic clock for an hour: pruning of store {} "
        "resumes, keeping the rows within retention of {}",
        keeper_.path(), Rfc3339(step_ ? step_->newest_before_unix_s : rec.end_unix_s));
  }
}

size_t UsageRecorder::Flush(std::chrono::milliseconds within) {
  const auto until = Clock::now() + within;
  while (!pending_.empty() && Clock::now() < until) {
    (void)keeper_.Ensure(clock_());
    WritePending();
    if (!pending_.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const size_t lost = pending_.size();
  if (lost > 0) {
    spdlog::error(
        "store {}: {} interval(s) of usage ({} .. {}) could not be written within {} ms of the "
        "stop and are lost: {}",
        keeper_.path(), lost, pending_.front().end_unix_s, pending_.back().end_unix_s,
        within.count(), health_.last_error);
    health_.dropped += lost;
    health_.lost_at_stop += lost;
    pending_.clear();
  }
  health_.pending = 0;
  health_.oldest_pending_seconds = 0;
  return lost;
}

}  // namespace gpumeter::app
