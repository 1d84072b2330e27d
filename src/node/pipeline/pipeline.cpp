#include "node/pipeline/pipeline.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace gpumeter::node {
namespace {

using domain::Owner;
using domain::OwnerKind;
using domain::SharingMode;

// The profile in a MIG device's NVML name ("NVIDIA A100-SXM4-40GB MIG 1g.5gb" -> "1g.5gb"); the
// whole name when it has no " MIG " part.
std::string MigProfileOfName(const std::string& name) {
  const auto at = name.rfind(" MIG ");
  return at == std::string::npos ? name : name.substr(at + 5);
}

}  // namespace

NodePipeline::NodePipeline(PipelineSources sources, PipelineOptions options)
    : sources_(sources),
      options_(std::move(options)),
      assembler_(sources_, options_.proc_root, options_.evidence),
      accountant_(options_.accountant),
      guard_(options_.guard, options_.pricing),
      cost_{options_.pricing, options_.cost_policy,
            options_.pricing ? options_.pricing->InstanceTypeOf(options_.node) : std::string(),
            std::string()} {
  auto empty = std::make_shared<NodeState>();
  empty->node = options_.node;
  if (options_.pricing) {
    empty->cost_policy = options_.cost_policy.Name();
    empty->currency = options_.pricing->currency();
  }
  latest_ = std::move(empty);
}

std::shared_ptr<const NodeState> NodePipeline::Latest() const {
  std::lock_guard lock(mu_);
  return latest_;
}

std::vector<UnitInfo> NodePipeline::Units(const gpu::GpuSnapshot& snap,
                                          const domain::NodeSnapshot& snapshot) const {
  std::map<std::string, const k8s::UnitAllocation*> alloc;
  for (const auto& u : assembler_.allocation().units) alloc[u.unit_uuid] = &u;
  std::vector<UnitInfo> out;
  auto add = [&](UnitInfo u) {
    if (const auto it = alloc.find(u.uuid); it != alloc.end()) {
      u.replicas = it->second->replicas;
      u.evidence = it->second->evidence;
      u.holders = it->second->holders;
    } else {
      u.evidence =
          u.mode == SharingMode::kMig ? "MIG instance (NVML); no allocation" : "no allocation";
    }
    out.push_back(std::move(u));
  };
  for (const auto& d : snap.devices) {
    if (d.mig_enabled) {
      for (const auto& m : d.mig_instances) {
        UnitInfo u;
        u.uuid = m.uuid, u.gpu_uuid = d.uuid, u.gpu_index = d.index, u.model = d.name;
        u.kind = domain::UnitKind::kMigInstance;
        u.mig_profile = domain::MigProfileLabel(u.kind, MigProfileOfName(m.name));
        u.mig_gpu_instance = m.gpu_instance_id, u.mode = SharingMode::kMig;
        if (m.memory) u.memory_total_bytes = m.memory->total_bytes;
        if (d.memory) u.gpu_memory_total_bytes = d.memory->total_bytes;
        if (m.slices && d.mig_total_slices && *d.mig_total_slices > 0)
          u.gpu_fraction = static_cast<double>(*m.slices) / *d.mig_total_slices;
        else if (m.memory && d.memory &&
                 d.memory->total_bytes > 0)  // slices unknown: by memory, never a whole GPU
          u.gpu_fraction = std::min(1.0, static_cast<double>(m.memory->total_bytes) /
                                             static_cast<double>(d.memory->total_bytes));
        add(std::move(u));
      }
      // Slices in no instance are a unit of their own under the GPU's UUID (their idle power and
      // memory are accounted there, attribution/observe.h).
      uint32_t used = 0;
      bool known = d.mig_total_slices.has_value();
      for (const auto& m : d.mig_instances) {
        known = known && m.slices.has_value();
        used += m.slices.value_or(0);
      }
      if (known && used < *d.mig_total_slices) {
        UnitInfo u;
        u.uuid = d.uuid, u.gpu_uuid = d.uuid, u.gpu_index = d.index, u.model = d.name;
        u.kind = domain::UnitKind::kUnpartitioned, u.mode = SharingMode::kMig;
        u.mig_profile = domain::MigProfileLabel(u.kind, "");
        if (d.memory) u.gpu_memory_total_bytes = d.memory->total_bytes;
        u.gpu_fraction = static_cast<double>(*d.mig_total_slices - used) / *d.mig_total_slices;
        u.evidence = std::to_string(*d.mig_total_slices - used) + " of " +
                     std::to_string(*d.mig_total_slices) + " slices in no MIG instance (NVML)";
        out.push_back(std::move(u));
      }
      continue;
    }
    UnitInfo u;
    u.uuid = d.uuid, u.gpu_uuid = d.uuid, u.gpu_index = d.index, u.model = d.name;
    u.mode = snapshot.ModeOf(d.uuid);
    if (d.memory) u.memory_total_bytes = u.gpu_memory_total_bytes = d.memory->total_bytes;
    add(std::move(u));
  }
  return out;
}

