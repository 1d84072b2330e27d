// Tests feed the attribution core as the pipeline does, a NodeSnapshot per pass, built here from
// functions the test sets: each is read when a pass is fed, so a test can change what the node
// says between passes. Unset functions say nothing (owners unknown, units exclusive, unheld).
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/attribution/accountant.h"
#include "core/attribution/observe.h"
#include "domain/node_snapshot.h"

namespace gpumeter::attribution::test_support {

struct NodeSpec {
  std::function<std::optional<Owner>(uint32_t pid)> owner;
  std::function<SharingMode(const std::string& unit_uuid)> sharing;
  std::function<std::optional<double>(uint32_t pid)> mps_thread_fraction;
  std::function<std::vector<Holding>(const std::string& unit_uuid)> holders;
  // Observe's idle power of a GPU (the Accountant fits its own).
  std::function<std::optional<double>(const std::string& gpu_uuid)> idle_power_watts;
  std::function<std::optional<ProcessStart>(uint32_t pid)> process_start;
  // For Observe: a PID another process took over within the interval, as the snapshots of its two
  // ends say it (different starts; the earlier process's owner at the start).
  std::function<std::optional<EarlierProcess>(uint32_t pid)> earlier;
};

inline domain::ProcessOwner ProcessOwnerOf(const std::optional<Owner>& o) {
  if (!o) return {};
  return {o->kind, o->ns, o->pod, o->container, "test"};
}

// The snapshot of a pass that sampled `gpus` and listed `pids` besides its own, as `spec` says.
// Its units are the sample's and those of `units` (which gets the sample's): the allocations
// stay known when a GPU does not answer, as the pipeline keeps them.
inline std::shared_ptr<const domain::NodeSnapshot> SnapshotOf(
    gpu::GpuSnapshot gpus, const NodeSpec& spec, std::vector<uint32_t> pids = {},
    std::set<std::string>* seen = nullptr) {
  auto s = std::make_shared<domain::NodeSnapshot>();
  s->ok = true;
  s->gpus = std::move(gpus);
  const auto sampled = domain::SamplePids(s->gpus);
  pids.insert(pids.end(), sampled.begin(), sampled.end());
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  for (const uint32_t pid : pids) {
    domain::ProcessFact p;
    p.pid = pid;
    if (spec.owner) p.owner = ProcessOwnerOf(spec.owner(pid));
    if (spec.mps_thread_fraction) p.mps_thread_fraction = spec.mps_thread_fraction(pid);
    if (spec.process_start) p.start = spec.process_start(pid);
    s->processes.push_back(std::move(p));
  }
  std::set<std::string> own, &units = seen ? *seen : own;
  for (const auto& d : s->gpus.devices) {
    if (!d.uuid.empty()) units.insert(d.uuid);
    for (const auto& m : d.mig_instances) units.insert(m.uuid);
  }
  for (const auto& uuid : units) {
    domain::UnitFact u{uuid, spec.sharing ? spec.sharing(uuid) : SharingMode::kExclusive, {}};
    if (spec.holders) u.holders = spec.holders(uuid);
    if (u.mode != SharingMode::kExclusive || !u.holders.empty()) s->units.push_back(std::move(u));
  }
  return s;
}

// The facts of an interval from `previous` to `now` (either may be null) as `spec` says.
inline IntervalFacts FactsOf(const NodeSpec& spec, const gpu::DeviceSample* previous,
                             const gpu::DeviceSample* now) {
  gpu::GpuSnapshot both;
  for (const auto* d : {previous, now})
    if (d) both.devices.push_back(*d);
  auto end = SnapshotOf(std::move(both), spec);
  if (!spec.earlier) return IntervalFacts(end, nullptr);
  auto start = std::make_shared<domain::NodeSnapshot>();
  auto changed = std::make_shared<domain::NodeSnapshot>(*end);
  for (auto& p : changed->processes) {
    const auto e = spec.earlier(p.pid);
    if (!e) continue;
    p.start = ProcessStart{2, e->successor_start_us};
    domain::ProcessFact before;
    before.pid = p.pid;
    before.owner = ProcessOwnerOf(e->owner);
    before.start = ProcessStart{1, std::nullopt};
    start->processes.push_back(std::move(before));
  }
  return IntervalFacts(std::move(changed), std::move(start));
}

// Observe over the facts `spec` gives.
inline std::vector<UnitObservation> Observe(const gpu::DeviceSample* previous,
                                            const gpu::DeviceSample& device, double seconds,
                                            const NodeSpec& spec) {
  const auto idle =
      spec.idle_power_watts ? spec.idle_power_watts(device.uuid) : std::optional<double>();
  return attribution::Observe(previous, device, seconds, FactsOf(spec, previous, &device), idle);
}

inline std::vector<UnitObservation> ObserveUnavailable(const gpu::DeviceSample& last_good,
                                                       Rule reason, const NodeSpec& spec) {
  return attribution::ObserveUnavailable(last_good, reason, FactsOf(spec, nullptr, &last_good));
}

// An Accountant fed snapshots made from `spec` at each pass.
class FedAccountant {
 public:
  explicit FedAccountant(NodeSpec spec, AccountantOptions options = {})
      : spec_(std::move(spec)), acc_(std::move(options)) {}
  void Prime(gpu::GpuSnapshot s) { acc_.Prime(SnapshotOf(std::move(s), spec_, {}, &units_)); }
  std::vector<UnitLedger> Step(gpu::GpuSnapshot s, double seconds) {
    return acc_.Step(SnapshotOf(std::move(s), spec_, {}, &units_), seconds);
  }
  std::vector<UnitLedger> Release(const PastActivityOf& activity, bool all = false) {
    return acc_.Release(activity, all);
  }
  std::set<std::string> HeldUnits() const { return acc_.HeldUnits(); }
  std::optional<Accountant::IdlePower> IdlePowerOf(const std::string& uuid) const {
    return acc_.IdlePowerOf(uuid);
  }
  std::optional<double> IdleWatts(const std::string& uuid) const { return acc_.IdleWatts(uuid); }

 private:
  NodeSpec spec_;
  Accountant acc_;
  std::set<std::string> units_;  // every unit seen so far
};

}  // namespace gpumeter::attribution::test_support
