#include "core/guard/device_checks.h"

#include <fmt/format.h>

#include <set>
#include <utility>

namespace gpumeter::guard::detail {
namespace {

std::string Name(const domain::Owner& o) { return o.ns + "/" + o.pod + "/" + o.container; }

// "GPU-… (NVIDIA H100 80GB HBM3, MIG instance MIG-…)": what a lost GPU may no longer say is left
// out.
std::string GpuName(const UnitView& u) {
  std::vector<std::string> about;
  if (!u.model.empty()) about.push_back(u.model);
  if (u.uuid != u.gpu_uuid) about.push_back("MIG instance " + u.uuid);
  return u.gpu_uuid + (about.empty() ? "" : fmt::format(" ({})", fmt::join(about, ", ")));
}

std::string Held(const std::string& what, const attribution::Holding* h) {
  return h ? fmt::format("{}; {} held {:.0f} % of it", what, Name(h->owner), 100 * h->share)
           : what + "; no container held it";
}

void ForHolders(const UnitView& u, Kind kind, const std::string& what, const DeviceRaiser& raise) {
  if (u.holders.empty()) raise(kind, u.uuid, u.gpu_uuid, nullptr, "", Held(what, nullptr));
  for (const auto& h : u.holders) raise(kind, u.uuid, u.gpu_uuid, &h.owner, "", Held(what, &h));
}

std::string SlowdownReasons(uint64_t bits) {
  std::vector<std::string> names;
  for (const auto& r : gpu::ClockEventReasons())
    if (r.slowdown && (bits & r.bit)) names.push_back(r.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

bool IsApplicationXid(uint64_t xid) {
  return xid == 13 || xid == 31 || xid == 43 || xid == 45 || xid == 68;
}

std::string XidMeaning(uint64_t xid) {
  static const std::map<uint64_t, const char*> kCatalog{
      {13, "graphics engine exception: the application's fault"},
      {31, "GPU memory page fault: the application's fault"},
      {43, "the application hit a fault and was stopped"},
      {45, "a channel was torn down (a kill, a reset or an earlier error)"},
      {48, "uncorrectable ECC error"},
      {62, "internal micro-controller halt"},
      {63, "a memory row remap or page retirement was recorded"},
      {64, "a row remap or page retirement failed"},
      {68, "video decoder exception"},
      {74, "NVLink error"},
      {79, "the GPU fell off the bus"},
      {92, "excessive single-bit ECC interrupts"},
      {94, "a memory error contained to one application"},
      {95, "an uncontained memory error"},
      {109, "context-switch timeout"},
      {119, "GSP firmware timeout"},
      {120, "GSP firmware error"},
      {140, "an uncorrectable error escaped remapping"},
      {154, "the recovery action the GPU needs changed"},
      {999, "unknown to the driver"}};
  const auto it = kCatalog.find(xid);
  return it == kCatalog.end() ? std::to_string(xid) : fmt::format("{} ({})", xid, it->second);
}

void DeviceChecks::Record(const UnitView& u, Kind kind, const std::string& extra,
                          const std::string& what, double until) {
  auto add = [&](const attribution::Holding* h) {
    const auto key = std::make_tuple(kind, u.uuid, h ? Name(h->owner) : std::string(), extra);
    auto& e = events_[key];
    e = Event{kind, u.uuid, u.gpu_uuid, extra, Held(what, h), std::nullopt, until};
    if (h) e.holder = h->owner;
  };
  if (u.holders.empty()) add(nullptr);
  for (const auto& h : u.holders) add(&h);
}

void DeviceChecks::CheckEvents(const PassView& pass, const GuardConfig& config) {
  const double until = pass.now + config.event_open_s;
  std::map<std::string, bool> ecc_checked;  // per GPU: its MIG units share one count
  // GPU instances that some unit of the GPU is: an XID attributed to one of them is about that
  // unit only; one attributed to an instance no unit is (gone, or its ID unread), about them all.
  std::set<std::pair<std::string, uint32_t>> instances;
  for (const auto& u : pass.units)
    if (u.gpu_instance_id) instances.insert({u.gpu_uuid, *u.gpu_instance_id});
  for (const auto& u : pass.units) {
    for (const auto& x : u.xids) {
      if (x.gpu_instance_id && instances.count({u.gpu_uuid, *x.gpu_instance_id}) &&
          u.gpu_instance_id != x.gpu_instance_id)
        continue;
      Record(u, IsApplicationXid(x.xid) ? Kind::kXidApplication : Kind::kXid, std::to_string(x.xid),
             fmt::format("GPU {} reported XID {}", GpuName(u), XidMeaning(x.xid)), until);
    }
    const auto& ecc = u.health.ecc_uncorrected;
    if (!ecc || u.gpu_lost) continue;
    const auto seen = ecc_seen_.find(u.gpu_uuid);
    if (seen != ecc_seen_.end() && *ecc > seen->second)
      Record(u, Kind::kEccUncorrectable, "",
             fmt::format("GPU {} reported {} new uncorrectable ECC error(s) ({} since the driver "
                         "loaded; gpumeter_gpu_ecc_errors_total): data in its memory may be "
                         "corrupt, and the work on it may have failed or may give wrong results; "
                         "drain the GPU and reset it",
                         GpuName(u), *ecc - seen->second, *ecc),
             until);
    ecc_checked[u.gpu_uuid] = true;
  }
  for (const auto& u : pass.units) {
    if (!ecc_checked.count(u.gpu_uuid) || !u.health.ecc_uncorrected) continue;
    const uint64_t count = *u.health.ecc_uncorrected;
    const auto seen = ecc_seen_.find(u.gpu_uuid);
    // Errors before the agent's first reading stay one finding about the unit while the count
    // lasts; a lower count is a driver reload, which clears them.
    if (seen == ecc_seen_.end() && count > 0) ecc_before_start_.insert(u.gpu_uuid);
    if (seen != ecc_seen_.end() && count < seen->second) ecc_before_start_.erase(u.gpu_uuid);
    ecc_seen_[u.gpu_uuid] = count;
  }
}

void DeviceChecks::CheckStates(const PassView& pass, const GuardConfig& config,
                               const DeviceRaiser& raise) {
  std::map<std::string, bool> slowed;
  for (const auto& u : pass.units) {
    if (u.gpu_lost) {
      ForHolders(u, Kind::kGpuLost,
                 fmt::format("GPU {} fell off the bus (NVML_ERROR_GPU_IS_LOST): its readings "
                             "stopped, and the work on it has stopped or is failing; the GPU "
                             "needs a reset (or the node a reboot)",
                             GpuName(u)),
                 raise);
      continue;  // a lost GPU reports nothing else
    }
    const auto& h = u.health;
    // Errors before the agent's first read: who was on the GPU then is not known.
    if (h.ecc_uncorrected && *h.ecc_uncorrected > 0 &&
        (!ecc_seen_.count(u.gpu_uuid) || ecc_before_start_.count(u.gpu_uuid)))
      raise(Kind::kEccUncorrectable, u.uuid, u.gpu_uuid, nullptr, "",
            fmt::format("GPU {} had {} uncorrectable ECC error(s) since the driver loaded, "
                        "before the agent's first reading (who was on it then is not known); "
                        "drain the GPU and reset it",
                        GpuName(u), *h.ecc_uncorrected));
    if (h.remapped_rows && h.remapped_rows->failed)
      ForHolders(u, Kind::kRowRemapFailed,
                 fmt::format("GPU {}: a memory row remap failed (no spare row left; "
                             "gpumeter_gpu_row_remap_failed): the GPU should be replaced",
                             GpuName(u)),
                 raise);
    else if (h.remapped_rows && h.remapped_rows->pending)
      ForHolders(
          u, Kind::kRowRemapPending,
          fmt::format("GPU {}: a memory row remap waits for the next GPU reset (rows "
                      "remapped: {} for uncorrectable errors, {} for correctable; "
                      "gpumeter_gpu_row_remap_pending): drain the GPU and reset it",
                      GpuName(u), h.remapped_rows->uncorrectable, h.remapped_rows->correctable),
          raise);
    CheckRetiredPages(u, raise);
    // An unread reasons mask keeps a slowdown's start: one failed call does not restart the hold.
    if (!h.clock_event_reasons) {
      if (slowdown_since_.count(u.gpu_uuid)) slowed[u.gpu_uuid] = true;
      continue;
    }
    const std::string reasons = SlowdownReasons(*h.clock_event_reasons);
    if (reasons.empty()) continue;
    slowed[u.gpu_uuid] = true;
    const double since = slowdown_since_.emplace(u.gpu_uuid, pass.now).first->second;
    if (pass.now - since >= config.slowdown_hold_s)
      ForHolders(u, Kind::kClocksSlowdown,
                 fmt::format("GPU {} runs slower than set: its clocks are held down ({}; "
                             "gpumeter_gpu_clock_event_reason) for {:.0f} s, so the work on it "
                             "takes longer and costs more; check cooling and power",
                             GpuName(u), reasons, pass.now - since),
                 raise);
  }
  std::erase_if(slowdown_since_, [&](const auto& kv) { return !slowed.count(kv.first); });
}

// DCGM's diagnostics fail a GPU at 63 retired pages (its DCGM_LIMIT_MAX_RETIRED_PAGES, matching
// NVIDIA's field diagnostic); the driver's table holds 64.
void DeviceChecks::CheckRetiredPages(const UnitView& u, const DeviceRaiser& raise) {
  const auto& pages = u.health.retired_pages;
  if (!pages) return;
  const uint32_t total = pages->single_bit + pages->double_bit;
  if (total >= kRetiredPagesLimit)
    ForHolders(
        u, Kind::kRetiredPagesLimit,
        fmt::format("GPU {} has retired {} memory pages ({} after double-bit errors, {} "
                    "after repeated single-bit errors; gpumeter_gpu_retired_pages), at or "
                    "past the limit of {} at which NVIDIA's diagnostics fail a GPU: the "
                    "GPU should be replaced",
                    GpuName(u), total, pages->double_bit, pages->single_bit, kRetiredPagesLimit),
        raise);
  if (pages->pending.value_or(false))
    ForHolders(u, Kind::kRetiredPagesPending,
               fmt::format("GPU {}: a memory page retirement waits for the next driver reload "
                           "(pages retired: {} double-bit, {} single-bit; "
                           "gpumeter_gpu_retired_pages_pending): until then the bad page can "
                           "still be used; drain the GPU and reset it or reboot the node",
                           GpuName(u), pages->double_bit, pages->single_bit),
               raise);
}

void DeviceChecks::Run(const PassView& pass, const GuardConfig& config, const DeviceRaiser& raise) {
  CheckStates(pass, config, raise);  // before events: a first reading's count is not a rise
  CheckEvents(pass, config);
  std::erase_if(events_, [&](const auto& kv) { return kv.second.until < pass.now; });
  for (const auto& [key, e] : events_)
    raise(e.kind, e.unit_uuid, e.gpu_uuid, e.holder ? &*e.holder : nullptr, e.extra, e.evidence);
}

}  // namespace gpumeter::guard::detail
