#include "core/guard/guard.h"

#include "core/guard/device_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <string_view>

#include "common/text_cell.h"

namespace gpumeter::guard {
namespace {

using domain::Owner;
using domain::OwnerKind;
using domain::SharingMode;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string Name(const Owner& o) { return o.ns + "/" + o.pod + "/" + o.container; }

std::string Duration(double s) {
  const auto m = static_cast<int64_t>(s / 60);
  return m >= 60 ? fmt::format("{}h {}m", m / 60, m % 60)
                 : fmt::format("{}m {}s", m, static_cast<int64_t>(s) % 60);
}

const attribution::Row* RowOf(const UnitView& u, const Owner& o) {
  if (!u.ledger) return nullptr;
  for (const auto& r : u.ledger->rows)
    if (r.owner == o) return &r;
  return nullptr;
}

// "2.0 GiB, 30.0 % compute over the last interval", or what of it is known.
std::string UsageText(const UnitView& u, const Owner& o) {
  const auto* r = RowOf(u, o);
  if (!r || u.ledger->seconds <= 0) return "usage over the last interval not yet known";
  return fmt::format("{:.1f} GiB, {:.1f} % compute over the last interval",
                     r->memory_byte_seconds / u.ledger->seconds / kGiB,
                     100 * r->compute_seconds / u.ledger->seconds);
}

std::string Holders(const UnitView& u) {
  if (u.holders.empty()) return "allocated to no container";
  std::vector<std::string> names;
  for (const auto& h : u.holders) names.push_back(Name(h.owner));
  return "allocated to " + fmt::format("{}", fmt::join(names, ", "));
}

std::string Pids(const std::vector<const ProcessView*>& procs) {
  std::vector<std::string> out;
  for (const auto* p : procs)
    out.push_back(p->comm.empty() ? fmt::format("{}", p->pid)
                                  : fmt::format("{} ({})", p->pid, p->comm));
  return fmt::format("{} {}", procs.size() == 1 ? "pid" : "pids", fmt::join(out, ", "));
}

// The kernel keeps 15 characters of a command name (TASK_COMM_LEN 16): "nvidia-cuda-mps-server"
// reads "nvidia-cuda-mps".
bool NameMatches(const std::string& comm, const std::string& name) {
  return !comm.empty() && (comm == name || (comm.size() == 15 && name.size() > 15 &&
                                            name.compare(0, 15, comm) == 0));
}

bool IsMpsServer(const std::string& comm) { return NameMatches(comm, "nvidia-cuda-mps-server"); }

std::string Join(const std::set<std::string>& s) {
  return s.empty() ? "none" : fmt::format("{}", fmt::join(s, ", "));
}

std::optional<std::string> Env(const ProcessView& p, const char* key) {
  if (!p.env) return std::nullopt;
  const auto it = p.env->find(key);
  return it == p.env->end() ? std::nullopt : std::optional<std::string>(it->second);
}

std::string Trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

// The GPUs and MIG instances an NVIDIA_VISIBLE_DEVICES list names, as UUIDs. Entries that name
// nothing checkable are left out: none, void, a volume-mounts path, "<gpu>:<mig>" indices.
std::vector<std::string> NamedUnits(const std::string& value,
                                    const std::map<uint32_t, std::string>& by_index) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= value.size()) {
    const auto comma = value.find(',', start);
    const auto item =
        Trim(value.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (item.rfind("MIG-GPU-", 0) == 0) {
      // The legacy MIG-GPU-<uuid>/<gi>/<ci> form: not resolved here, so not judged.
    } else if (item.rfind("GPU-", 0) == 0 || item.rfind("MIG-", 0) == 0) {
      out.push_back(item);
    } else if (!item.empty() &&
               std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
               item.size() < 6) {
      if (const auto it = by_index.find(static_cast<uint32_t>(std::stoul(item)));
          it != by_index.end())
        out.push_back(it->second);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// Hands a finding of `kind` to the guard (which drops it when the kind is off); `extra` tells
// apart findings that share kind, unit and container.
using Raiser = std::function<void(Kind kind, const std::string& extra, Finding f)>;

// A finding seen now, about unit `u` and container `o` where they are given.
Finding NewFinding(const PassView& pass, const UnitView* u, const Owner* o) {
  Finding f;
  f.node = pass.node;
  f.first_seen = f.last_seen = pass.now;
  if (u) f.unit_uuid = u->uuid, f.gpu_uuid = u->gpu_uuid;
  if (o) f.ns = o->ns, f.pod = o->pod, f.container = o->container;
  return f;
}

bool IsExpected(const GuardConfig& config, const std::string& comm) {
  for (const auto& e : config.expected_host_processes)
    if (NameMatches(comm, e)) return true;
  return false;
}

// Who runs where, derived once per pass for the rules to share.
struct Tenancy {
  // What each container holds, from the kubelet.
  std::map<Owner, std::set<std::string>> held;
  // Per unit, in the order of pass.units: its containers' processes. Expected processes (the MPS
  // server, also when the device plugin runs it in a pod) are neither tenants nor intruders.
  std::vector<std::map<Owner, std::vector<const ProcessView*>>> tenants;
  // Container -> its first process (over the units in order) with a readable environment.
  std::map<Owner, const ProcessView*> env_of;

  // The units `o` holds; empty when none.
  const std::set<std::string>& Held(const Owner& o) const {
    static const std::set<std::string> kNone;
    const auto it = held.find(o);
    return it == held.end() ? kNone : it->second;
  }
};

Tenancy TenancyOf(const PassView& pass, const GuardConfig& config) {
  Tenancy t;
  for (const auto& u : pass.units)
    for (const auto& h : u.holders) t.held[h.owner].insert(u.uuid);
  for (const auto& u : pass.units) {
    auto& by_container = t.tenants.emplace_back();
    for (const auto& p : u.processes) {
      if (IsExpected(config, p.comm) || p.owner.kind != OwnerKind::kContainer) continue;
      by_container[p.owner].push_back(&p);
      if (p.env && !t.env_of.count(p.owner)) t.env_of[p.owner] = &p;
    }
  }
  return t;
}

// Whether `owner` ran on `u` without holding it, as far as the kubelet's allocations tell.
bool RanUnallocated(const PassView& pass, const Tenancy& t, const UnitView& u, const Owner& owner) {
  if (!pass.allocations_known || pass.allocation_unknown.count(owner)) return false;
  // Held: the unit itself, or (MIG with migStrategy none) the GPU it is carved from.
  const bool holds = std::any_of(u.holders.begin(), u.holders.end(),
                                 [&](const attribution::Holding& h) { return h.owner == owner; }) ||
                     t.Held(owner).count(u.gpu_uuid);
  return !holds;
}

// host-process: a process outside any pod on a unit, unless expected there.
void CheckHostProcesses(const PassView& pass, const GuardConfig& config, const Raiser& raise) {
  for (const auto& u : pass.units)
    for (const auto& p : u.processes) {
      if (IsExpected(config, p.comm) || p.owner.kind != OwnerKind::kSystem) continue;
      // The name as /metrics shows it (valid UTF-8): two names that read the same there are one
      // finding, not two series with one label set, which a scraper would refuse.
      const std::string comm = ValidUtf8(p.comm);
      auto f = NewFinding(pass, &u, nullptr);
      f.evidence = fmt::format(
          "pid {}{} runs outside any pod on {} ({}){}; {}", p.pid,
          comm.empty() ? "" : " (" + comm + ")", u.uuid, u.model,
          p.memory_bytes
              ? fmt::format(" holding {:.1f} GiB", static_cast<double>(*p.memory_bytes) / kGiB)
              : "",
          Holders(u));
      f.process = comm.empty() ? std::to_string(p.pid) : comm;
      const auto extra = f.process;
      raise(Kind::kHostProcess, extra, std::move(f));
    }
}

// unallocated-device: a container's processes on a unit the kubelet did not allocate to it.
void CheckUnallocatedDevices(const PassView& pass, const Tenancy& t, const Raiser& raise) {
  for (size_t i = 0; i < pass.units.size(); ++i) {
    const auto& u = pass.units[i];
    for (const auto& [owner, procs] : t.tenants[i]) {
      if (!RanUnallocated(pass, t, u, owner)) continue;
      auto f = NewFinding(pass, &u, &owner);
      std::string env;
      for (const auto* p : procs)
        if (const auto v = Env(*p, "NVIDIA_VISIBLE_DEVICES")) {
          env = "; its NVIDIA_VISIBLE_DEVICES=" + *v;
          break;
        }
      const auto& mine = t.Held(owner);
      f.evidence =
          fmt::format("{} of {} ran on {} ({}): {}; the unit is {}; the container holds {}{}",
                      Pids(procs), Name(owner), u.uuid, u.model, UsageText(u, owner), Holders(u),
                      mine.empty() ? "no GPU" : Join(mine), env);
      raise(Kind::kUnallocatedDevice, "", std::move(f));
    }
  }
}

// The defaults the MPS server's environment sets for every client of a unit.
struct MpsServerLimits {
  bool known = false;  // a server whose environment could be read runs on the unit
  bool memory = false, threads = false;
};

MpsServerLimits ServerLimits(const UnitView& u) {
  MpsServerLimits s;
  for (const auto& p : u.processes)
    if (IsMpsServer(p.comm) && p.env) {
      s.known = true;
      s.memory = s.memory || Env(p, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT").has_value();
      s.threads = s.threads || Env(p, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE").has_value();
    }
  return s;
}

// mps-no-limits: an MPS client with no memory or active-thread limit, in its environment or the
// server's; at most one finding per container and unit.
void CheckMpsLimits(const PassView& pass, const Tenancy& t, const Raiser& raise) {
  if (pass.mps_limits_by_device_plugin) return;
  for (size_t i = 0; i < pass.units.size(); ++i) {
    const auto& u = pass.units[i];
    if (u.mode != SharingMode::kMps) continue;
    // Without a server whose environment could be read, the defaults are unknown (they may also
    // come from control commands, which nothing shows): no finding.
    const auto server = ServerLimits(u);
    if (!server.known) continue;
    for (const auto& [owner, procs] : t.tenants[i])
      for (const auto* p : procs) {
        if (!p->env) continue;  // unreadable: unknown, not unlimited
        std::vector<std::string> missing;
        if (!server.memory && !Env(*p, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"))
          missing.push_back("memory (CUDA_MPS_PINNED_DEVICE_MEM_LIMIT)");
        if (!server.threads && !Env(*p, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"))
          missing.push_back("active threads (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE)");
        if (missing.empty()) continue;
        auto f = NewFinding(pass, &u, &owner);
        f.evidence = fmt::format(
            "MPS client pid {} of {} on {} has no limit on {}, in its environment or the MPS "
            "server's: it can "
            "take what its co-tenants were promised",
            p->pid, Name(owner), u.uuid, fmt::join(missing, " or "));
        raise(Kind::kMpsNoLimits, "", std::move(f));
        break;
      }
  }
}

// oom-risk: a time-sliced or MPS unit whose tenants (two or more) hold at least `oom_ratio` of
// its memory over the last interval, when all of its memory use is known.
void CheckOomRisk(const PassView& pass, const Tenancy& t, double oom_ratio, const Raiser& raise) {
  for (size_t i = 0; i < pass.units.size(); ++i) {
    const auto& u = pass.units[i];
    if ((u.mode != SharingMode::kTimeSlicing && u.mode != SharingMode::kMps) || !u.ledger ||
        u.ledger->seconds <= 0 || u.ledger->memory_capacity_byte_seconds <= 0)
      continue;
    const double s = u.ledger->seconds, capacity = u.ledger->memory_capacity_byte_seconds / s;
    double free = 0;
    std::vector<std::string> tenants;
    for (const auto& r : u.ledger->rows) {
      if (r.owner.kind == OwnerKind::kIdle) free += r.memory_byte_seconds / s;
      // A container that runs only expected processes here (the MPS server's pod) is no tenant.
      if (r.owner.kind == OwnerKind::kContainer && r.memory_byte_seconds > 0 &&
          t.tenants[i].count(r.owner))
        tenants.push_back(
            fmt::format("{} {:.1f} GiB", Name(r.owner), r.memory_byte_seconds / s / kGiB));
    }
    // Known only when nothing on the unit is unattributed for want of a device reading.
    bool known = true;
    for (const auto& r : u.ledger->rows)
      if (r.owner.kind == OwnerKind::kUnattributed && r.memory_byte_seconds > 0 &&
          !domain::IsMemoryRemainder(r.memory_rule))
        known = false;
    const double used = capacity - free;
    if (!known || tenants.size() < 2 || used < oom_ratio * capacity) continue;
    auto f = NewFinding(pass, &u, nullptr);
    f.evidence = fmt::format(
        "{} GPU {} ({}): {:.1f} of {:.1f} GiB in use ({:.0f} %, threshold {:.0f} %): {}; "
        "nothing "
        "divides memory between them, so the next allocation of any of them can fail with "
        "out-of-memory",
        ToString(u.mode), u.uuid, u.model, used / kGiB, capacity / kGiB, 100 * used / capacity,
        100 * oom_ratio, fmt::join(tenants, ", "));
    raise(Kind::kOomRisk, "", std::move(f));
  }
}

// Container -> the units it ran on unallocated while it holds no GPU at all.
std::map<Owner, std::set<std::string>> UnrequestedUse(const PassView& pass, const Tenancy& t) {
  std::map<Owner, std::set<std::string>> out;
  for (size_t i = 0; i < pass.units.size(); ++i)
    for (const auto& [owner, procs] : t.tenants[i])
      if (RanUnallocated(pass, t, pass.units[i], owner) && t.Held(owner).empty())
        out[owner].insert(pass.units[i].uuid);
  return out;
}

// no-gpu-request: a container that used GPUs it holds none of, although its pod asks for no GPU.
void CheckNoGpuRequest(const PassView& pass, const Tenancy& t, const Raiser& raise) {
  if (!pass.allocations_known || !pass.pods_known) return;
  for (const auto& [owner, units] : UnrequestedUse(pass, t)) {
    if (pass.allocation_unknown.count(owner)) continue;
    const auto it = pass.requests_gpu.find(owner);
    if (it == pass.requests_gpu.end() || it->second)
      continue;  // pod unknown, or it asked for a GPU some other way
    auto f = NewFinding(pass, nullptr, &owner);
    f.evidence = fmt::format(
        "{} used {} although its pod requests no GPU resource and the kubelet allocated it none: "
        "the scheduler "
        "does not know this use and may place other work on the same GPUs",
        Name(owner), Join(units));
    raise(Kind::kNoGpuRequest, "", std::move(f));
  }
}

// visible-devices-all: a container whose NVIDIA_VISIBLE_DEVICES is "all".
void CheckVisibleDevicesAll(const PassView& pass, const Tenancy& t, const Raiser& raise) {
  for (const auto& [owner, p] : t.env_of) {
    const auto value = Env(*p, "NVIDIA_VISIBLE_DEVICES");
    if (!value || Trim(*value) != "all") continue;
    const auto& mine = t.Held(owner);
    auto f = NewFinding(pass, nullptr, &owner);
    f.evidence = fmt::format(
        "pid {} of {}: NVIDIA_VISIBLE_DEVICES=all, so the NVIDIA runtime may give it every GPU "
        "on the node; it "
        "holds {}",
        p->pid, Name(owner), mine.empty() ? "no GPU" : Join(mine));
    raise(Kind::kVisibleDevicesAll, "", std::move(f));
  }
}

// visible-devices-outside: a container whose NVIDIA_VISIBLE_DEVICES (other than "all") names
// units outside its allocation.
void CheckVisibleDevicesOutside(const PassView& pass, const Tenancy& t, const Raiser& raise) {
  if (!pass.allocations_known) return;
  for (const auto& [owner, p] : t.env_of) {
    const auto value = Env(*p, "NVIDIA_VISIBLE_DEVICES");
    if (!value || Trim(*value) == "all" || pass.allocation_unknown.count(owner)) continue;
    const auto& mine = t.Held(owner);
    std::set<std::string> outside;
    // A whole GPU held covers its MIG instances; a MIG instance held, its parent's name is
    // outside (the runtime would give the whole GPU).
    std::set<std::string> covered = mine;
    for (const auto& u : pass.units)
      if (mine.count(u.gpu_uuid)) covered.insert(u.uuid);
    for (const auto& uuid : NamedUnits(*value, pass.gpu_uuid_by_index))
      if (!covered.count(uuid)) outside.insert(uuid);
    if (outside.empty()) continue;
    auto f = NewFinding(pass, nullptr, &owner);
    f.evidence = fmt::format(
        "pid {} of {}: NVIDIA_VISIBLE_DEVICES={} names {} outside its allocation ({})", p->pid,
        Name(owner), *value, Join(outside), mine.empty() ? "no GPU" : Join(mine));
    raise(Kind::kVisibleDevicesOutside, "", std::move(f));
  }
}

}  // namespace

Guard::~Guard() = default;
Guard::Guard(Guard&&) noexcept = default;
Guard& Guard::operator=(Guard&&) noexcept = default;

Guard::Guard(GuardConfig config, const cost::Pricing* pricing)
    : config_(std::move(config)),
      pricing_(pricing),
      devices_(std::make_unique<detail::DeviceChecks>()) {
  for (const auto& [kind, severity] : config_.severity)
    opened_[{kind, severity}] = 0;  // every counter exists from the start
}

void Guard::Raise(std::map<Key, Finding>& seen, Kind kind, const std::string& extra,
                  Finding f) const {
  const auto sev = config_.severity.find(kind);
  if (sev == config_.severity.end()) return;  // off
  f.kind = kind;
  f.severity = sev->second;
  seen[Key{kind, f.unit_uuid, f.ns, f.pod, f.container, extra}] = std::move(f);
}

void Guard::Update(const PassView& pass) {
  std::map<Key, Finding> seen;
  const Raiser raise = [&](Kind kind, const std::string& extra, Finding f) {
    Raise(seen, kind, extra, std::move(f));
  };
  // One function per rule, in the order they always ran (each kind has keys of its own, so the
  // order matters only within a rule), then the idle-allocation rule, which keeps state.
  const auto tenancy = TenancyOf(pass, config_);
  CheckHostProcesses(pass, config_, raise);
  CheckUnallocatedDevices(pass, tenancy, raise);
  CheckMpsLimits(pass, tenancy, raise);
  CheckOomRisk(pass, tenancy, config_.oom_ratio, raise);
  CheckNoGpuRequest(pass, tenancy, raise);
  CheckVisibleDevicesAll(pass, tenancy, raise);
  CheckVisibleDevicesOutside(pass, tenancy, raise);
  devices_->Run(pass, config_,
                [&](Kind kind, const std::string& unit, const std::string& gpu, const Owner* holder,
                    const std::string& extra, std::string evidence) {
                  auto f = NewFinding(pass, nullptr, holder);
                  f.unit_uuid = unit, f.gpu_uuid = gpu;
                  f.evidence = std::move(evidence);
                  raise(kind, extra, std::move(f));
                });
  Idle(pass, seen);

  // Open/close bookkeeping: a finding seen again keeps its first_seen (unless its severity
  // changed), a new one is counted.
  for (auto& [key, f] : seen) {
    if (const auto it = open_.find(key); it != open_.end() && it->second.severity == f.severity)
      f.first_seen = it->second.first_seen;
    else
      ++opened_[{f.kind, f.severity}];
    missed_.erase(key);
  }
  // Open findings not seen this pass stay open (as last seen) for a few passes.
  for (auto& [key, f] : open_) {
    if (seen.count(key)) continue;
    if (++missed_[key] < kGracePasses)
      seen.emplace(key, std::move(f));
    else
      missed_.erase(key);
  }
  open_ = std::move(seen);
}

void Guard::Idle(const PassView& pass, std::map<Key, Finding>& seen) {
  std::map<std::pair<std::string, Owner>, double> next;
  for (const auto& u : pass.units) {
    if (u.holders.empty()) continue;
    const double s = u.ledger ? u.ledger->seconds : 0;
    // Compute nobody accounts for could belong to a holder: the verdict is known only when it
    // could not lift any holder over the threshold.
    double unplaced = 0;
    if (u.ledger)
      for (const auto& r : u.ledger->rows)
        if (r.owner.kind == OwnerKind::kUnattributed) unplaced += r.compute_seconds;
    for (const auto& h : u.holders) {
      const std::pair<std::string, Owner> key{u.uuid, h.owner};
      const auto before = idle_s_.find(key);
      double idle = before == idle_s_.end() ? 0 : before->second;
      const double threshold = config_.idle_below * h.share * s;
      const auto* r = RowOf(u, h.owner);
      // A split of busy time by memory or MPS threads (no per-process samples) is an estimate:
      // it cannot show a tenant idle.
      const bool estimated =
          r && r->compute_seconds > 0 && domain::IsComputeEstimate(r->compute_rule);
      if (s > 0 && unplaced <= threshold && !estimated) {
        const double used = r ? r->compute_seconds : 0;
        idle = used < threshold ? idle + s : 0;
      }
      // else: activity unknown this interval; the run of idle time neither grows nor ends
      if (idle > 0) next[key] = idle;
      if (idle < config_.idle_window_s) continue;
      auto f = Finding{};
      f.node = pass.node;
      f.first_seen = f.last_seen = pass.now;
      f.unit_uuid = u.uuid, f.gpu_uuid = u.gpu_uuid;
      f.ns = h.owner.ns, f.pod = h.owner.pod, f.container = h.owner.container;
      const double gpu_hours = idle / 3600 * h.share * u.gpu_fraction;
      f.waste_gpu_hours = gpu_hours;
      std::string cost = "no price known for " + u.model;
      if (const auto q = pricing_ ? pricing_->Quote(u.model) : std::nullopt)
        f.waste_cost = gpu_hours * q->per_gpu_hour, f.currency = pricing_->currency(),
        f.price_source = q->source,
        cost = fmt::format("{:.2f} {} at {:.2f} {}/GPU-hour ({})", *f.waste_cost, f.currency,
                           q->per_gpu_hour, f.currency, q->source);
      f.evidence = fmt::format(
          "{} holds {:.2f} of {} ({}{}) and used under {:.1f} % of that share for {} of known "
          "activity in a row{}; "
          "waste {:.3f} GPU-hours = {}",
          Name(h.owner), h.share * u.gpu_fraction, u.uuid, u.model,
          u.mig_profile.empty() ? "" : " " + u.mig_profile, 100 * config_.idle_below,
          Duration(idle),
          r && s > 0 ? fmt::format(" while holding {:.1f} GiB", r->memory_byte_seconds / s / kGiB)
                     : "",
          gpu_hours, cost);
      Raise(seen, Kind::kIdleAllocation, "", std::move(f));
    }
  }
  idle_s_ = std::move(next);
}

std::vector<Finding> Guard::Open() const {
  std::vector<Finding> out;
  for (const auto& [key, f] : open_) out.push_back(f);
  std::stable_sort(out.begin(), out.end(),
                   [](const Finding& a, const Finding& b) { return a.severity > b.severity; });
  return out;
}

}  // namespace gpumeter::guard
