#include "core/attribution/accountant.h"

#include <algorithm>
#include <set>

namespace gpumeter::attribution {

Accountant::Accountant(ObserveContext ctx, AccountantOptions options)
    : ctx_(std::move(ctx)), observe_(ctx_), options_(std::move(options)) {
  observe_.owner = [this](uint32_t pid) { return OwnerOf(pid); };
  observe_.idle_power_watts = [this](const std::string& uuid) { return IdleWatts(uuid); };
}

std::optional<Owner> Accountant::OwnerOf(uint32_t pid) const {
  for (const OwnerTable* table : {&owners_now_, &owners_before_}) {
    auto it = std::lower_bound(table->begin(), table->end(), pid,
                               [](const auto& e, uint32_t p) { return e.first < p; });
    if (it != table->end() && it->first == pid) return it->second;
  }
  return std::nullopt;
}

namespace {

// Whole-GPU activity for the idle-power fit: slice-weighted on MIG GPUs, else the busy fraction
// (utilization.gpu is coarser than GPM: the fit's error check decides whether it is usable).
// Activity aligned from DCGM's interval means is not a measurement of this interval: such a GPU
// feeds the fit per DCGM collection instead (DeviceSample::dcgm_window).
std::optional<double> FitActivity(const gpu::DeviceSample& d) {
  if (d.mig_enabled) {
    for (const auto& m : d.mig_instances)
      if (!m.sm_active_ratio) return std::nullopt;
    return MigGpuActivity(d);
  }
  return d.sm_active_ratio || d.utilization_gpu_percent ? BusyFraction(d) : std::nullopt;
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

template <typename F>
void ForEachPid(const gpu::GpuSnapshot& snap, F f) {
  for (const auto& d : snap.devices) {
    for (const auto& p : d.processes) f(p.pid);
    for (const auto& m : d.mig_instances)
      for (const auto& p : m.processes) f(p.pid);
  }
}
}  // namespace

void Accountant::ResolveOwners(const gpu::GpuSnapshot& snapshot) {
  std::swap(owners_before_, owners_now_);
  owners_now_.clear();
  ForEachPid(snapshot, [&](uint32_t pid) { owners_now_.emplace_back(pid, std::nullopt); });
  std::sort(owners_now_.begin(), owners_now_.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  owners_now_.erase(std::unique(owners_now_.begin(), owners_now_.end(),
                                [](const auto& a, const auto& b) { return a.first == b.first; }),
                    owners_now_.end());
  if (ctx_.owner)
    for (auto& [pid, owner] : owners_now_) owner = ctx_.owner(pid);
}

void Accountant::Prime(gpu::GpuSnapshot snapshot) {
  ResolveOwners(snapshot);
  owners_before_.clear();
  for (auto& d : snapshot.devices) {
    if (d.uuid.empty() || d.lost) continue;
    auto& st = gpus_[d.uuid];
    st.last = std::move(d);
    st.last_is_previous = true;
  }
}

std::vector<UnitLedger> Accountant::Step(gpu::GpuSnapshot snapshot, double seconds) {
  std::vector<UnitLedger> out;
  if (seconds <= 0) return out;
  ResolveOwners(snapshot);
  out.reserve(gpus_.size() + 8);
  auto account = [&](const std::vector<UnitObservation>& units) {
    for (const auto& u : units) out.push_back(AttributeUnit(u, seconds));
  };
  std::set<std::string> seen;
  for (auto& d : snapshot.devices) {
    if (d.uuid.empty()) continue;  // never identified: nothing to account against
    seen.insert(d.uuid);
    auto& st = gpus_[d.uuid];
    if (d.lost) {
      if (st.last) account(ObserveUnavailable(*st.last, Rule::kGpuLost, observe_));
      st.last_is_previous = false;
      continue;
    }
    const gpu::DeviceSample* prev = st.last && st.last_is_previous ? &*st.last : nullptr;
    account(Observe(prev, d, seconds, observe_));
    if (prev && !d.name.empty()) {
      const auto energy = GpuEnergyJoules(prev, d, seconds, nullptr);
      const auto activity = FitActivity(d);
      auto& fit = fits_.try_emplace(d.name, options_.idle_power_half_life_s).first->second;
      if (energy && activity) fit.Add(*activity, *energy / seconds, seconds);
      if (const auto& w = d.dcgm_window) fit.Add(w->activity, w->watts, w->seconds);
      if (energy && RanNothing(*prev) && RanNothing(d))
        seen_.try_emplace(d.name, options_.idle_power_half_life_s)
            .first->second.Add(*energy / seconds, seconds);
    }
    st.last = std::move(d);
    st.last_is_previous = true;
  }
  for (auto& [uuid, st] : gpus_) {
    if (seen.count(uuid) || !st.last) continue;
    account(ObserveUnavailable(*st.last, Rule::kGpuMissing, observe_));
    st.last_is_previous = false;
  }
  return out;
}

}  // namespace gpumeter::attribution