void NodePipeline::Accumulate(const std::vector<attribution::UnitLedger>& ledgers, double step,
                              NodeState& next) const {
  // A held unit (DCGM activity not known yet) is still current: its last figures stand for now.
  for (const auto& uuid : accountant_.HeldUnits())
    if (auto it = next.unit_totals.find(uuid);
        it != next.unit_totals.end() && it->second.last_interval + 1 == next.intervals) {
      it->second.last_interval = next.intervals;
      for (auto t = next.totals.lower_bound(
               {uuid, domain::Owner{domain::OwnerKind::kContainer, {}, {}, {}}});
           t != next.totals.end() && t->first.first == uuid; ++t)
        if (t->second.last_interval + 1 == next.intervals) t->second.last_interval = next.intervals;
    }
  for (const auto& l : ledgers) {
    auto& ut = next.unit_totals[l.uuid];
    ut.last_interval = next.intervals;
    ut.seconds += l.seconds;
    ut.memory_capacity_byte_seconds += l.memory_capacity_byte_seconds;
    ut.samples_uncovered_seconds += l.samples_uncovered_seconds;
    ut.memory_signal_seconds[l.memory_signal] += l.seconds;
    ut.memory_signal = l.memory_signal;
    if (l.energy_joules)
      ut.energy_joules += *l.energy_joules;
    else
      ut.energy_unknown_seconds += l.seconds;
    for (const auto& r : l.rows) {
      auto& t = next.totals[{l.uuid, r.owner}];
      t.memory_byte_seconds += r.memory_byte_seconds;
      t.compute_seconds += r.compute_seconds;
      t.energy_joules += r.energy_joules;
      t.requested_share_seconds += r.requested_share_seconds;
      t.compute_unknown_seconds += r.compute_unknown_seconds;
      t.compute_bound_seconds += r.compute_bound_seconds;
      t.energy_bound_joules += r.energy_bound_joules;
      t.memory_busy_seconds += r.memory_busy_seconds;
      t.memory_busy_unknown_seconds += r.memory_busy_unknown_seconds;
      t.memory_busy_bound_seconds += r.memory_busy_bound_seconds;
      t.last_memory_bytes = l.seconds > 0 ? r.memory_byte_seconds / l.seconds : 0;
      t.last_compute_ratio = l.seconds > 0 ? r.compute_seconds / l.seconds : 0;
      t.last_compute_unknown = r.compute_unknown_seconds > 0;
      t.last_compute_bound_ratio = l.seconds > 0 ? r.compute_bound_seconds / l.seconds : 0;
      t.last_memory_busy_ratio = l.seconds > 0 ? r.memory_busy_seconds / l.seconds : 0;
      t.last_memory_busy_unknown = r.memory_busy_unknown_seconds > 0;
      t.last_memory_busy_bound_ratio = l.seconds > 0 ? r.memory_busy_bound_seconds / l.seconds : 0;
      t.last_interval = next.intervals;
      t.memory_rule = ToString(r.memory_rule);
      t.compute_rule = ToString(r.compute_rule);
      t.energy_rule = ToString(r.energy_rule);
    }
  }
  if (options_.pricing) AddIntervalCost(ledgers, cost_, next);
  // Drop containers that have had no row for forget_after_s (by the last interval's length), and
  // units gone as long (a MIG instance destroyed, a DRA device gone) with all their rows.
  if (step <= 0) return;
  const auto horizon = static_cast<uint64_t>(options_.forget_after_s / step);
  std::set<std::string> gone;
  for (auto it = next.unit_totals.begin(); it != next.unit_totals.end();) {
    if (next.intervals - it->second.last_interval > horizon) {
      gone.insert(it->first);
      it = next.unit_totals.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = next.totals.begin(); it != next.totals.end();)
    it = gone.count(it->first.first) || (it->first.second.kind == OwnerKind::kContainer &&
                                         next.intervals - it->second.last_interval > horizon)
             ? next.totals.erase(it)
             : std::next(it);
}

// The first good pass primes the accountant; each later one with time elapsed is an interval,
// accounted into next's last interval and running totals.
void NodePipeline::AccountInterval(const gpu::SampleResult& pass,
                                   std::shared_ptr<const domain::NodeSnapshot> snapshot,
                                   NodeState& next) {
  next.last_interval.clear();
  if (!primed_) {
    if (pass.ok) {
      accountant_.Prime(std::move(snapshot));
      primed_ = true;
      last_taken_ = pass.taken;
    }
    return;
  }
  const double seconds =
      std::chrono::duration<double>(pass.taken - *last_taken_).count() * options_.time_scale;
  last_taken_ = pass.taken;
  if (seconds > 0) {
    // A failed pass is an interval in which every GPU answered nothing: it is accounted as such.
    next.last_interval = accountant_.Step(std::move(snapshot), seconds);
    AddReleased(accountant_.Release(assembler_.DcgmActivity()), next.last_interval);
    ++next.intervals;
    Accumulate(next.last_interval, seconds, next);
  }
}

// Held intervals released this pass go before this pass's own ledger of the same unit (a GPU
// that stopped being held), merged into it where both or neither know their energy and their
// memory busy time came from one signal: one ledger per unit, as the readers of last_interval
// expect, but for that rare split.
void NodePipeline::AddReleased(std::vector<attribution::UnitLedger> released,
                               std::vector<attribution::UnitLedger>& ledgers) {
  for (auto& r : released) {
    const auto same = std::find_if(ledgers.begin(), ledgers.end(), [&](const auto& l) {
      return l.uuid == r.uuid && l.energy_joules.has_value() == r.energy_joules.has_value() &&
             l.memory_signal == r.memory_signal;
    });
    if (same == ledgers.end()) {
      ledgers.push_back(std::move(r));
    } else {
      attribution::MergeInto(r, *same);
      *same = std::move(r);
    }
  }
}

void NodePipeline::Finish() {
  const auto prev = Latest();
  auto next = std::make_shared<NodeState>(*prev);
  next->last_interval = accountant_.Release(assembler_.DcgmActivity(), /*all=*/true);
  if (next->last_interval.empty()) return;
  ++next->intervals;
  Accumulate(next->last_interval, 0, *next);
  // Not a pass: what was current stays so, for the last scrapes of the stop's grace.
  for (auto& [uuid, t] : next->unit_totals)
    if (t.last_interval + 1 == next->intervals) t.last_interval = next->intervals;
  for (auto& [key, t] : next->totals)
    if (t.last_interval + 1 == next->intervals) t.last_interval = next->intervals;
  std::lock_guard lock(mu_);
  latest_ = std::move(next);
}

void NodePipeline::RefreshStoreHealth() {
  if (!options_.store_health) return;
  auto next = std::make_shared<NodeState>(*Latest());
  next->store = options_.store_health();
  if (next->store && !next->store->status.name.empty()) {
    const auto& status = next->store->status;
    const auto it = std::find_if(next->sources.begin(), next->sources.end(),
                                 [&](const auto& s) { return s.name == status.name; });
    if (it != next->sources.end())
      *it = status;
    else
      next->sources.push_back(status);  // stopped before its first pass
  }
  std::lock_guard lock(mu_);
  latest_ = std::move(next);
}

// The labels of every pod with container totals: from the pod source, else as last known.
std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>>
NodePipeline::PodLabels(const NodeState& prev, const NodeState& next) const {
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>> labels;
  for (const auto& [key, t] : next.totals) {
    const auto& o = key.second;
    if (o.kind != OwnerKind::kContainer) continue;
    const std::pair<std::string, std::string> name{o.ns, o.pod};
    if (const auto* pod = assembler_.pods() ? assembler_.pods()->ByName(o.ns, o.pod) : nullptr)
      labels[name] = pod->labels;
    else if (const auto it = prev.pod_labels.find(name); it != prev.pod_labels.end())
      labels[name] = it->second;
  }
  return labels;
}

void NodePipeline::UpdateNodeFacts(NodeState& next) {
  if (!sources_.node) return;
  next.node_facts = assembler_.node_facts();
  // A pricing file's node map wins over the Node's label.
  if (next.node_facts && options_.pricing &&
      options_.pricing->InstanceTypeOf(options_.node).empty()) {
    cost_.instance_type = next.node_facts->instance_type;
    cost_.region = next.node_facts->region;
  }
}

void NodePipeline::CountXids(const gpu::GpuSnapshot& snap, NodeState& next) {
  // Said once per change: the gauge shows it all along.
  if (snap.xid_watch_ok == false &&
      (next.xid_watch_ok != false || next.xid_watch_error != snap.xid_watch_error))
    spdlog::warn("XID events are not watched: {}", snap.xid_watch_error);
  next.xid_watch_ok = snap.xid_watch_ok;
  next.xid_watch_error = snap.xid_watch_error;
  for (const auto& d : snap.devices)
    for (const auto& x : d.health.xid_events) {
      auto& t = next.xids[d.uuid][x.xid];
      ++t.count;
      t.last_seen = static_cast<double>(x.seen_us) / 1e6;
    }
}

// Findings only from a good pass (a failed one shows no process, which proves nothing).
void NodePipeline::UpdateFindings(const gpu::SampleResult& pass,
                                  const domain::NodeSnapshot& snapshot, NodeState& next) {
  if (!pass.ok) return;
  GuardViewInputs gi;
  gi.state = &next;
  gi.snapshot = &snapshot;
  gi.pods = assembler_.pods();
  gi.evidence = &assembler_.evidence();
  gi.unplaced = &assembler_.allocation().unplaced;
  gi.now = std::chrono::duration<double>(pass.wall.time_since_epoch()).count();
  guard_.Update(BuildGuardView(gi));
  next.findings = guard_.Open();
  next.findings_opened = guard_.opened();
}

void NodePipeline::OnPass(std::shared_ptr<const gpu::SampleResult> pass) {
  const auto prev = Latest();
  auto next = std::make_shared<NodeState>(*prev);
  ++next->passes;
  next->latest = pass;
  const gpu::GpuSnapshot empty;
  const auto& snap =
      pass->ok ? pass->snapshot : (prev->last_good ? prev->last_good->snapshot : empty);
  if (pass->ok) next->last_good = pass;
  if (pass->ok) CountXids(pass->snapshot, *next);

  const auto snapshot = assembler_.Assemble(*pass, snap);
  UpdateNodeFacts(*next);
  // The units as of this pass: the interval is priced by them (a unit created in it has one).
  next->units = Units(snap, *snapshot);
  next->snapshot = snapshot;
  AccountInterval(*pass, snapshot, *next);
  if (pass->ok) {
    next->owners.clear();
    for (const auto& p : snapshot->processes)
      next->owners.emplace_hint(next->owners.end(), p.pid, p.owner);
  }
  next->pod_labels = PodLabels(*prev, *next);
  next->allocation_problems = assembler_.allocation().problems;
  next->sources = assembler_.SourceStatuses();
  if (options_.rightsizing) next->rightsizing = options_.rightsizing();
  if (options_.store_health) {
    next->store = options_.store_health();
    // The store is a source like the others: /api/v1/sources and gpumeter_source_up show it.
    if (next->store && !next->store->status.name.empty())
      next->sources.push_back(next->store->status);
  }
  UpdateFindings(*pass, *snapshot, *next);

  std::lock_guard lock(mu_);
  latest_ = std::move(next);
}

}  // namespace gpumeter::node
