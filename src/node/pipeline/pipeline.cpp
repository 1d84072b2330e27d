#include "node/pipeline/pipeline.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>

namespace gpumeter::node {
namespace {

using domain::Owner;
using domain::OwnerKind;
using domain::SharingMode;

// A process's owner as the attribution core takes it: unknown (unattributed) has none.
std::optional<Owner> ToOwner(const domain::ProcessOwner& o) {
  if (o.kind == OwnerKind::kUnattributed) return std::nullopt;
  return o.AsOwner();
}

// Every PID the sample lists, on whole GPUs and MIG instances.
std::set<uint32_t> Pids(const gpu::GpuSnapshot& snap) {
  std::set<uint32_t> pids;
  for (const auto& d : snap.devices) {
    for (const auto& p : d.processes) pids.insert(p.pid);
    for (const auto& m : d.mig_instances)
      for (const auto& p : m.processes) pids.insert(p.pid);
  }
  return pids;
}

// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE as a fraction; nullopt when absent or not a number in (0, 100].
std::optional<double> MpsFraction(const std::map<std::string, std::string>& env) {
  const auto it = env.find("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
  if (it == env.end()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str() || *end != '\0' || !(v > 0) || v > 100) return std::nullopt;
  return v / 100;
}

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
      proc_(options_.proc_root),
      accountant_(
          attribution::ObserveContext{
              [this](uint32_t pid) -> std::optional<Owner> {
                const auto it = owners_.find(pid);
                return it == owners_.end() ? std::nullopt : ToOwner(it->second);
              },
              [this](const std::string& uuid) {
                const auto it = modes_.find(uuid);
                return it == modes_.end() ? SharingMode::kExclusive : it->second;
              },
              [this](uint32_t pid) -> std::optional<double> {
                const auto it = mps_fraction_.find(pid);
                return it == mps_fraction_.end() ? std::nullopt : std::optional<double>(it->second);
              },
              [this](const std::string& unit) {
                const auto it = holders_.find(unit);
                return it == holders_.end() ? std::vector<attribution::Holding>{} : it->second;
              },
              {},
              [this](uint32_t pid) -> std::optional<attribution::ProcessStart> {
                const auto it = starts_.find(pid);
                return it == starts_.end() ? std::nullopt
                                           : std::optional<attribution::ProcessStart>(it->second);
              },
              {}},
          options_.accountant),
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

void NodePipeline::RefreshAllocations(const gpu::GpuSnapshot& snap,
                                      std::chrono::steady_clock::time_point now) {
  std::shared_ptr<const kubelet::PodResourcesSource::Allocations> allocations;
  if (sources_.kubelet) {
    sources_.kubelet->Poll(now);
    allocations = sources_.kubelet->allocations();
  }
  // A kubelet that stopped answering leaves its last list: containers started since are missing.
  allocations_known_ = allocations != nullptr && sources_.kubelet->status().up;
  // The inputs, by value: a kubelet that answers every pass with the same list changes nothing.
  AllocationInputs in;
  // The kubelet may go on listing a pod that has finished (Succeeded or Failed) with its devices;
  // such a pod holds nothing.
  size_t finished = 0;
  if (allocations)
    for (const auto& a : *allocations) {
      if (const auto* pod = pods_.ByName(a.ns, a.pod); pod && pod->Terminated()) {
        finished += !a.devices.empty() || !a.claim_devices.empty();
        continue;
      }
      in.live.push_back(a);
    }
  for (const auto& d : snap.devices) {
    in.devices[d.uuid] = d.mig_enabled;
    for (const auto& m : d.mig_instances) {
      in.mig_parent[m.uuid] = d.uuid;
      in.legacy_mig["MIG-" + d.uuid + "/" + std::to_string(m.gpu_instance_id) + "/" +
                    std::to_string(m.compute_instance_id)] = m.uuid;
    }
  }
  if (node_facts_) in.node_labels = node_facts_->gpu_labels;
  if (sources_.slices) sources_.slices->Poll(now);
  if (const auto slices = sources_.slices ? sources_.slices->Current() : nullptr)
    in.dra = slices->devices();
  if (built_ && in == inputs_) return;
  if (finished > 0 && finished != finished_logged_)
    spdlog::info(
        "{} container(s) of finished pods are still listed by the kubelet with devices: they hold "
        "nothing",
        finished);
  finished_logged_ = finished;

  auto evidence = options_.evidence;
  evidence.dra_devices = in.dra;
  // GPU Feature Discovery's labels from the Node object; a --node-label flag wins.
  for (const auto& [k, v] : in.node_labels) evidence.node_labels.emplace(k, v);
  for (const auto& [mig, gpu] : in.mig_parent) evidence.mig_parent[mig] = gpu;
  for (const auto& [legacy, mig] : in.legacy_mig) evidence.legacy_mig[legacy] = mig;
  auto result = k8s::BuildAllocations(in.live, evidence);
  evidence_ = evidence;
  // Log problems when they change, not every time the inputs do.
  if (result.problems != allocation_.problems)
    for (const auto& p : result.problems) spdlog::warn("allocation: {}", p);
  allocation_ = std::move(result);
  inputs_ = std::move(in);
  built_ = true;
  holders_.clear();
  modes_.clear();
  for (const auto& u : allocation_.units) {
    modes_[u.unit_uuid] = u.mode;
    for (const auto& h : u.holders) holders_[u.unit_uuid].push_back({h.AsOwner(), h.share});
  }
  // A GPU that nobody holds still has a mode: MIG from NVML, else what the operator configured.
  for (const auto& [uuid, mig] : inputs_.devices) {
    if (mig) modes_.emplace(uuid, SharingMode::kMig);
    if (const auto it = options_.evidence.configured.find(uuid);
        it != options_.evidence.configured.end())
      modes_.emplace(uuid, it->second.mode);
  }
}

bool NodePipeline::UpdatePods() {
  const auto pods = sources_.pods ? sources_.pods->Current() : nullptr;
  if (!pods || pods == pods_seen_) return false;
  pods_ = *pods;  // the resolver reads pods_; its cache of resolved processes stays valid
  pods_seen_ = pods;
  return true;
}

void NodePipeline::ResolveOwners(const gpu::GpuSnapshot& snap) {
  const auto pids = Pids(snap);
  owners_.clear();
  mps_fraction_.clear();
  proc_facts_.clear();
  starts_.clear();
  for (const uint32_t pid : pids) {
    ++proc_attempts_;
    // Identify is cached by (PID, start time): this read is the one Resolve then reuses.
    const auto id = proc_.Identify(pid);
    // A malformed /proc file or an unreadable root is a failure of the source; a process that
    // exited between NVML and /proc is not.
    if (!id && id.error().code != ErrorCode::kNotFound) {
      ++proc_failures_;
      proc_last_error_ = id.error().message;
    }
    if (id && id->gpu_env)
      if (const auto f = MpsFraction(*id->gpu_env)) mps_fraction_[pid] = *f;
    if (id) {
      proc_facts_[pid] = {id->comm, id->gpu_env};
      starts_[pid] = {id->start_ticks, proc_.StartUnixUs(id->start_ticks)};
    }
    owners_[pid] = resolver_.Resolve(pid);
  }
  resolver_.Retain(pids);
}

std::vector<UnitInfo> NodePipeline::Units(const gpu::GpuSnapshot& snap) const {
  std::map<std::string, const k8s::UnitAllocation*> alloc;
  for (const auto& u : allocation_.units) alloc[u.unit_uuid] = &u;
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
        u.mig_profile = MigProfileOfName(m.name), u.mig_gpu_instance = m.gpu_instance_id,
        u.mode = SharingMode::kMig;
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
        u.mig_profile = "unpartitioned", u.mode = SharingMode::kMig;
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
    const auto it = modes_.find(d.uuid);
    u.mode = it == modes_.end() ? SharingMode::kExclusive : it->second;
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
  if (options_.pricing) AddToTotals(CostOfInterval(ledgers, next.units, cost_), next);
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

domain::SourceStatus NodePipeline::ProcStatus() const {
  domain::SourceStatus s;
  s.name = "proc";
  s.detail = options_.proc_root.string();
  std::error_code ec;
  s.up = std::filesystem::is_directory(options_.proc_root, ec);
  s.attempts = proc_attempts_;
  s.failures = proc_failures_;
  s.last_error =
      s.up ? proc_last_error_ : options_.proc_root.string() + ": not a readable directory";
  return s;
}

// A failed pass lists no process; the owner caches are kept for the next good one.
void NodePipeline::UpdateOwners(const gpu::SampleResult& pass) {
  if (pass.ok) {
    ResolveOwners(pass.snapshot);
  } else {
    owners_.clear();
    mps_fraction_.clear();
    starts_.clear();
  }
}

// The first good pass primes the accountant; each later one with time elapsed is an interval,
// accounted into next's last interval and running totals.
void NodePipeline::AccountInterval(const gpu::SampleResult& pass, NodeState& next) {
  next.last_interval.clear();
  // With a DCGM source, a copy of the snapshot carries its activity for this interval.
  std::optional<gpu::GpuSnapshot> with_dcgm;
  if (sources_.dcgm && pass.ok) {
    with_dcgm = pass.snapshot;
    dcgm_aligner_.Apply(*sources_.dcgm->Latest(),
                        static_cast<double>(pass.snapshot.timestamp_us) / 1e6, *with_dcgm);
  }
  const gpu::GpuSnapshot& snapshot = with_dcgm ? *with_dcgm : pass.snapshot;
  if (!primed_) {
    if (pass.ok) {
      accountant_.Prime(snapshot);
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
    next.last_interval = accountant_.Step(pass.ok ? snapshot : gpu::GpuSnapshot{}, seconds);
    AddReleased(accountant_.Release(DcgmActivity()), next.last_interval);
    ++next.intervals;
    Accumulate(next.last_interval, seconds, next);
  }
}

// Held intervals released this pass go before this pass's own ledger of the same unit (a GPU
// that stopped being held), merged into it where both or neither know their energy and their
// memory traffic came from one signal: one ledger per unit, as the readers of last_interval
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

attribution::PastActivityOf NodePipeline::DcgmActivity() const {
  return [this](const std::string& gpu, std::optional<uint32_t> gi, double from_s, double to_s) {
    const auto c = dcgm_aligner_.Mean({gpu, gi}, from_s, to_s);
    const auto traffic = dcgm_aligner_.Mean({gpu, gi, true}, from_s, to_s);
    return attribution::PastActivity{
        c.pending, c.mean, traffic.pending ? std::nullopt : traffic.mean, c.covered_until_s};
  };
}

void NodePipeline::Finish() {
  const auto prev = Latest();
  auto next = std::make_shared<NodeState>(*prev);
  next->last_interval = accountant_.Release(DcgmActivity(), /*all=*/true);
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

// The labels of every pod with container totals: from the pod source, else as last known.
std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>>
NodePipeline::PodLabels(const NodeState& prev, const NodeState& next) const {
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>> labels;
  for (const auto& [key, t] : next.totals) {
    const auto& o = key.second;
    if (o.kind != OwnerKind::kContainer) continue;
    const std::pair<std::string, std::string> name{o.ns, o.pod};
    if (const auto* pod = pods_.ByName(o.ns, o.pod))
      labels[name] = pod->labels;
    else if (const auto it = prev.pod_labels.find(name); it != prev.pod_labels.end())
      labels[name] = it->second;
  }
  return labels;
}

// kubelet, pods, ResourceSlices (when configured) and proc, in that order.
std::vector<domain::SourceStatus> NodePipeline::SourceStatuses() const {
  std::vector<domain::SourceStatus> out;
  out.push_back(sources_.kubelet
                    ? static_cast<const domain::SourceStatus&>(sources_.kubelet->status())
                    : domain::SourceStatus::NotConfigured("kubelet"));
  out.push_back(sources_.pods ? sources_.pods->Status()
                              : domain::SourceStatus::NotConfigured("pods"));
  if (sources_.slices) out.push_back(sources_.slices->Status());
  if (sources_.dcgm) out.push_back(sources_.dcgm->Status());
  if (sources_.node) out.push_back(sources_.node->Status());
  out.push_back(ProcStatus());
  return out;
}

void NodePipeline::UpdateNodeFacts(std::chrono::steady_clock::time_point now, NodeState& next) {
  if (!sources_.node) return;
  sources_.node->Poll(now);
  node_facts_ = sources_.node->Current();
  next.node_facts = node_facts_;
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
void NodePipeline::UpdateFindings(const gpu::SampleResult& pass, NodeState& next) {
  if (!pass.ok) return;
  GuardViewInputs gi;
  gi.state = &next;
  gi.snapshot = &pass.snapshot;
  gi.procs = &proc_facts_;
  gi.pods = pods_seen_ ? &pods_ : nullptr;
  gi.evidence = built_ ? &evidence_ : &options_.evidence;
  gi.allocations_known = allocations_known_;
  gi.unplaced = &allocation_.unplaced;
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

  if (sources_.pods) sources_.pods->Poll(pass->taken);
  UpdatePods();
  UpdateNodeFacts(pass->taken, *next);
  RefreshAllocations(snap, pass->taken);
  UpdateOwners(*pass);
  // The units as of this pass: the interval is priced by them (a unit created in it has one).
  next->units = Units(snap);
  AccountInterval(*pass, *next);
  if (pass->ok) next->owners = owners_;
  next->pod_labels = PodLabels(*prev, *next);
  next->allocation_problems = allocation_.problems;
  next->sources = SourceStatuses();
  if (options_.rightsizing) next->rightsizing = options_.rightsizing();
  if (options_.store_health) {
    next->store = options_.store_health();
    // The store is a source like the others: /api/v1/sources and gpumeter_source_up show it.
    if (next->store && !next->store->status.name.empty())
      next->sources.push_back(next->store->status);
  }
  UpdateFindings(*pass, *next);

  std::lock_guard lock(mu_);
  latest_ = std::move(next);
}

}  // namespace gpumeter::node
