#include "core/attribution/accountant.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "domain/power_trace.h"

namespace gpumeter::attribution {

Accountant::Accountant(AccountantOptions options) : options_(std::move(options)) {}

namespace {

// Whole-GPU activity for the idle-power fit: slice-weighted on MIG GPUs, else GPM's, else the
// per-process samples' sum where they cover the interval (the driver samples every process that
// ran, so their sum is the busy fraction over the same window as the energy), else
// utilization.gpu. That last is one driver period's value, not the interval's: paired with the
// interval's mean power it fitted an L40S's 36 W idle power anywhere from 17 to 60 W.
// Activity aligned from DCGM's interval means is not a measurement of this interval: such a GPU
// feeds the fit per DCGM collection instead (DeviceSample::dcgm_window).
std::optional<double> FitActivity(const gpu::DeviceSample& d, bool mps) {
  if (d.mig_enabled) {
    for (const auto& m : d.mig_instances)
      if (!m.sm_active_ratio) return std::nullopt;
    return MigGpuActivity(d);
  }
  if (d.sm_active_ratio) return d.sm_active_ratio;
  // Not under MPS: clients' kernels run at once there, so their shares add up past the busy time.
  if (!mps && d.process_utilization_supported && d.process_util_period_us &&
      d.process_util_uncovered_us == 0 && !SmSharesExtrapolated(d)) {
    double sum = 0;
    for (const auto& [pid, share] : SmShares(d)) sum += share;
    return std::min(1.0, sum);
  }
  return d.utilization_gpu_percent ? BusyFraction(d) : std::nullopt;
}

}  // namespace

std::optional<Accountant::IdlePower> Accountant::IdlePowerOf(const std::string& gpu_uuid) const {
  if (auto it = options_.idle_power_watts.find(gpu_uuid); it != options_.idle_power_watts.end())
    return IdlePower{it->second, IdleSource::kConfigured};
  const auto st = gpus_.find(gpu_uuid);
  if (st == gpus_.end() || !st->second.last) return std::nullopt;
  const std::string& model = st->second.last->name;
  if (auto it = options_.idle_power_watts.find(model); it != options_.idle_power_watts.end())
    return IdlePower{it->second, IdleSource::kConfigured};
  if (auto it = fits_.find(model); it != fits_.end())
    if (auto w = it->second.IdleWatts()) return IdlePower{*w, IdleSource::kFitted};
  if (auto it = seen_.find(model); it != seen_.end())
    if (auto w = it->second.IdleWatts()) return IdlePower{*w, IdleSource::kSeenIdle};
  return std::nullopt;
}

std::optional<double> Accountant::IdleWatts(const std::string& gpu_uuid) const {
  const auto p = IdlePowerOf(gpu_uuid);
  return p ? std::optional<double>(p->watts) : std::nullopt;
}

namespace {
// Nothing ran on the GPU: no process on it or on any of its MIG instances.
// A sample with any failed call is no evidence (an empty list may be a list that failed).
bool RanNothing(const gpu::DeviceSample& d) {
  if (!d.processes.empty() || !d.errors.empty()) return false;
  return std::all_of(d.mig_instances.begin(), d.mig_instances.end(),
                     [](const gpu::MigInstanceSample& m) { return m.processes.empty(); });
}

}  // namespace

void Accountant::Prime(std::shared_ptr<const domain::NodeSnapshot> snapshot) {
  last_s_ = static_cast<double>(snapshot->gpus.timestamp_us) / 1e6;
  before_.reset();
  now_ = std::move(snapshot);
  for (const auto& d : now_->gpus.devices) {
    if (d.uuid.empty() || d.lost) continue;
    auto& st = gpus_[d.uuid];
    st.from = now_;
    st.last = &d;
    st.last_is_previous = true;
  }
}

std::vector<UnitLedger> Accountant::Step(std::shared_ptr<const domain::NodeSnapshot> next,
                                         double seconds) {
  std::vector<UnitLedger> out;
  if (seconds <= 0) return out;
  before_ = std::move(now_);
  now_ = std::move(next);
  const gpu::GpuSnapshot& snapshot = now_->gpus;
  const IntervalFacts facts(now_, before_);
  const double from_s = last_s_;
  // A failed pass (no devices, no time) changes neither the clock nor which GPUs are held: what
  // is held waits for its collection as before, and the next good interval starts at the last.
  if (!snapshot.devices.empty() || snapshot.timestamp_us != 0) {
    last_s_ = static_cast<double>(snapshot.timestamp_us) / 1e6;
    held_now_.clear();
  }
  out.reserve(gpus_.size() + 8);
  auto account = [&](const std::vector<UnitObservation>& units) {
    for (const auto& u : units) out.push_back(AttributeUnit(u, seconds));
  };
  std::set<std::string> seen;
  for (const auto& d : snapshot.devices) {
    if (d.uuid.empty()) continue;  // never identified: nothing to account against
    seen.insert(d.uuid);
    auto& st = gpus_[d.uuid];
    if (d.lost) {
      if (st.last) account(ObserveUnavailable(*st.last, Rule::kGpuLost, facts));
      st.last_is_previous = false;
      continue;
    }
    const gpu::DeviceSample* prev = st.last_is_previous ? st.last : nullptr;
    if (d.dcgm_held) {
      auto& queue = held_[d.uuid];
      queue.push_back(Hold(prev, d, seconds, facts));
      queue.back().from_s = from_s, queue.back().to_s = last_s_;
      held_now_.insert(d.uuid);
    } else {
      account(Observe(prev, d, seconds, facts, IdleWatts(d.uuid)));
    }
    if (prev && !d.name.empty()) {
      const auto energy = GpuEnergyJoules(prev, d, seconds, nullptr);
      const bool mps = now_->ModeOf(d.uuid) == SharingMode::kMps;
      const auto activity = FitActivity(d, mps);
      auto& fit = fits_.try_emplace(d.name, options_.idle_power_half_life_s).first->second;
      if (energy && activity) fit.Add(*activity, *energy / seconds, seconds);
      if (const auto& w = d.dcgm_window) fit.Add(w->activity, w->watts, w->seconds);
      if (energy && RanNothing(*prev) && RanNothing(d))
        seen_.try_emplace(d.name, options_.idle_power_half_life_s)
            .first->second.Add(*energy / seconds, seconds);
    }
    st.from = now_;
    st.last = &d;
    st.last_is_previous = true;
  }
  for (auto& [uuid, st] : gpus_) {
    if (seen.count(uuid) || !st.last) continue;
    account(ObserveUnavailable(*st.last, Rule::kGpuMissing, facts));
    st.last_is_previous = false;
  }
  return out;
}

Accountant::HeldInterval Accountant::Hold(const gpu::DeviceSample* previous,
                                          const gpu::DeviceSample& d, double seconds,
                                          const IntervalFacts& facts) {
  HeldInterval h;
  if (previous) h.previous = *previous;
  h.device = d;
  h.seconds = seconds;
  h.facts = facts;
  return h;
}

std::optional<Accountant::Means> Accountant::Resolve(const HeldInterval& h,
                                                     const PastActivityOf& activity,
                                                     bool force) const {
  Means means;
  auto mean = [&](std::optional<uint32_t> gi) {
    const auto a = activity(h.device.uuid, gi, h.from_s, h.to_s);
    if (a.pending && !force) return false;
    means.activity.push_back(a.pending ? std::nullopt : a.mean);
    means.memory.push_back(a.pending ? std::nullopt : a.memory);
    return true;
  };
  if (h.device.mig_enabled) {
    for (const auto& m : h.device.mig_instances)
      if (!mean(m.gpu_instance_id)) return std::nullopt;
  } else if (!mean(std::nullopt)) {
    return std::nullopt;
  }
  return means;
}

std::vector<UnitObservation> Accountant::ObserveHeld(
    const HeldInterval& h, const Means& means, std::optional<double> watts,
    const std::vector<UnitProfile>* profile) const {
  gpu::DeviceSample d = h.device;
  if (d.mig_enabled) {
    for (size_t i = 0; i < d.mig_instances.size() && i < means.activity.size(); ++i) {
      d.mig_instances[i].dcgm_gr_active = means.activity[i];
      d.mig_instances[i].dcgm_dram_active = means.memory[i];
    }
  } else if (!means.activity.empty()) {
    d.dcgm_gr_active = means.activity.front();
    d.dcgm_dram_active = means.memory.front();
  }
  std::optional<gpu::DeviceSample> previous = h.previous;
  if (watts && previous && previous->energy_joules) {  // the counter as if power had been even
    d.energy_joules = *previous->energy_joules + *watts * h.seconds;
  } else if (h.split) {  // the part's own energy; without it, not the whole interval's counter
    if (h.joules && previous && previous->energy_joules)
      d.energy_joules = *previous->energy_joules + *h.joules;
    else
      d.energy_joules.reset();
  }
  // The owners, modes and holders of the time the interval was held, but today's idle power (the
  // fit only learns).
  auto units = Observe(previous ? &*previous : nullptr, d, h.seconds, h.facts, IdleWatts(d.uuid));
  if (profile) {
    // The units come in the device's order (MIG instances, then free slices); the profile's too.
    for (size_t i = 0; i < profile->size() && i < units.size(); ++i) {
      const UnitProfile& p = (*profile)[i];
      UnitObservation& u = units[i];
      if (!u.energy_joules) continue;
      u.energy_joules = p.energy_joules;
      u.energy_rule = Rule::kEnergyProfiledByPower;
      const double idle_s = h.seconds - p.busy_seconds;
      if (p.busy_seconds > 0) u.busy_time_watts = p.busy_energy_joules / p.busy_seconds;
      if (idle_s > 0) u.idle_time_watts = (p.energy_joules - p.busy_energy_joules) / idle_s;
      u.energy_bound_joules = p.busy_energy_bound_joules;
    }
    // The slices in no instance (the unit after them) keep what the instances did not take: the
    // profile's idle power for them, so the GPU's energy adds up whatever idle power it took.
    if (d.mig_enabled && units.size() == profile->size() + 1 && units.back().energy_joules) {
      double taken = 0;
      for (size_t i = 0; i < profile->size(); ++i) taken += units[i].energy_joules.value_or(0);
      if (const auto gpu =
              GpuEnergyJoules(previous ? &*previous : nullptr, d, h.seconds, nullptr)) {
        UnitObservation& free = units.back();
        free.energy_joules = std::max(0.0, *gpu - taken);
        // Idle power guessed (none fitted or configured): so is the free slices' share of it, the
        // truth anywhere from none to twice the guess (collection_profile.h).
        if (!IdleWatts(h.device.uuid)) {
          free.energy_rule = Rule::kEnergyProfiledByPower;
          free.energy_bound_joules = *free.energy_joules;
        } else {
          free.energy_rule = Rule::kMigFreeSlicesIdle;
        }
      }
    }
  }
  return units;
}

namespace {
// Equal but for rounding (a mean is Σ mean × overlap / length).
bool SameMeans(const std::vector<std::optional<double>>& a,
               const std::vector<std::optional<double>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].has_value() != b[i].has_value() || (a[i] && std::abs(*a[i] - *b[i]) > 1e-9))
      return false;
  return true;
}
}  // namespace

