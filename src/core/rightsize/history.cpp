#include "core/rightsize/history.h"

#include <algorithm>
#include <cmath>

#include "domain/mig_profiles.h"

namespace gpumeter::rightsize {
namespace {

// A unit's share of its GPU's memory bandwidth, which MIG partitions with the memory: a MIG
// instance's memory eighths (a 1g.10gb has 1/7 of the compute, 1/8 of the bandwidth); else its
// share of the GPU.
double MemoryShareOfGpu(const attribution::UnitKey& unit) {
  if (!unit.mig_profile.empty())
    if (const auto* model = domain::MigModelFor(unit.model))
      if (const auto* p = domain::FindMigProfile(*model, unit.mig_profile))
        return p->memory_eighths / 8.0;
  return unit.fraction;
}

using domain::OwnerKind;

int64_t DayOf(int64_t t) { return t >= 0 ? t / 86400 : (t - 86399) / 86400; }

}  // namespace

double WorkloadHistory::HeldGpuFraction() const {
  double f = 0;
  for (const auto& h : held) f += h.share * h.unit.fraction;
  return f;
}

double WorkloadHistory::Confidence() const {
  if (samples == 0) return 0;
  // Samples per pod-minute: replicas do not make a history longer.
  const double days = static_cast<double>(last_s + 60 - first_s) / 86400.0;
  return std::min(days, static_cast<double>(minutes) / 1440.0);
}

WorkloadKey HistoryBuilder::KeyOf(const domain::Owner& o) {
  const std::pair<std::string, std::string> pod{o.ns, o.pod};
  auto it = workload_of_.find(pod);
  if (it == workload_of_.end()) it = workload_of_.emplace(pod, WorkloadOf(o.pod, {})).first;
  return {o.ns, it->second.Key(), o.container};
}

void HistoryBuilder::CloseDay(WorkloadHistory& h, const std::string& pod, int64_t day) {
  const auto it = day_peak_.find({h.key, pod});
  if (it == day_peak_.end() || it->second.first != day) return;
  // The day's peak, stamped at the day's end (or its last sample, for the running day).
  h.memory_peaks.Add(it->second.second, 1,
                     static_cast<double>(std::min((day + 1) * 86400, h.last_s + 60)));
  day_peak_.erase(it);
}

void HistoryBuilder::Add(int64_t t, const std::vector<attribution::UnitRecord>& units) {
  const int64_t day = DayOf(t);
  latest_ = std::max(latest_, t);
  // A bucket is a minute, or an hour whose minutes were pruned: it weighs its minutes.
  double bucket_s = 0;
  for (const auto& u : units) bucket_s = std::max(bucket_s, u.seconds);
  const double weight = std::max(1.0, std::round(bucket_s / 60));
  // One sample per pod: a pod on several GPUs is the sum over them.
  struct Minute {
    double memory = 0, compute = 0, traffic = 0;
    bool unknown = false, traffic_unknown = false;
  };
  std::map<std::pair<WorkloadKey, std::string>, Minute> minute;
  for (const auto& u : units) {
    if (u.seconds <= 0) continue;
    // A minute in which most of the unit's time or memory could not be placed (the GPU gave no
    // readings: lost, or a failed pass) says nothing about its holders: no sample. Smaller
    // unattributed parts (a process whose container is unknown) leave the holders' own readings.
    bool unknown = false;
    double unplaced_compute = 0, unplaced_memory = 0;
    for (const auto& o : u.owners)
      if (o.owner.kind == OwnerKind::kUnattributed)
        unplaced_compute += o.compute_seconds, unplaced_memory += o.memory_byte_seconds;
    if (unplaced_compute >= 0.5 * u.seconds ||
        (u.memory_capacity_byte_seconds > 0 &&
         unplaced_memory >= 0.5 * u.memory_capacity_byte_seconds))
      unknown = true;
    for (const auto& o : u.owners) {
      if (o.owner.kind != OwnerKind::kContainer) continue;
      const auto key = KeyOf(o.owner);
      auto& h = out_.try_emplace(key).first->second;
      h.key = key;
      h.pods.insert(o.owner.pod);
      if (o.requested_share_seconds > 0) {
        // What the pod holds now: the list restarts with each later minute.
        auto& [at, held] = held_[{key, o.owner.pod}];
        if (at != t || held.empty()) held.clear(), at = t;
        held.push_back({u.unit, o.requested_share_seconds / u.seconds,
                        u.memory_capacity_byte_seconds > 0
                            ? std::optional<double>(u.memory_capacity_byte_seconds / u.seconds)
                            : std::nullopt});
      }
      auto& m = minute[{key, o.owner.pod}];
      // Its own compute unmeasured for more than a rounding share of the minute: its reading is
      // a lower bound, not a sample (a busy trainer on an A100 MIG instance without DCGM).
      m.unknown = m.unknown || unknown || o.compute_unknown_seconds > 0.01 * u.seconds;
      m.memory += o.memory_byte_seconds / u.seconds;
      m.compute += o.compute_seconds / u.seconds * u.unit.fraction;
      // Its traffic unmeasured for more than a rounding share: no traffic sample this minute.
      m.traffic_unknown =
          m.traffic_unknown || unknown || o.memory_busy_unknown_seconds > 0.01 * u.seconds;
      m.traffic += o.memory_busy_seconds / u.seconds * MemoryShareOfGpu(u.unit);
    }
  }
  for (const auto& [kp, m] : minute) {
    if (m.unknown) continue;
    auto& h = out_.at(kp.first);
    if (h.samples == 0) h.first_s = t;
    h.samples += static_cast<uint64_t>(weight);
    if (auto& last = last_minute_[kp.first]; h.minutes == 0 || last != t)
      h.minutes += static_cast<uint64_t>(weight), last = t;
    h.last_s = std::max(h.last_s, t);
    h.compute.Add(m.compute, weight, static_cast<double>(t));
    if (!m.traffic_unknown) {
      h.traffic.Add(m.traffic, weight, static_cast<double>(t));
      h.traffic_samples += static_cast<uint64_t>(weight);
    }
    h.peak_memory_bytes = std::max(h.peak_memory_bytes, m.memory);
    h.peak_compute = std::max(h.peak_compute, m.compute);
    const auto [peak, fresh] = day_peak_.try_emplace(kp, day, m.memory);
    if (fresh) continue;
    if (peak->second.first == day) {
      peak->second.second = std::max(peak->second.second, m.memory);
    } else {
      CloseDay(h, kp.second, peak->second.first);
      day_peak_[kp] = {day, m.memory};
    }
  }
}

std::map<WorkloadKey, WorkloadHistory> HistoryBuilder::Finish() {
  for (auto it = day_peak_.begin(); it != day_peak_.end();) {
    const auto next = std::next(it);
    CloseDay(out_.at(it->first.first), it->first.second, it->second.first);
    it = next;
  }
  // Each workload's replicas: the pods that held something in its last such minute.
  std::map<WorkloadKey, int64_t> last;
  for (const auto& [kp, held] : held_) last[kp.first] = std::max(last[kp.first], held.first);
  for (const auto& [kp, held] : held_) {
    if (held.first != last[kp.first] || held.first < latest_ - kGoneAfter) continue;
    auto& h = out_.at(kp.first);
    if (h.replicas++ == 0) h.held = held.second;
  }
  return std::move(out_);
}

}  // namespace gpumeter::rightsize