std::vector<UnitLedger> Accountant::Release(const PastActivityOf& activity, bool all) {
  // A GPU held this long without a collection is past any source's staleness: given up as
  // unknown rather than kept without bound (an hour at a 1 s step).
  constexpr size_t kMaxHeld = 3600;
  std::vector<UnitLedger> merged;
  std::map<std::string, size_t> last_of;  // unit UUID -> its latest merged ledger in `merged`
  auto book = [&](const std::vector<UnitObservation>& units, double seconds, double late) {
    for (const auto& u : units) {
      UnitLedger l = AttributeUnit(u, seconds);
      l.late_seconds = late;
      const auto at = last_of.find(l.uuid);
      if (at == last_of.end() ||
          merged[at->second].energy_joules.has_value() != l.energy_joules.has_value() ||
          merged[at->second].memory_signal != l.memory_signal) {
        last_of[l.uuid] = merged.size();
        merged.push_back(std::move(l));
      } else {
        MergeInto(merged[at->second], l);
      }
    }
  };
  for (auto it = held_.begin(); it != held_.end();) {
    auto& queue = it->second;
    const bool force = all || !held_now_.count(it->first);
    // Also at a stop: the part a collection covers is told, only the rest is unknown.
    SplitAtCoverage(queue, activity);
    std::vector<Means> known;  // of the front intervals whose activity is known (or forced)
    for (const auto& h : queue) {
      auto m = Resolve(h, activity, force || queue.size() - known.size() > kMaxHeld);
      if (!m) break;
      known.push_back(std::move(*m));
    }
    // Where the board's power tells how activity moved inside the collections, each interval is
    // booked at its own profile and energy (collection_profile.h).
    const auto profile = Profile(queue, known, activity);
    for (size_t i = 0; i < profile.size(); ++i)
      book(ObserveHeld(queue[i], profile[i].means, std::nullopt, &profile[i].units),
           queue[i].seconds, std::max(0.0, last_s_ - queue[i].to_s));
    // Else intervals with the same activity lie in one collection, which tells only their mean:
    // the GPU's energy over them is spread at their mean power, so the split by that mean
    // activity charges each instance what the collection says it drew (not more where power
    // peaked in an interval whose own activity is unknown). Only where the counter gave every
    // interval's.
    for (size_t i = profile.size(); i < known.size();) {
      size_t j = i;
      double joules = 0, seconds = 0;
      bool counted = true;
      for (; j < known.size() && SameMeans(known[j].activity, known[i].activity); ++j) {
        Rule rule = Rule::kNone;
        const auto e = HeldEnergy(queue[j], &rule);
        counted = counted && e && rule == Rule::kEnergyCounterDelta;
        joules += e.value_or(0), seconds += queue[j].seconds;
      }
      const auto watts =
          counted && seconds > 0 ? std::optional<double>(joules / seconds) : std::nullopt;
      for (; i < j; ++i)
        book(ObserveHeld(queue[i], known[i], watts), queue[i].seconds,
             std::max(0.0, last_s_ - queue[i].to_s));
    }
    queue.erase(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(known.size()));
    it = queue.empty() ? held_.erase(it) : std::next(it);
  }
  return merged;
}

std::optional<double> Accountant::HeldEnergy(const HeldInterval& h, Rule* rule) {
  if (h.split) {
    if (h.joules) {
      if (rule) *rule = Rule::kEnergyCounterDelta;
      return h.joules;
    }
    // No counter: the mean of the power readings over the part's own seconds, if any.
    gpu::DeviceSample d = h.device;
    d.energy_joules.reset();
    std::optional<gpu::DeviceSample> previous = h.previous;
    if (previous) previous->energy_joules.reset();
    return GpuEnergyJoules(previous ? &*previous : nullptr, d, h.seconds, rule);
  }
  return GpuEnergyJoules(h.previous ? &*h.previous : nullptr, h.device, h.seconds, rule);
}

void Accountant::SplitAtCoverage(std::deque<HeldInterval>& queue, const PastActivityOf& activity) {
  constexpr double kShortestPartS = 1e-3;  // a split finer than this is float noise
  for (size_t q = 0; q < queue.size(); ++q) {
    HeldInterval& h = queue[q];
    std::vector<std::optional<uint32_t>> units;
    if (h.device.mig_enabled) {
      for (const auto& m : h.device.mig_instances) units.push_back(m.gpu_instance_id);
    } else {
      units.push_back(std::nullopt);
    }
    bool pending = false;
    double until = h.to_s;
    for (const auto& gi : units) {
      const auto a = activity(h.device.uuid, gi, h.from_s, h.to_s);
      if (!a.pending) continue;
      if (!a.covered_until_s) return;  // cannot be told where: wait whole
      pending = true;
      until = std::min(until, *a.covered_until_s);
    }
    if (!pending) continue;  // told already: the next one may be the first pending
    if (until <= h.from_s + kShortestPartS || until >= h.to_s - kShortestPartS) return;
    const double part = (until - h.from_s) / (h.to_s - h.from_s);
    HeldInterval later = h;
    Rule rule = Rule::kNone;
    const auto energy = HeldEnergy(h, &rule);
    const bool counted = energy && rule == Rule::kEnergyCounterDelta;
    const double share =
        domain::EnergyShareBy(h.previous ? domain::MergePowerSamples(h.previous->power_samples,
                                                                     h.device.power_samples)
                                         : h.device.power_samples,
                              h.from_s, h.to_s, until)
            .value_or(part);
    later.split = h.split = true;
    later.joules = counted ? std::optional<double>(*energy * (1 - share)) : std::nullopt;
    h.joules = counted ? std::optional<double>(*energy * share) : std::nullopt;
    later.from_s = h.to_s = until;
    later.seconds = h.seconds * (1 - part);
    h.seconds *= part;
    // Totals of the interval, not levels: each part has its share.
    const uint64_t uncovered = h.device.process_util_uncovered_us;
    h.device.process_util_uncovered_us =
        static_cast<uint64_t>(std::llround(static_cast<double>(uncovered) * part));
    later.device.process_util_uncovered_us = uncovered - h.device.process_util_uncovered_us;
    queue.insert(queue.begin() + static_cast<std::ptrdiff_t>(q) + 1, std::move(later));
    return;
  }
}

std::set<std::string> Accountant::HeldUnits() const {
  std::set<std::string> out;
  for (const auto& [gpu, queue] : held_) {
    if (queue.empty()) continue;
    out.insert(gpu);
    for (const auto& m : queue.back().device.mig_instances) out.insert(m.uuid);
  }
  return out;
}

}  // namespace gpumeter::attribution
